package snapshot_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
)

type Pos struct{ X, Y, Z float64 }
type Vel struct{ X, Y, Z float64 }
type Health int32

// Target holds an entity reference.
type Target struct{ E ecs.Entity }

func (t *Target) MapEntities(m ecs.EntityMapper) { t.E = m.MapEntity(t.E) }

// Inventory uses the clone strategy (it holds a slice).
type Inventory struct{ Items []int32 }

func (v Inventory) Clone() Inventory { return Inventory{Items: slices.Clone(v.Items)} }
func (v Inventory) AppendBinary(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v.Items)))
	for _, it := range v.Items {
		b = binary.LittleEndian.AppendUint32(b, uint32(it))
	}
	return b, nil
}

// Name uses the codec strategy.
type Name struct{ S string }

func (n *Name) AppendBinary(b []byte) ([]byte, error) { return append(b, n.S...), nil }
func (n *Name) UnmarshalBinary(b []byte) error        { n.S = string(b); return nil }

// Score is a plain resource; Log is a cloned resource.
type Score struct{ A, B int64 }
type Log struct{ Lines []string }

func (l Log) Clone() Log { return Log{Lines: slices.Clone(l.Lines)} }
func (l Log) AppendBinary(b []byte) ([]byte, error) {
	return append(b, strings.Join(l.Lines, "\n")...), nil
}

type game struct {
	w     *ecs.World
	reg   *snapshot.Registry
	pos   *ecs.Store[Pos]
	vel   *ecs.Store[Vel]
	hp    *ecs.Store[Health]
	tgt   *ecs.Store[Target]
	inv   *ecs.Store[Inventory]
	name  *ecs.Store[Name]
	score *ecs.Resource[Score]
	log   *ecs.Resource[Log]
	rand  *ecs.Resource[rng.Rand]
	move  *ecs.Query2[Pos, Vel]
}

