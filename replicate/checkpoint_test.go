package replicate_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// resWorld is a world of n players (Position and a per-player rng stream)
// with the resources of newResProto: a score, a leader naming the first
// player, and the world stream.
func resWorld(n int, seed uint64) (*ecs.World, []ecs.Entity) {
	w := ecs.New()
	streams := ecs.Register[rng.Rand](w)
	var ents []ecs.Entity
	for i := range n {
		e := spawnRep(w, Position{X: float64(i), Y: float64(seed)}, 0)
		_ = streams.Set(e, rng.Stream(seed, uint64(i)))
		ents = append(ents, e)
	}
	ecs.RegisterResource[Score](w).Set(Score{Red: 3, Blue: int32(seed)})
	ecs.RegisterResource[Leader](w).Set(Leader{E: ents[0]})
	ecs.RegisterResource[rng.Rand](w).Set(rng.NewSeed(seed))
	return w, ents
}

// TestSaveLoadStateResources: SaveState now carries the replicated
// resources (RNG stream included); LoadState sets them, with entity
// references remapped to the entities it spawned. (Before this change the
// loaded world had no resources.)
func TestSaveLoadStateResources(t *testing.T) {
	rp := newResProto(t)
	w, ents := resWorld(3, 7)
	var buf bytes.Buffer
	if err := replicate.SaveState(&buf, w, rp.p); err != nil {
		t.Fatal(err)
	}
	w2 := ecs.New()
	w2.Spawn()
	m, err := replicate.LoadState(bytes.NewReader(buf.Bytes()), w2, rp.p)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := ecs.GetResource[Score](w2); s != (Score{3, 7}) {
		t.Fatalf("score %v", s)
	}
	// The leader is the loaded copy of ents[0]: by id, and by the values
	// it carries (w2's extra entity makes an unmapped reference land on
	// another entity, which has no Position).
	l, _ := ecs.GetResource[Leader](w2)
	if l.E != m[ents[0]] {
		t.Fatalf("leader %v, want %v", l.E, m[ents[0]])
	}
	if p, ok := ecs.StoreOf[Position](w2).Get(l.E); !ok || p != (Position{X: 0, Y: 7}) {
		t.Fatalf("leader %v has Position %v (%v), want the saved leader's {0 7}", l.E, p, ok)
	}
	want, _ := ecs.GetResource[rng.Rand](w)
	if got, _ := ecs.GetResource[rng.Rand](w2); got != want || got.Uint64() != want.Uint64() {
		t.Fatalf("world stream %v, want %v", got, want)
	}
	if r, _ := ecs.StoreOf[rng.Rand](w2).Get(m[ents[2]]); r != rng.Stream(7, 2) {
		t.Fatalf("player stream %v", r)
	}
	// A resource id out of order is malformed.
	bad := append([]byte(nil), buf.Bytes()...)
	if err := mutateLastResourceID(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.LoadState(bytes.NewReader(bad), ecs.New(), rp.p); !errors.Is(err, replicate.ErrMalformed) {
		t.Fatalf("resource ids out of order: %v", err)
	}
}

// mutateLastResourceID rewrites the id of the last resource in a saved
// state (the world stream, 16 bytes) to 0, below the one before it.
func mutateLastResourceID(b []byte) error {
	// ... id, len 16, 16 bytes at the end.
	i := len(b) - 16 - 2
	if b[i+1] != 16 {
		return fmt.Errorf("unexpected layout: %x", b[i:])
	}
	b[i] = 0
	return nil
}

// TestStateChecksumGolden pins the checksum of a fixed world: it must be
// the same in every process and on every machine (a per-process hash seed
// would change it between runs), and the parts name each type.
func TestStateChecksumGolden(t *testing.T) {
	rp := newResProto(t)
	w, _ := resWorld(4, 1)
	sum, parts := replicate.StateChecksum(w, rp.p, nil)
	var names []string
	for _, p := range parts {
		names = append(names, strings.ReplaceAll(p.Name, "github.com/rewindgo/rewind/", ""))
	}
	if got := strings.Join(names, ","); got != "replicate.entities,replicate_test.Position,rng.Rand,resource replicate_test.Score,resource replicate_test.Leader,resource rng.Rand" {
		t.Fatalf("parts %s", got)
	}
	if sum != 0xe9a4a8fbccf17c52 {
		t.Fatalf("checksum %#x changed", sum)
	}
	// Order of the stores does not matter: the same state built in another
	// order has the same checksum.
	w2 := ecs.New()
	streams := ecs.Register[rng.Rand](w2)
	var ents [4]ecs.Entity
	for i := range 4 {
		ents[i] = w2.Spawn()
	}
	for i := 3; i >= 0; i-- {
		_ = ecs.Register[replicate.Replicated](w2).Set(ents[i], replicate.Replicated{})
		_ = streams.Set(ents[i], rng.Stream(1, uint64(i)))
		_ = ecs.Register[Position](w2).Set(ents[i], Position{X: float64(i), Y: 1})
	}
	ecs.RegisterResource[rng.Rand](w2).Set(rng.NewSeed(1))
	ecs.RegisterResource[Leader](w2).Set(Leader{E: ents[0]})
	ecs.RegisterResource[Score](w2).Set(Score{Red: 3, Blue: 1})
	if s2, _ := replicate.StateChecksum(w2, rp.p, nil); s2 != sum {
		t.Fatalf("same state built in another order: %#x, want %#x", s2, sum)
	}
}

// TestChecksumClientServer: after the clients converged over a lossy
// in-memory network (virtual time), Server.Checksum and every
// Client.Checksum agree, part for part, including a resource naming an
// entity (mapped back to server ids by the client) and the RNG streams,
// and a checkpoint of Server.NewCheckpoints carries that checksum;
// a client value corrupted on purpose changes exactly the part of its
// type, which snapshot.Diff names.
func TestChecksumClientServer(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checksumClientServer(t, seed) })
		})
	}
}

