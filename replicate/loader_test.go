package replicate_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
)

// clearLoaded despawns the entities of the last load, as a client does
// before applying the next pushed checkpoint.
func clearLoaded(t testing.TB, w *ecs.World, le *replicate.LoadedEntities) {
	for k := range le.Len() {
		_, e := le.At(k)
		if err := w.Despawn(e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoaderSteadyState: a Loader reloading states of 1,000 players (a
// position and an rng stream each, a resource naming the first player)
// into the same world, cleared in between, loads each exactly (values,
// streams, the reference remapped to the entity loaded for it) and, once
// the world has grown, allocates nothing: through Load and through
// LoadFrom of a bytes.Reader.
func TestLoaderSteadyState(t *testing.T) {
	rp := newResProto(t)
	var states [][]byte
	var saved [][]ecs.Entity
	for seed := range uint64(3) {
		w, ents := resWorld(1000, seed)
		var buf bytes.Buffer
		if err := replicate.SaveState(&buf, w, rp.p); err != nil {
			t.Fatal(err)
		}
		states, saved = append(states, buf.Bytes()), append(saved, ents)
	}
	cw := ecs.New()
	var l replicate.Loader
	var le *replicate.LoadedEntities
	for round := range 6 {
		if le != nil {
			clearLoaded(t, cw, le)
		}
		s := round % 3
		var err error
		if le, err = l.Load(states[s], cw, rp.p); err != nil {
			t.Fatal(err)
		}
		if le.Len() != 1000 || cw.Len() != 1000 {
			t.Fatalf("round %d: %d loaded, world has %d", round, le.Len(), cw.Len())
		}
		for i, e := range saved[s] {
			got, ok := le.Lookup(e)
			if !ok || !cw.Alive(got) || le.MapEntity(e) != got {
				t.Fatalf("round %d: %v loaded as %v (%v)", round, e, got, ok)
			}
			if se, ge := le.At(i); se != e || ge != got {
				t.Fatalf("round %d: At(%d) = %v %v", round, i, se, ge)
			}
			p, _ := ecs.StoreOf[Position](cw).Get(got)
			r, _ := ecs.StoreOf[rng.Rand](cw).Get(got)
			if p != (Position{X: float64(i), Y: float64(s)}) || r != rng.Stream(uint64(s), uint64(i)) {
				t.Fatalf("round %d: entity %d has %v %v", round, i, p, r)
			}
		}
		if ld, _ := ecs.GetResource[Leader](cw); ld.E != le.MapEntity(saved[s][0]) {
			t.Fatalf("round %d: leader %v", round, ld.E)
		}
		if sc, _ := ecs.GetResource[Score](cw); sc != (Score{Red: 3, Blue: int32(s)}) {
			t.Fatalf("round %d: score %v", round, sc)
		}
	}
	if _, ok := le.Lookup(ecs.NewEntity(5000, 1)); ok {
		t.Fatal("an entity not in the state is found")
	}
	if raceEnabled {
		return
	}
	k := 0
	if a := testing.AllocsPerRun(20, func() {
		clearLoaded(t, cw, le)
		le, _ = l.Load(states[k%3], cw, rp.p)
		k++
	}); a != 0 || le.Len() != 1000 {
		t.Fatalf("steady-state Load allocates %.0f times", a)
	}
	rd := bytes.NewReader(nil)
	if a := testing.AllocsPerRun(20, func() {
		clearLoaded(t, cw, le)
		rd.Reset(states[k%3])
		le, _ = l.LoadFrom(rd, cw, rp.p)
		k++
	}); a != 0 || le.Len() != 1000 {
		t.Fatalf("steady-state LoadFrom allocates %.0f times", a)
	}
}

// handState is a saved state written by hand: the given entities, no
// components, no resources.
func handState(p *replicate.Protocol, ents ...ecs.Entity) []byte {
	b := append([]byte("RWRS"), 2)
	b = binary.LittleEndian.AppendUint64(b, p.Hash())
	b = binary.AppendUvarint(b, uint64(len(ents)))
	for _, e := range ents {
		b = binary.AppendUvarint(b, uint64(e.Index()))
		b = binary.AppendUvarint(b, uint64(e.Generation()))
		b = append(b, 0)
	}
	return append(b, 0)
}

// TestLoaderSparse: saved entity indices far apart (above 2n+1024) use
// the sorted table: each is found with its generation and no other; an
// index saved twice is refused, dense or sparse, and a refused state
// leaves the world as it was, the Loader reusable.
func TestLoaderSparse(t *testing.T) {
	tp := newProto(t)
	w := ecs.New()
	a, b := ecs.NewEntity(70000, 3), ecs.NewEntity(2, 1)
	for _, e := range []ecs.Entity{a, b} {
		if err := w.SpawnAt(e); err != nil {
			t.Fatal(err)
		}
		_ = ecs.Register[replicate.Replicated](w).Set(e, replicate.Replicated{})
		_ = ecs.Register[Position](w).Set(e, Position{X: float64(e.Index())})
	}
	_ = ecs.Register[Owner](w).Set(b, Owner{E: a})
	var buf bytes.Buffer
	if err := replicate.SaveState(&buf, w, tp.p); err != nil {
		t.Fatal(err)
	}
	cw := ecs.New()
	var l replicate.Loader
	le, err := l.Load(buf.Bytes(), cw, tp.p)
	if err != nil {
		t.Fatal(err)
	}
	la, okA := le.Lookup(a)
	lb, okB := le.Lookup(b)
	if !okA || !okB || cw.Len() != 2 {
		t.Fatalf("loaded %v %v, world has %d", la, lb, cw.Len())
	}
	if o, _ := ecs.StoreOf[Owner](cw).Get(lb); o.E != la {
		t.Fatalf("reference %v, want %v", o.E, la)
	}
	if p, _ := ecs.StoreOf[Position](cw).Get(la); p.X != 70000 {
		t.Fatalf("position %v", p)
	}
	for _, e := range []ecs.Entity{ecs.NewEntity(70000, 4), ecs.NewEntity(69999, 3), ecs.NewEntity(3, 1)} {
		if got, ok := le.Lookup(e); ok || le.MapEntity(e) != 0 {
			t.Fatalf("%v not saved, found as %v", e, got)
		}
	}
	for _, bad := range [][]ecs.Entity{
		{ecs.NewEntity(5, 1), ecs.NewEntity(5, 2)},
		{ecs.NewEntity(90000, 1), ecs.NewEntity(7, 1), ecs.NewEntity(90000, 2)},
	} {
		if _, err := l.Load(handState(tp.p, bad...), cw, tp.p); !errors.Is(err, replicate.ErrMalformed) || cw.Len() != 2 {
			t.Fatalf("%v: %v, world has %d", bad, err, cw.Len())
		}
	}
	if _, err := l.Load(buf.Bytes()[:buf.Len()-1], cw, tp.p); !errors.Is(err, replicate.ErrMalformed) || cw.Len() != 2 {
		t.Fatalf("truncated: %v, world has %d", err, cw.Len())
	}
	if le, err := l.Load(handState(tp.p, ecs.NewEntity(90000, 1), ecs.NewEntity(7, 1)), cw, tp.p); err != nil || le.Len() != 2 || cw.Len() != 4 {
		t.Fatalf("after refusals: %v, world has %d", err, cw.Len())
	}
}

// ExampleLoader reloads pushed states into the same world: the entities
// of the previous load are despawned first, and the table of the last
// load maps saved entities to loaded ones.
func ExampleLoader() {
	p := replicate.NewProtocol()
	_, _ = replicate.Component[Position](p, replicate.WithOwnRule())
	server := ecs.New()
	e := server.Spawn()
	_ = ecs.Register[replicate.Replicated](server).Set(e, replicate.Replicated{})
	pos := ecs.Register[Position](server)
	client := ecs.New()
	var l replicate.Loader
	var loaded *replicate.LoadedEntities
	for x := range 3 {
		_ = pos.Set(e, Position{X: float64(x)})
		var buf bytes.Buffer
		_ = replicate.SaveState(&buf, server, p)
		if loaded != nil {
			for k := range loaded.Len() {
				_, old := loaded.At(k)
				_ = client.Despawn(old)
			}
		}
		var err error
		if loaded, err = l.Load(buf.Bytes(), client, p); err != nil {
			fmt.Println(err)
			return
		}
		ce, _ := loaded.Lookup(e)
		got, _ := ecs.StoreOf[Position](client).Get(ce)
		fmt.Println(client.Len(), got.X)
	}
	// Output:
	// 1 0
	// 1 1
	// 1 2
}

// FuzzLoaderReuse feeds arbitrary bytes to a Loader between loads of a
// real state into the same world: a refused input leaves the world as it
// was (same entities, same resource), an accepted one loads as many
// entities as its table lists, and the next load of the real state is
// exact whatever the Loader's buffers held before. (Accepted input is not
// re-encoded: a saved state has no canonical form, see fuzz_test.go.)
func FuzzLoaderReuse(f *testing.F) {
	p := labelProto(f)
	w, ents := resWorld(3, 5)
	_ = ecs.Register[Label](w).Set(ents[1], Label("pawn"))
	var buf bytes.Buffer
	_ = replicate.SaveState(&buf, w, p)
	good := buf.Bytes()
	f.Add(good)
	f.Add(handState(p, ecs.NewEntity(90000, 1), ecs.NewEntity(7, 1)))
	var l replicate.Loader
	cw := ecs.New()
	f.Fuzz(func(t *testing.T, b []byte) {
		le, err := l.Load(good, cw, p)
		if err != nil {
			t.Fatal(err)
		}
		clearLoaded(t, cw, le)
		if le, err = l.Load(good, cw, p); err != nil || le.Len() != 3 {
			t.Fatalf("real state: %v", err)
		}
		n := cw.Len()
		score, _ := ecs.GetResource[Score](cw)
		le, err = l.Load(b, cw, p)
		if err != nil {
			if s, _ := ecs.GetResource[Score](cw); cw.Len() != n || s != score {
				t.Fatalf("refused state (%v) changed the world: %d entities, was %d", err, cw.Len(), n)
			}
		} else {
			if cw.Len() != n+le.Len() {
				t.Fatalf("%d entities loaded, world went from %d to %d", le.Len(), n, cw.Len())
			}
			clearLoaded(t, cw, le)
		}
		for cw.Len() > 0 { // empty the world for the next input
			for e := range cw.Entities() {
				_ = cw.Despawn(e)
				break
			}
		}
		if le, err = l.Load(good, cw, p); err != nil {
			t.Fatal(err)
		}
		for i, e := range ents {
			got, ok := le.Lookup(e)
			pos, _ := ecs.StoreOf[Position](cw).Get(got)
			lb, _ := ecs.StoreOf[Label](cw).Get(got)
			if want, _ := ecs.StoreOf[Position](w).Get(e); !ok || pos != want || (i == 1) != (string(lb) == "pawn") {
				t.Fatalf("entity %d after %d bytes: %v %v %q", i, len(b), ok, pos, lb)
			}
		}
		clearLoaded(t, cw, le)
	})
}