func newGame(t testing.TB) *game {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	must(t, snapshot.Copy[Pos](reg))
	must(t, snapshot.Copy[Vel](reg))
	must(t, snapshot.Copy[Health](reg))
	must(t, snapshot.Copy[Target](reg))
	must(t, snapshot.Clone[Inventory](reg))
	must(t, snapshot.Codec[Name](reg))
	must(t, snapshot.CopyResource[Score](reg))
	must(t, snapshot.CloneResource[Log](reg))
	must(t, snapshot.CopyResource[rng.Rand](reg))
	g := &game{w: w, reg: reg,
		pos: ecs.StoreOf[Pos](w), vel: ecs.StoreOf[Vel](w), hp: ecs.StoreOf[Health](w),
		tgt: ecs.StoreOf[Target](w), inv: ecs.StoreOf[Inventory](w), name: ecs.StoreOf[Name](w),
		score: ecs.ResourceOf[Score](w), log: ecs.ResourceOf[Log](w), rand: ecs.ResourceOf[rng.Rand](w),
	}
	g.move = ecs.NewQuery2(g.pos.Write(), g.vel.Read())
	g.rand.Set(rng.NewSeed(7))
	return g
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// dump renders the complete state, dense order included, so two dumps are
// equal exactly when the states are.
func (g *game) dump() string {
	var b strings.Builder
	st := g.w.EntityState()
	fmt.Fprintf(&b, "slots=%v free=%v\n", st.Slots, st.Free)
	dumpStore(&b, g.pos)
	dumpStore(&b, g.vel)
	dumpStore(&b, g.hp)
	dumpStore(&b, g.tgt)
	dumpStore(&b, g.inv)
	dumpStore(&b, g.name)
	dumpStore(&b, g.w.HierarchyStore())
	for _, r := range []interface{ Get() (any, bool) }{resGet[Score]{g.score}, resGet[Log]{g.log}} {
		v, ok := r.Get()
		fmt.Fprintf(&b, "res %v %+v\n", ok, v)
	}
	if r, ok := g.rand.Get(); ok {
		fmt.Fprintf(&b, "rng continues %d %d %d\n", r.Uint64(), r.IntN(1000), r.Uint64())
	} else {
		b.WriteString("rng absent\n")
	}
	return b.String()
}

type resGet[T any] struct{ r *ecs.Resource[T] }

func (r resGet[T]) Get() (any, bool) { return r.r.Get() }

func dumpStore[T any](b *strings.Builder, s *ecs.Store[T]) {
	col := s.Column()
	fmt.Fprintf(b, "%s %v %+v\n", s.Info().Name, col.Entities, col.Values)
}

func (g *game) alive() []ecs.Entity { return slices.Collect(g.w.Entities()) }

// step applies one frame of random operations of every kind.
func (g *game) step(t testing.TB, r *rand.Rand) {
	for range 1 + r.IntN(6) {
		alive := g.alive()
		pick := func() ecs.Entity {
			if len(alive) == 0 {
				return g.w.Spawn()
			}
			return alive[r.IntN(len(alive))]
		}
		switch op := r.IntN(16); op {
		case 0, 1:
			e := g.w.Spawn()
			must(t, g.pos.Set(e, Pos{X: float64(r.IntN(100))}))
			if r.IntN(2) == 0 {
				must(t, g.vel.Set(e, Vel{X: 1, Y: float64(r.IntN(3))}))
			}
			if r.IntN(3) == 0 {
				must(t, g.inv.Set(e, Inventory{Items: []int32{int32(r.IntN(9))}}))
			}
			if r.IntN(3) == 0 {
				must(t, g.name.Set(e, Name{S: fmt.Sprint("n", r.IntN(99))}))
			}
		case 2:
			must(t, g.w.Despawn(pick()))
		case 3:
			must(t, g.w.DespawnRecursive(pick()))
		case 4:
			must(t, g.hp.Set(pick(), Health(r.IntN(100))))
		case 5:
			must(t, g.hp.Remove(pick()))
		case 6:
			must(t, g.tgt.Set(pick(), Target{E: pick()}))
		case 7:
			c, p := pick(), pick()
			if err := g.w.SetParent(c, p); err != nil && !errors.Is(err, ecs.ErrCycle) {
				t.Fatal(err)
			}
		case 8: // writes through query pointers
			for _, row := range g.move.All() {
				row.A.X += row.B.X
				row.A.Y += row.B.Y
			}
		case 9:
			if p := g.pos.Ptr(pick()); p != nil {
				p.Z++
			}
		case 10:
			if p := g.inv.Ptr(pick()); p != nil {
				p.Items = append(p.Items, int32(r.IntN(9)))
			}
		case 11:
			if g.score.Present() {
				g.score.Remove()
			} else {
				g.score.Set(Score{A: int64(r.IntN(50))})
			}
		case 12:
			if p := g.log.Ptr(); p != nil && r.IntN(3) > 0 {
				p.Lines = append(p.Lines, fmt.Sprint("l", r.IntN(9)))
			} else if p == nil {
				g.log.Set(Log{Lines: []string{"start"}})
			} else {
				g.log.Remove()
			}
		case 13: // game randomness from the world's RNG
			if p := g.rand.Ptr(); p != nil {
				for range p.IntN(4) {
					_ = p.Uint64()
				}
			}
		case 14:
			must(t, g.vel.Remove(pick()))
		case 15:
			must(t, g.name.Set(pick(), Name{S: fmt.Sprint("r", r.IntN(99))}))
		}
	}
}

// TestLoadRestoresEveryFrame is the seeded property test of the foundation:
// random frames with a save every frame and rollbacks in between; then a load
// of any held frame restores exactly the state saved as that frame.
func TestLoadRestoresEveryFrame(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			const frames = 160
			r := rand.New(rand.NewPCG(seed, 99))
			g := newGame(t)
			ring, err := snapshot.NewRing(g.reg, frames+1)
			must(t, err)
			want := map[tick.Tick]string{}
			sums := map[tick.Tick]uint64{}
			for f := tick.Tick(0); f < frames; f++ {
				sum, err := ring.SaveChecksum(f)
				must(t, err)
				want[f], sums[f] = g.dump(), sum
				// Now and then roll back a few frames and re-simulate on another timeline.
				if f > 10 && r.IntN(8) == 0 {
					back := f - tick.Tick(1+r.IntN(8))
					must(t, ring.Load(back))
					if got := g.dump(); got != want[back] {
						t.Fatalf("rollback to %d:\n got %s\nwant %s", back, got, want[back])
					}
					for k := back; k < f; k++ {
						g.step(t, r)
						sum, err := ring.SaveChecksum(k + 1)
						must(t, err)
						want[k+1], sums[k+1] = g.dump(), sum
					}
				}
				g.step(t, r)
			}
			var parts []snapshot.Part
			for _, k := range r.Perm(frames) {
				f := tick.Tick(k)
				must(t, ring.Load(f))
				if got := g.dump(); got != want[f] {
					t.Fatalf("load(%d):\n got %s\nwant %s", f, got, want[f])
				}
				sum, p, err := g.reg.Checksum(parts)
				must(t, err)
				parts = p
				if sum != sums[f] {
					t.Fatalf("load(%d): checksum %x, saved %x; differing parts %v", f, sum, sums[f], p)
				}
				if s, _, ok := ring.Checksum(f); !ok || s != sum {
					t.Fatalf("ring.Checksum(%d) = %x %v", f, s, ok)
				}
			}
		})
	}
}