func checksumClientServer(t *testing.T, seed uint64) {
	rp := newResProto(t)
	r := newMemRigProto(t, transport.MessageNetworkConfig{Seed: seed}, replicate.ServerConfig{}, rp.testProto)
	defer r.close()
	world := ecs.RegisterResource[rng.Rand](r.sw)
	world.Set(rng.NewSeed(seed))
	streams := ecs.Register[rng.Rand](r.sw)
	var ents []ecs.Entity
	for i := range 20 {
		e := spawnRep(r.sw, Position{X: float64(i)}, 0)
		_ = streams.Set(e, rng.Stream(seed, uint64(i)))
		ents = append(ents, e)
	}
	ecs.RegisterResource[Leader](r.sw).Set(Leader{E: ents[3]})
	ecs.RegisterResource[Score](r.sw).Set(Score{})
	r.connect(2, transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2})
	for k := range 120 {
		draw := world.Ptr() // marks the stream changed this tick
		for _, e := range ents {
			if draw.IntN(3) == 0 && r.sw.Alive(e) {
				streams.Ptr(e).Uint64()
				ecs.StoreOf[Position](r.sw).Ptr(e).Y += 1
			}
		}
		if k == 60 {
			r.sw.Despawn(ents[0])
			ecs.RegisterResource[Score](r.sw).Set(Score{Red: 1})
		}
		r.step()
	}
	r.setLinks(transport.LinkConfig{Latency: 30 * time.Millisecond})
	for range 60 {
		r.step()
	}
	sum, parts := r.srv.Checksum(nil)
	if len(parts) != 6 { // entities, Position, rng.Rand, Score, Leader, world stream
		t.Fatalf("server parts %v", parts)
	}
	for i, c := range r.clients {
		csum, cparts := c.Checksum(nil)
		if d := snapshot.Diff(parts, cparts); len(d) > 0 || csum != sum {
			t.Fatalf("client %d: checksum %#x, server %#x, differing %v", i, csum, sum, d)
		}
	}
	// A server checkpoint of this tick carries the same checksum.
	cp, err := r.srv.NewCheckpoints(replicate.CheckpointConfig{}).Capture(r.srv.Tick())
	if err != nil {
		t.Fatal(err)
	}
	// Computed later, from the copy: a value changed since does not count.
	ecs.StoreOf[Position](r.sw).Ptr(ents[5]).X += 100
	if cpSum, cpParts := cp.Checksum(); cpSum != sum || len(snapshot.Diff(cpParts, parts)) > 0 {
		t.Fatalf("server checkpoint sum %#x, server %#x", cpSum, sum)
	}
	ecs.StoreOf[Position](r.sw).Ptr(ents[5]).X -= 100
	// Corrupt one client's position of one player.
	c := r.clients[1]
	ce, _ := c.ClientEntity(ents[5])
	ecs.StoreOf[Position](r.cws[1]).Ptr(ce).X += 0.5
	csum, cparts := c.Checksum(nil)
	d := snapshot.Diff(parts, cparts)
	if csum == sum || len(d) != 1 || !strings.HasSuffix(d[0], "replicate_test.Position") {
		t.Fatalf("corrupted position: differing %v", d)
	}
	// And one client's copy of the world stream.
	ecs.RegisterResource[rng.Rand](r.cws[0]).Ptr().Uint64()
	_, cparts = r.clients[0].Checksum(nil)
	if d := snapshot.Diff(parts, cparts); !slices.Equal(d, []string{"resource github.com/rewindgo/rewind/rng.Rand"}) {
		t.Fatalf("corrupted stream: differing %v", d)
	}
}

