package ecs_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/rewindgo/rewind/ecs"
)

type pos struct{ X, Y float64 }
type vel struct{ X, Y float64 }
type tag struct{}

func TestEntityLifecycleAndStaleHandles(t *testing.T) {
	w := ecs.New()
	ps := ecs.Register[pos](w)
	a := w.Spawn()
	if a.Generation() != 1 || !w.Alive(a) {
		t.Fatalf("spawned %v alive=%v", a, w.Alive(a))
	}
	if err := ps.Set(a, pos{X: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Despawn(a); err != nil {
		t.Fatal(err)
	}
	b := w.Spawn() // reuses the slot with a new generation
	if b.Index() != a.Index() || b.Generation() != 2 {
		t.Fatalf("reuse gave %v after %v", b, a)
	}
	if ps.Has(b) {
		t.Fatal("new entity inherited a component")
	}
	// Every operation on the stale handle is refused or zero.
	if err := ps.Set(a, pos{}); !errors.Is(err, ecs.ErrNotAlive) {
		t.Fatalf("Set on stale: %v", err)
	}
	if _, ok := ps.Get(a); ok || ps.Ptr(a) != nil || ps.Has(a) {
		t.Fatal("stale entity reads a component")
	}
	if err := w.Despawn(a); !errors.Is(err, ecs.ErrNotAlive) {
		t.Fatalf("Despawn stale: %v", err)
	}
	if err := ps.Remove(a); !errors.Is(err, ecs.ErrNotAlive) {
		t.Fatalf("Remove stale: %v", err)
	}
	if err := w.Despawn(0); !errors.Is(err, ecs.ErrNotAlive) {
		t.Fatalf("Despawn zero: %v", err)
	}
	// Unregistered types.
	if err := ecs.Set(w, b, vel{}); !errors.Is(err, ecs.ErrNotRegistered) {
		t.Fatalf("unregistered Set: %v", err)
	}
	if _, ok := ecs.Get[vel](w, b); ok || ecs.Ptr[vel](w, b) != nil || ecs.StoreOf[vel](w) != nil {
		t.Fatal("unregistered type reads a value")
	}
	if err := ecs.SetResource(w, vel{}); !errors.Is(err, ecs.ErrNotRegistered) {
		t.Fatalf("unregistered resource: %v", err)
	}
}

func TestSpawnAt(t *testing.T) {
	w := ecs.New()
	e := ecs.NewEntity(5, 3)
	if err := w.SpawnAt(e); err != nil {
		t.Fatal(err)
	}
	if !w.Alive(e) || w.Len() != 1 {
		t.Fatalf("SpawnAt: alive=%v len=%d", w.Alive(e), w.Len())
	}
	if err := w.SpawnAt(ecs.NewEntity(5, 4)); !errors.Is(err, ecs.ErrSlotInUse) {
		t.Fatalf("slot in use: %v", err)
	}
	// Lower slots were freed and are reused in ascending order.
	if got := w.Spawn(); got != ecs.NewEntity(0, 1) {
		t.Fatalf("next spawn %v", got)
	}
}

func TestQueriesAreDeterministicAndFiltered(t *testing.T) {
	build := func() (*ecs.World, []ecs.Entity) {
		w := ecs.New()
		ps, vs, ts := ecs.Register[pos](w), ecs.Register[vel](w), ecs.Register[tag](w)
		var es []ecs.Entity
		for i := range 20 {
			e := w.Spawn()
			es = append(es, e)
			_ = ps.Set(e, pos{X: float64(i)})
			if i%2 == 0 {
				_ = vs.Set(e, vel{X: 1})
			}
			if i%3 == 0 {
				_ = ts.Set(e, tag{})
			}
		}
		_ = w.Despawn(es[4])
		_ = ps.Remove(es[8])
		return w, es
	}
	order := func(w *ecs.World) []ecs.Entity {
		q := ecs.NewQuery2(ecs.StoreOf[pos](w).Read(), ecs.StoreOf[vel](w).Read()).Without(ecs.StoreOf[tag](w))
		var out []ecs.Entity
		for e := range q.All() {
			out = append(out, e)
		}
		if q.Count() != len(out) {
			t.Fatalf("Count %d, iterated %d", q.Count(), len(out))
		}
		return out
	}
	w1, es := build()
	w2, _ := build()
	o1, o2 := order(w1), order(w2)
	if !slices.Equal(o1, o2) {
		t.Fatalf("same operations, different order: %v vs %v", o1, o2)
	}
	for _, e := range o1 {
		i := slices.Index(es, e)
		if i%2 != 0 || i%3 == 0 || i == 4 || i == 8 {
			t.Fatalf("entity %d should not match", i)
		}
	}
	if len(o1) != 4 { // 2, 10, 14, 16: even, not a multiple of 3, neither 4 nor 8
		t.Fatalf("matched %d entities: %v", len(o1), o1)
	}
}

func TestEveryWriteIsAChange(t *testing.T) {
	w := ecs.New()
	ps, vs := ecs.Register[pos](w), ecs.Register[vel](w)
	res := ecs.RegisterResource[vel](w)
	e := w.Spawn()
	_ = ps.Set(e, pos{})
	_ = vs.Set(e, vel{X: 1})
	res.Set(vel{})
	changedSince := func(mark uint64) (p, v, r bool) {
		tp, _ := ps.Ticks(e)
		tv, _ := vs.Ticks(e)
		return tp.ChangedSince(mark), tv.ChangedSince(mark), res.Ticks().ChangedSince(mark)
	}
	step := func(name string, write func(), wantP, wantV, wantR bool) {
		t.Helper()
		mark := w.Tick()
		w.AdvanceTick()
		write()
		if p, v, r := changedSince(mark); p != wantP || v != wantV || r != wantR {
			t.Errorf("%s: changed pos=%v vel=%v res=%v, want %v %v %v", name, p, v, r, wantP, wantV, wantR)
		}
	}
	step("Set", func() { _ = ps.Set(e, pos{X: 1}) }, true, false, false)
	step("Ptr", func() { ps.Ptr(e).X = 2 }, true, false, false)
	step("Store.All pointer", func() {
		for _, p := range ps.All() {
			p.Y = 3
		}
	}, true, false, false)
	q := ecs.NewQuery2(ps.Write(), vs.Read())
	step("query write + read", func() {
		for _, r := range q.All() {
			r.A.X += r.B.X
		}
	}, true, false, false)
	step("query Get", func() {
		r, _ := q.Get(e)
		r.A.Y = 7
	}, true, false, false)
	step("batches", func() {
		for bt := range ecs.NewQuery1(vs.Write()).Batches() {
			bt.A[0].Y = 5
		}
	}, false, true, false)
	step("resource Ptr", func() { res.Ptr().X = 1 }, false, false, true)
	step("resource Set", func() { res.Set(vel{}) }, false, false, true)
	step("reads only", func() {
		_, _ = ps.Get(e)
		for range ps.Values() {
		}
		_, _ = res.Get()
	}, false, false, false)
	step("SetIfChanged equal", func() {
		v, _ := vs.Get(e)
		if wrote, _ := ecs.SetIfChanged(vs, e, v); wrote {
			t.Error("SetIfChanged wrote an equal value")
		}
	}, false, false, false)
	step("MapEntities", func() { ps.MapEntities(ecs.EntityMap{}) }, false, false, false) // pos holds no references
}

func TestStructuralChangesWhileIterating(t *testing.T) {
	w := ecs.New()
	ps, vs := ecs.Register[pos](w), ecs.Register[vel](w)
	for range 5 {
		e := w.Spawn()
		_ = ps.Set(e, pos{})
	}
	cmds := ecs.NewCommands(w)
	for e, p := range ps.All() {
		p.X = 1
		if err := ps.Remove(e); !errors.Is(err, ecs.ErrLocked) {
			t.Fatalf("Remove while iterating: %v", err)
		}
		if err := w.Despawn(e); !errors.Is(err, ecs.ErrLocked) {
			t.Fatalf("Despawn while iterating: %v", err)
		}
		if err := ps.Set(w.Spawn(), pos{}); !errors.Is(err, ecs.ErrLocked) {
			t.Fatalf("insert while iterating: %v", err)
		}
		// Other stores may change; overwrites of this one too.
		if err := vs.Set(e, vel{X: 1}); err != nil {
			t.Fatal(err)
		}
		if err := ps.Set(e, pos{X: 2}); err != nil {
			t.Fatal(err)
		}
		child := cmds.Spawn()
		ps.SetDeferred(cmds, child, pos{Y: 1})
		cmds.SetParent(child, e)
		cmds.Despawn(e) // orphans the child
	}
	if err := cmds.Apply(); err != nil {
		t.Fatal(err)
	}
	if ps.Len() != 5 || vs.Len() != 0 {
		t.Fatalf("after commands: %d pos, %d vel", ps.Len(), vs.Len())
	}
	// After the loop the store is unlocked again.
	if err := ps.Set(w.Spawn(), pos{}); err != nil {
		t.Fatal(err)
	}
	// A failing command does not stop the others; errors come back joined.
	cmds.Despawn(ecs.NewEntity(999, 1))
	cmds.Do(func(w *ecs.World) error { w.Spawn(); return nil })
	before := w.Len()
	if err := cmds.Apply(); !errors.Is(err, ecs.ErrNotAlive) || w.Len() != before+1 {
		t.Fatalf("Apply: %v, len %d -> %d", err, before, w.Len())
	}
}

func TestHierarchy(t *testing.T) {
	w := ecs.New()
	root, a, b, c := w.Spawn(), w.Spawn(), w.Spawn(), w.Spawn()
	for _, ch := range []ecs.Entity{a, b, c} {
		if err := w.SetParent(ch, root); err != nil {
			t.Fatal(err)
		}
	}
	leaf := w.Spawn()
	_ = w.SetParent(leaf, b)
	if err := w.SetParent(root, leaf); !errors.Is(err, ecs.ErrCycle) {
		t.Fatalf("cycle: %v", err)
	}
	if got := slices.Collect(w.Children(root)); !slices.Equal(got, []ecs.Entity{a, b, c}) {
		t.Fatalf("children %v", got)
	}
	_ = w.SetParent(b, 0) // detach the middle child
	if got := slices.Collect(w.Children(root)); !slices.Equal(got, []ecs.Entity{a, c}) {
		t.Fatalf("children after detach %v", got)
	}
	_ = w.SetParent(b, root)
	if err := w.Despawn(a); err != nil { // plain despawn orphans nothing else
		t.Fatal(err)
	}
	if got := slices.Collect(w.Children(root)); !slices.Equal(got, []ecs.Entity{c, b}) {
		t.Fatalf("children after despawn %v", got)
	}
	if err := w.DespawnRecursive(root); err != nil {
		t.Fatal(err)
	}
	if w.Len() != 0 || w.HierarchyStore().Len() != 0 {
		t.Fatalf("left %d entities, %d hierarchy components", w.Len(), w.HierarchyStore().Len())
	}
}

func TestObserveStructuralEvents(t *testing.T) {
	w := ecs.New()
	ps := ecs.Register[pos](w)
	var got []ecs.EventKind
	cancel := w.Observe(func(ev ecs.Event) { got = append(got, ev.Kind) })
	e := w.Spawn()
	_ = ps.Set(e, pos{})
	_ = ps.Set(e, pos{X: 1}) // a write, not structural
	_ = ps.Remove(e)
	_ = w.Despawn(e)
	cancel()
	w.Spawn()
	want := []ecs.EventKind{ecs.Spawned, ecs.Inserted, ecs.Removed, ecs.Despawned}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestResourcePresence(t *testing.T) {
	w := ecs.New()
	r := ecs.RegisterResource[vel](w)
	if _, ok := r.Get(); ok || r.Ptr() != nil {
		t.Fatal("absent resource readable")
	}
	r.Set(vel{X: 2})
	if v, ok := ecs.GetResource[vel](w); !ok || v.X != 2 {
		t.Fatalf("GetResource %v %v", v, ok)
	}
	if !ecs.RemoveResource[vel](w) || r.Present() {
		t.Fatal("RemoveResource")
	}
}

// The restore protocol refuses a Store of another World instead of
// restoring it with the wrong load's bookkeeping, and leaves that Store as
// it was.
func TestRestoreStoreRefusesAnotherWorld(t *testing.T) {
	w, other := ecs.New(), ecs.New()
	s := ecs.Register[int](other)
	e := other.Spawn()
	if err := s.Set(e, 7); err != nil {
		t.Fatal(err)
	}
	r := ecs.BeginRestore(w, w.EntityState())
	var got any
	func() {
		defer func() { got = recover() }()
		ecs.RestoreStore(r, s, 0, nil, 0)
	}()
	r.Finish()
	if got == nil {
		t.Fatal("RestoreStore accepted a Store of another World")
	}
	if v, ok := s.Get(e); !ok || v != 7 {
		t.Fatalf("the other World's Store changed: %v %v", v, ok)
	}
}

// TestGrow: after World.Grow(n) and Store.Grow(n), n spawns and n inserts
// allocate nothing (the sparse index aside: it follows the entity table
// and grows once), and the values read back as written.
func TestGrow(t *testing.T) {
	const half = 500 // AllocsPerRun(1, f) runs f twice
	w := ecs.New()
	ps := ecs.Register[pos](w)
	w.Spawn() // some content before the growth
	w.Grow(2 * half)
	ps.Grow(2 * half)
	ents := make([]ecs.Entity, 0, 2*half)
	if a := testing.AllocsPerRun(1, func() {
		for range half {
			ents = append(ents, w.Spawn())
		}
	}); a != 0 || len(ents) != 2*half {
		t.Fatalf("spawns after Grow allocate %.0f times", a)
	}
	_ = ps.Set(ents[2*half-1], pos{X: 2*half - 1}) // sizes the sparse index to the entity table
	next := 0
	if a := testing.AllocsPerRun(1, func() {
		for range half {
			_ = ps.Set(ents[next], pos{X: float64(next)})
			next++
		}
	}); a != 0 {
		t.Fatalf("inserts after Grow allocate %.0f times", a)
	}
	if p, _ := ps.Get(ents[7]); ps.Len() != 2*half || p.X != 7 {
		t.Fatalf("%d values, ents[7] = %v", ps.Len(), p)
	}
}