func TestEntityReferencesAndHierarchySurviveLoad(t *testing.T) {
	g := newGame(t)
	ring, _ := snapshot.NewRing(g.reg, 4)
	parent := g.w.Spawn()
	kids := []ecs.Entity{g.w.Spawn(), g.w.Spawn(), g.w.Spawn()}
	for _, k := range kids {
		must(t, g.w.SetParent(k, parent))
		must(t, g.tgt.Set(k, Target{E: parent}))
	}
	grandchild := g.w.Spawn()
	must(t, g.w.SetParent(grandchild, kids[1]))
	must(t, ring.Save(0))

	must(t, g.w.DespawnRecursive(parent))
	if g.w.Len() != 0 {
		t.Fatalf("after DespawnRecursive: %d entities alive", g.w.Len())
	}
	// New entities take the freed slots with new generations.
	for range 3 {
		if e := g.w.Spawn(); slices.Contains(kids, e) || e == parent {
			t.Fatalf("stale identity %v reused", e)
		}
	}
	must(t, ring.Load(0))
	for _, e := range append([]ecs.Entity{parent, grandchild}, kids...) {
		if !g.w.Alive(e) {
			t.Fatalf("%v not back after load", e)
		}
	}
	if got := slices.Collect(g.w.Children(parent)); !slices.Equal(got, kids) {
		t.Fatalf("children %v, want %v", got, kids)
	}
	if g.w.Parent(grandchild) != kids[1] {
		t.Fatalf("grandchild parent %v", g.w.Parent(grandchild))
	}
	for _, k := range kids {
		if tg, _ := g.tgt.Get(k); tg.E != parent || !g.w.Alive(tg.E) {
			t.Fatalf("reference from %v = %v, want live %v", k, tg.E, parent)
		}
	}
}

func TestMapEntities(t *testing.T) {
	w := ecs.New()
	tgt := ecs.Register[Target](w)
	a, b, c := w.Spawn(), w.Spawn(), w.Spawn()
	must(t, tgt.Set(a, Target{E: b}))
	must(t, w.SetParent(c, a))
	m := ecs.EntityMap{a: ecs.NewEntity(10, 1), b: ecs.NewEntity(11, 1), c: ecs.NewEntity(12, 1)}
	if !tgt.MapEntities(m) {
		t.Fatal("Target not reported as holding references")
	}
	if v, _ := tgt.Get(a); v.E != ecs.NewEntity(11, 1) {
		t.Fatalf("mapped reference %v", v.E)
	}
	h, _ := w.HierarchyStore().Get(c)
	ecs.MapValue(&h, m)
	if h.Parent() != ecs.NewEntity(10, 1) {
		t.Fatalf("mapped parent %v", h.Parent())
	}
	// Unknown references map to the zero Entity, never to a live entity.
	v := Target{E: ecs.NewEntity(99, 3)}
	ecs.MapValue(&v, m)
	if !v.E.IsZero() {
		t.Fatalf("unknown reference mapped to %v", v.E)
	}
}