// FuzzLoadStateResources feeds arbitrary bytes to LoadState under a
// protocol with replicated resources (the resource section of format 2,
// which checkpoints share): no panic, and a refused state sets no resource.
// (No re-encoding check: a saved state has no canonical form, see
// fuzz_test.go.)
func FuzzLoadStateResources(f *testing.F) {
	rp := newResProto(f)
	w, _ := resWorld(2, 1)
	var buf bytes.Buffer
	_ = replicate.SaveState(&buf, w, rp.p)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		w := ecs.New()
		if _, err := replicate.LoadState(bytes.NewReader(b), w, rp.p); errors.Is(err, replicate.ErrMalformed) {
			if _, ok := ecs.GetResource[Score](w); ok {
				t.Fatal("refused state set a resource")
			}
		}
	})
}

// TestCheckpoints: over 10,000 ticks of a changing world (values drawn
// every tick, players spawned and despawned, the population growing about
// tenfold), a checkpoint is captured every Interval ticks; the ring never
// keeps more than Max of them and its memory (Checkpoints.Bytes, the
// kept checkpoints and the spare buffers) never exceeds MaxBytes: the
// count binds while the world is small, the byte bound once it has grown.
// Every kept checkpoint is the state of its tick, however the world
// changed since: its saved form is what SaveState wrote at that tick, and
// its checksum (computed late, from the copy) is what StateChecksum gave.
func TestCheckpoints(t *testing.T) {
	rp := newResProto(t)
	w, ents := resWorld(64, 3)
	pos := ecs.StoreOf[Position](w)
	streams := ecs.StoreOf[rng.Rand](w)
	world := ecs.RegisterResource[rng.Rand](w)
	probe := replicate.NewCheckpoints(w, rp.p, replicate.CheckpointConfig{})
	if c := probe.Config(); c.Interval != replicate.DefaultCheckpointInterval || c.Max != replicate.DefaultMaxCheckpoints || c.MaxBytes != replicate.DefaultCheckpointBytes {
		t.Fatalf("defaults %+v", c)
	}
	cfg := replicate.CheckpointConfig{Interval: 50, Max: 6, MaxBytes: 160 << 10}
	r := replicate.NewCheckpoints(w, rp.p, cfg)
	type kept struct {
		saved []byte
		sum   uint64
	}
	states := map[tick.Tick]kept{}
	var fullAt, boundAt tick.Tick // a capture where the count bound held, one where the byte bound did
	next := uint64(64)
	for tk := tick.Tick(1); tk <= 10000; tk++ {
		draw := world.Ptr()
		p := pos.Ptr(ents[draw.IntN(len(ents))])
		p.X += 1
		if tk%5 == 0 { // a player joins
			e := spawnRep(w, Position{X: float64(next)}, 0)
			_ = streams.Set(e, rng.Stream(3, next))
			ents = append(ents, e)
			next++
		}
		if tk%9 == 0 { // one leaves
			k := draw.IntN(len(ents))
			_ = w.Despawn(ents[k])
			ents = slices.Delete(ents, k, k+1)
		}
		if !r.Due(tk) {
			continue
		}
		cp, err := r.Capture(tk)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Tick != tk || cp.Entities() != len(ents) || r.Len() > cfg.Max || r.Bytes() > cfg.MaxBytes {
			t.Fatalf("tick %d: %d entities, %d checkpoints, %d bytes (bound %d)", tk, cp.Entities(), r.Len(), r.Bytes(), cfg.MaxBytes)
		}
		if r.Len() == cfg.Max {
			fullAt = tk
		} else if boundAt == 0 && fullAt != 0 {
			boundAt = tk
		}
		var buf bytes.Buffer
		_ = replicate.SaveState(&buf, w, rp.p)
		sum, _ := replicate.StateChecksum(w, rp.p, nil)
		states[tk] = kept{saved: buf.Bytes(), sum: sum}
		delete(states, tk-tick.Tick(cfg.Interval*cfg.Max))
	}
	if fullAt == 0 || boundAt == 0 || r.Len() >= cfg.Max || r.Len() < 2 {
		t.Fatalf("count bound last held at %d, byte bound first at %d, %d kept at the end", fullAt, boundAt, r.Len())
	}
	t.Logf("%d entities at the end; count bound last held at tick %d, byte bound from tick %d; %d kept in %d bytes", len(ents), fullAt, boundAt, r.Len(), r.Bytes())
	if latest, _ := r.Latest(); latest.Tick != 10000 {
		t.Fatalf("latest %d", latest.Tick)
	}
	if _, ok := r.At(tick.Tick(10000 - 50*r.Len())); ok {
		t.Fatal("a dropped checkpoint is still found")
	}
	for i := range r.Len() {
		tk := tick.Tick(10000 - 50*i)
		cp, ok := r.At(tk)
		if !ok {
			t.Fatalf("no checkpoint of tick %d", tk)
		}
		if got := cp.AppendState(nil); !bytes.Equal(got, states[tk].saved) {
			t.Fatalf("tick %d: checkpoint state (%d bytes) differs from SaveState at that tick (%d bytes)", tk, len(got), len(states[tk].saved))
		}
		if sum, _ := cp.Checksum(); sum != states[tk].sum {
			t.Fatalf("tick %d: checkpoint sum %#x, world %#x", tk, sum, states[tk].sum)
		}
	}
	// The latest checkpoint (of the last tick: the live world is still
	// its state) loads into a world holding that state.
	latest, _ := r.Latest()
	w2 := ecs.New()
	m, err := replicate.LoadState(bytes.NewReader(latest.AppendState(nil)), w2, rp.p)
	if err != nil || len(m) != len(ents) {
		t.Fatalf("loaded %d entities of %d: %v", len(m), len(ents), err)
	}
	for _, e := range ents {
		p, _ := pos.Get(e)
		s, _ := streams.Get(e)
		p2, _ := ecs.StoreOf[Position](w2).Get(m[e])
		s2, _ := ecs.StoreOf[rng.Rand](w2).Get(m[e])
		if p2 != p || s2 != s {
			t.Fatalf("entity %v loaded as %v %v, want %v %v", e, p2, s2, p, s)
		}
	}
	if got, _ := ecs.GetResource[rng.Rand](w2); got != *world.Ptr() {
		t.Fatalf("world stream %v, want %v", got, *world.Ptr())
	}
	if !raceEnabled {
		// Steady state: the world keeps its size; captures, their
		// encoding and their checksums allocate nothing.
		tk := tick.Tick(10000)
		dst := latest.AppendState(nil)
		if a := testing.AllocsPerRun(20, func() {
			tk += 50
			cp, _ := r.Capture(tk)
			dst = cp.AppendState(dst[:0])
			cp.Checksum()
		}); a != 0 {
			t.Fatalf("steady-state capture, encoding and checksum allocate %.0f times", a)
		}
	}
	// Count bound alone.
	r2 := replicate.NewCheckpoints(w, rp.p, replicate.CheckpointConfig{Max: 3})
	for tk := range tick.Tick(10) {
		_, _ = r2.Capture(tk)
	}
	if first, _ := r2.At(7); r2.Len() != 3 || first == nil {
		t.Fatalf("count bound: %d kept", r2.Len())
	}
	// A state larger than the bound on its own is refused.
	one, _ := probe.Capture(1)
	r3 := replicate.NewCheckpoints(w, rp.p, replicate.CheckpointConfig{MaxBytes: one.Bytes() / 2})
	if _, err := r3.Capture(1); !errors.Is(err, replicate.ErrTooLarge) || r3.Len() != 0 || r3.Bytes() != 0 {
		t.Fatalf("too large: %v, %d kept, %d bytes", err, r3.Len(), r3.Bytes())
	}
}