func TestLoadLeavesNoPhantomChanges(t *testing.T) {
	g := newGame(t)
	ring, _ := snapshot.NewRing(g.reg, 8)
	var es []ecs.Entity
	for i := range 10 {
		e := g.w.Spawn()
		must(t, g.pos.Set(e, Pos{X: float64(i)}))
		must(t, g.vel.Set(e, Vel{X: 1}))
		es = append(es, e)
	}
	g.score.Set(Score{A: 1})
	must(t, ring.Save(0))

	changed := func(since uint64) (out []string) {
		for e := range g.pos.Values() {
			if k, _ := g.pos.Ticks(e); k.ChangedSince(since) {
				out = append(out, "pos "+e.String())
			}
		}
		for e := range g.vel.Values() {
			if k, _ := g.vel.Ticks(e); k.ChangedSince(since) {
				out = append(out, "vel "+e.String())
			}
		}
		if g.score.Ticks().ChangedSince(since) {
			out = append(out, "score")
		}
		return out
	}

	// A load with nothing written since the save changes nothing.
	mark := g.w.Tick()
	g.w.AdvanceTick()
	must(t, ring.Load(0))
	if c := changed(mark); len(c) != 0 {
		t.Fatalf("load after no writes reports changes: %v", c)
	}

	// A write and a load: only the written value changes (its value was reverted).
	must(t, g.pos.Set(es[3], Pos{X: 42}))
	mark = g.w.Tick()
	g.w.AdvanceTick()
	must(t, ring.Load(0))
	if c := changed(mark); !slices.Equal(c, []string{"pos " + es[3].String()}) {
		t.Fatalf("changes after load = %v, want only pos of %v", c, es[3])
	}
	if p, _ := g.pos.Get(es[3]); p.X != 3 {
		t.Fatalf("value not restored: %v", p)
	}

	// Structural changes: despawn + spawn, then load; the observer sees the
	// revived entity and the removed one, and no component of the untouched
	// entities is reported as changed.
	var events []string
	cancel := g.w.Observe(func(ev ecs.Event) { events = append(events, fmt.Sprint(ev.Kind, " ", ev.Entity)) })
	defer cancel()
	must(t, g.w.Despawn(es[5]))
	extra := g.w.Spawn()
	must(t, g.pos.Set(extra, Pos{}))
	events = nil
	mark = g.w.Tick()
	g.w.AdvanceTick()
	must(t, ring.Load(0))
	c := changed(mark)
	if !slices.Equal(c, []string{"pos " + es[5].String(), "vel " + es[5].String()}) {
		t.Fatalf("changes after structural load = %v", c)
	}
	slices.Sort(events)
	wantEv := []string{"despawned " + extra.String(), "inserted " + es[5].String(), "inserted " + es[5].String(), "spawned " + es[5].String()}
	if !slices.Equal(events, wantEv) {
		t.Fatalf("events %v, want %v", events, wantEv)
	}
}

func TestCopyStrategyRefusesPointers(t *testing.T) {
	type inner struct{ P *int }
	cases := map[string]func(*snapshot.Registry) error{
		"pointer":   func(r *snapshot.Registry) error { return snapshot.Copy[struct{ P *int }](r) },
		"slice":     func(r *snapshot.Registry) error { return snapshot.Copy[struct{ S []int }](r) },
		"map":       func(r *snapshot.Registry) error { return snapshot.Copy[struct{ M map[int]int }](r) },
		"chan":      func(r *snapshot.Registry) error { return snapshot.Copy[struct{ C chan int }](r) },
		"func":      func(r *snapshot.Registry) error { return snapshot.Copy[struct{ F func() }](r) },
		"interface": func(r *snapshot.Registry) error { return snapshot.Copy[struct{ I any }](r) },
		"string":    func(r *snapshot.Registry) error { return snapshot.Copy[struct{ S string }](r) },
		"nested":    func(r *snapshot.Registry) error { return snapshot.Copy[struct{ A [2]inner }](r) },
		"resource":  func(r *snapshot.Registry) error { return snapshot.CopyResource[*int](r) },
	}
	for name, reg := range cases {
		err := reg(snapshot.NewRegistry(ecs.New()))
		if !errors.Is(err, snapshot.ErrNotPlainData) {
			t.Errorf("%s: err = %v, want ErrNotPlainData", name, err)
		}
	}
	err := snapshot.Copy[struct{ A [2]inner }](snapshot.NewRegistry(ecs.New()))
	if err == nil || !strings.Contains(err.Error(), "A[0].P") {
		t.Errorf("error does not name the field: %v", err)
	}
	// Clone without a checksum form is refused unless NoChecksum is given.
	if err := snapshot.Clone[cl](snapshot.NewRegistry(ecs.New())); !errors.Is(err, snapshot.ErrNoChecksum) {
		t.Errorf("clone without AppendBinary: %v", err)
	}
	if err := snapshot.Clone[cl](snapshot.NewRegistry(ecs.New()), snapshot.NoChecksum()); err != nil {
		t.Errorf("clone with NoChecksum: %v", err)
	}
}

type cl struct{ S []int }

func (c cl) Clone() cl { return cl{S: slices.Clone(c.S)} }