// BenchmarkCheckpoint measures, for worlds of 10,000 and 100,000 entities
// (Position and a per-entity rng stream each, and three resources):
//   - copy: a plain copy of the bytes a capture copies (entity ids and
//     values of the replicated columns), the floor;
//   - capture: Checkpoints.Capture (the copy into reused buffers);
//   - encode: Checkpoint.AppendState, the saved form a save or a resync
//     sends, written from the copy when asked for;
//   - restore: a Loader loading that form again into the same world,
//     cleared of the previous load's entities (Despawn, counted in the
//     time): the steady state of a client applying pushed checkpoints;
//   - restore-new: LoadState into a new world (a first load: the world,
//     its stores and the tables grow, and the returned map is built).
//
// Metrics: ns per entity; mem-B/entity, the checkpoint's memory, and
// wire-B/entity, its saved form.
func BenchmarkCheckpoint(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		rp := newResProto(b)
		w, _ := resWorld(n, 1)
		r := replicate.NewCheckpoints(w, rp.p, replicate.CheckpointConfig{Max: 2, MaxBytes: 1 << 30})
		cp, err := r.Capture(0)
		if err != nil {
			b.Fatal(err)
		}
		state := cp.AppendState(nil)
		// What a capture copies: 8-byte ids of the Replicated, Position
		// and rng.Rand columns, 16-byte Positions, 16-byte streams.
		copied := n * (3*8 + 16 + 16)
		metrics := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entity")
			b.ReportMetric(float64(cp.Bytes())/float64(n), "mem-B/entity")
			b.ReportMetric(float64(len(state))/float64(n), "wire-B/entity")
		}
		b.Run(fmt.Sprintf("copy/entities=%d", n), func(b *testing.B) {
			src, dst := make([]byte, copied), make([]byte, copied)
			b.ReportAllocs()
			for b.Loop() {
				copy(dst, src)
			}
			metrics(b)
		})
		b.Run(fmt.Sprintf("capture/entities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			tk := tick.Tick(0)
			for b.Loop() {
				tk++
				if cp, err = r.Capture(tk); err != nil {
					b.Fatal(err)
				}
			}
			metrics(b)
		})
		b.Run(fmt.Sprintf("encode/entities=%d", n), func(b *testing.B) {
			dst := make([]byte, 0, len(state))
			b.ReportAllocs()
			for b.Loop() {
				dst = cp.AppendState(dst[:0])
			}
			metrics(b)
		})
		b.Run(fmt.Sprintf("restore/entities=%d", n), func(b *testing.B) {
			cw := ecs.New()
			var l replicate.Loader
			// Warm up: the first load grows the world and its stores,
			// the first clear the world's free list.
			le, err := l.Load(state, cw, rp.p)
			if err != nil {
				b.Fatal(err)
			}
			clearLoaded(b, cw, le)
			if le, err = l.Load(state, cw, rp.p); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				clearLoaded(b, cw, le)
				if le, err = l.Load(state, cw, rp.p); err != nil {
					b.Fatal(err)
				}
			}
			metrics(b)
		})
		b.Run(fmt.Sprintf("restore-new/entities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := replicate.LoadState(bytes.NewReader(state), ecs.New(), rp.p); err != nil {
					b.Fatal(err)
				}
			}
			metrics(b)
		})
	}
}