func TestLoadFrameNotHeld(t *testing.T) {
	g := newGame(t)
	ring, _ := snapshot.NewRing(g.reg, 4)
	if err := ring.Load(0); !errors.Is(err, snapshot.ErrFrameNotHeld) {
		t.Fatalf("empty ring: %v", err)
	}
	for f := tick.Tick(0); f < 6; f++ {
		must(t, ring.Save(f))
	}
	if err := ring.Load(1); !errors.Is(err, snapshot.ErrFrameNotHeld) {
		t.Fatalf("replaced frame: %v", err)
	}
	ring.Confirm(4)
	if err := ring.Load(3); !errors.Is(err, snapshot.ErrFrameNotHeld) {
		t.Fatalf("confirmed-away frame: %v", err)
	}
	if !slices.Equal(ring.Frames(), []tick.Tick{4, 5}) {
		t.Fatalf("frames %v", ring.Frames())
	}
	must(t, ring.Load(4))
	if _, err := snapshot.NewRing(g.reg, 0); !errors.Is(err, snapshot.ErrInvalidDepth) {
		t.Fatalf("depth 0: %v", err)
	}
	if err := snapshot.Copy[Pos](g.reg); !errors.Is(err, snapshot.ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
}

func TestSetDepthKeepsNewestFrames(t *testing.T) {
	g := newGame(t)
	ring, _ := snapshot.NewRing(g.reg, 8)
	for f := tick.Tick(0); f < 8; f++ {
		must(t, ring.Save(f))
	}
	must(t, ring.SetDepth(3))
	if !slices.Equal(ring.Frames(), []tick.Tick{5, 6, 7}) {
		t.Fatalf("frames after shrink %v", ring.Frames())
	}
	must(t, ring.SetDepth(10))
	must(t, ring.Load(6))
}

// The checksum of a fixed world is pinned: a change of byte form, hash or
// part naming changes it and fails this test. Update the constant only for a
// deliberate, documented format change.
func TestChecksumGolden(t *testing.T) {
	g := newGame(t)
	for i := range 5 {
		e := g.w.Spawn()
		must(t, g.pos.Set(e, Pos{X: float64(i), Y: -float64(i) / 3, Z: 0.5}))
		must(t, g.hp.Set(e, Health(100-i)))
		if i%2 == 0 {
			must(t, g.inv.Set(e, Inventory{Items: []int32{int32(i), 7}}))
			must(t, g.name.Set(e, Name{S: "unit"}))
		}
	}
	must(t, g.w.Despawn(ecs.NewEntity(1, 1)))
	g.score.Set(Score{A: 3, B: -4})
	sum, parts, err := g.reg.Checksum(nil)
	must(t, err)
	const golden = 0xde8b0bf96d43e3b9
	if sum != golden {
		for _, p := range parts {
			t.Logf("%-60s %#016x", p.Name, p.Sum)
		}
		t.Fatalf("checksum %#x, golden %#x", sum, uint64(golden))
	}
}

func TestDiffNamesDifferingTypes(t *testing.T) {
	a, b := newGame(t), newGame(t)
	for _, g := range []*game{a, b} {
		e := g.w.Spawn()
		must(t, g.pos.Set(e, Pos{X: 1}))
		must(t, g.hp.Set(e, 10))
	}
	must(t, b.hp.Set(ecs.NewEntity(0, 1), 11))
	b.score.Set(Score{})
	sa, pa, _ := a.reg.Checksum(nil)
	sb, pb, _ := b.reg.Checksum(nil)
	if sa == sb {
		t.Fatal("different states, same checksum")
	}
	got := snapshot.Diff(pa, pb)
	want := []string{"github.com/rewindgo/rewind/snapshot_test.Health", "resource github.com/rewindgo/rewind/snapshot_test.Score"}
	if !slices.Equal(got, want) {
		t.Fatalf("Diff = %v, want %v", got, want)
	}
}

// The ring of depth D holds at most D+1 copies of the component bytes plus a
// small fixed overhead per frame; figures are printed for the record.
func TestRingMemory(t *testing.T) {
	const n, depth = 10000, 8
	g := newGame(t)
	fill(t, g, n)
	ring, _ := snapshot.NewRing(g.reg, depth)
	for f := tick.Tick(0); f < 3*depth; f++ {
		must(t, ring.Save(f))
		for _, row := range g.move.All() {
			row.A.X += row.B.X
		}
	}
	compBytes := n * (24 + 24 + 4)
	limit := (depth+1)*compBytes + depth*4096
	t.Logf("ring bytes for %d entities at depth %d: %d (%.2f copies of the %d component bytes; limit %d)",
		n, depth, ring.Bytes(), float64(ring.Bytes())/float64(compBytes), compBytes, limit)
	if ring.Bytes() > limit {
		t.Fatalf("ring holds %d bytes, limit %d", ring.Bytes(), limit)
	}
}

func fill(t testing.TB, g *game, n int) {
	for i := range n {
		e := g.w.Spawn()
		must(t, g.pos.Set(e, Pos{X: float64(i)}))
		must(t, g.vel.Set(e, Vel{X: 1, Y: 2, Z: 3}))
		must(t, g.hp.Set(e, Health(i)))
	}
}

// Query loops release their locks when they end, break or return, but not
// when the loop body panics; a load releases every lock, so a program that
// recovers from the panic and rolls back to a saved frame can go on.
func TestLoadReleasesLocksOfPanickedLoops(t *testing.T) {
	g := newGame(t)
	ring, _ := snapshot.NewRing(g.reg, 2)
	for i := range 3 {
		must(t, g.pos.Set(g.w.Spawn(), Pos{X: float64(i)}))
	}
	must(t, ring.Save(0))
	func() {
		defer func() { _ = recover() }()
		for range ecs.NewQuery1(g.pos.Write()).All() {
			panic("system failed")
		}
	}()
	if err := g.pos.Set(g.w.Spawn(), Pos{}); !errors.Is(err, ecs.ErrLocked) {
		t.Fatalf("insert after the panic: %v, want ErrLocked", err)
	}
	must(t, ring.Load(0))
	if err := g.pos.Set(g.w.Spawn(), Pos{}); err != nil {
		t.Fatalf("insert after the load: %v", err)
	}
	// Loops after the load lock and unlock as usual.
	for range g.pos.All() {
		if err := g.pos.Set(g.w.Spawn(), Pos{}); !errors.Is(err, ecs.ErrLocked) {
			t.Fatalf("insert while iterating: %v", err)
		}
	}
	if err := g.pos.Set(g.w.Spawn(), Pos{}); err != nil {
		t.Fatal(err)
	}
}