// BenchmarkCheckpointResync compares, for a world of 10,000 entities
// (three replicated components), the two ways a client could be sent the
// whole state: the resync path (Server.Resync: the server builds the
// client's update as for a late joiner, in parts, and the client replaces
// its state with it), timed per resync until the client applied it; and a
// checkpoint push (capture, encode, LoadState into an empty world), which
// would still need the changes since the checkpoint's tick on top.
func BenchmarkCheckpointResync(b *testing.B) {
	const n = 10000
	b.Run(fmt.Sprintf("resync/entities=%d", n), func(b *testing.B) {
		bw := newBenchWorld(b, n, 1)
		c := bw.clients[0]
		ticks := 0
		b.ReportAllocs()
		for b.Loop() {
			want := c.Stats().Resyncs + 1
			if err := bw.srv.Resync(c.ID(), "bench"); err != nil {
				b.Fatal(err)
			}
			for range 100 {
				bw.tick(true)
				ticks++
				if c.Stats().Resyncs == want {
					break
				}
			}
			if c.Stats().Resyncs != want {
				b.Fatal("resync not applied in 100 ticks")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
		b.ReportMetric(float64(ticks)/float64(b.N), "ticks/resync")
	})
	b.Run(fmt.Sprintf("checkpoint/entities=%d", n), func(b *testing.B) {
		bw := newBenchWorld(b, n, 1)
		r := replicate.NewCheckpoints(bw.sw, bw.proto, replicate.CheckpointConfig{Max: 2, MaxBytes: 1 << 30})
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			cp, err := r.Capture(1)
			if err != nil {
				b.Fatal(err)
			}
			buf = cp.AppendState(buf[:0])
			if _, err := replicate.LoadState(bytes.NewReader(buf), ecs.New(), bw.proto); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
	})
}
