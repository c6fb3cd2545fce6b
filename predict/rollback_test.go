package predict_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// Lightyear's prediction cases that need no inputs (reference section 6.3).

type Buff struct{ Level int32 }

// A component the simulation removed at tick 3 is back when a rollback
// restores tick 2, and the re-simulation removes it again.
func TestPredictedRemoveRestoredOnRollback(t *testing.T) {
	g := newRig(t, predict.Config{})
	buff, err := predict.Register[Buff](g.tl)
	if err != nil {
		t.Fatal(err)
	}
	e := g.spawn(10)
	g.must(buff.Insert(e, 0, Buff{1}))
	seen := false
	g.extra = func(tk tick.Tick) {
		if tk == 3 {
			if g.tl.InRollback() && buff.Store().Has(e) {
				seen = true
			}
			g.must(buff.Store().Remove(e))
		}
	}
	g.stepTo(5)
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if !seen {
		t.Fatal("Buff was not restored for the re-simulation of tick 3")
	}
	if _, ok := buff.At(e, 2); !ok || buff.Store().Has(e) {
		t.Fatalf("Buff at 2: %v, now: %v; want present, absent", ok, buff.Store().Has(e))
	}
}

// An entity the simulation despawned (marker) comes back for good when the
// re-simulation no longer kills it.
func TestPredictedDespawnRestoredOnRollback(t *testing.T) {
	g := newRig(t, predict.Config{})
	e := g.spawn(10)
	g.extra = func(tick.Tick) {
		if h, ok := g.hs.Get(e); ok && h <= 7 {
			g.must(g.tl.Despawn(e))
		}
	}
	g.stepTo(5)
	if g.hs.Has(e) || !g.tl.Despawned(e) {
		t.Fatal("the simulation's despawn did not take")
	}
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if !g.w.Alive(e) || g.tl.Despawned(e) || g.now(e) != 96 {
		t.Fatalf("alive %v marked %v health %d; want true false 96", g.w.Alive(e), g.tl.Despawned(e), g.now(e))
	}
	g.stepTo(30) // far past the window: the entity is not despawned later
	if !g.w.Alive(e) || g.now(e) != 72 {
		t.Fatalf("alive %v health %d at 30; want true 72", g.w.Alive(e), g.now(e))
	}
}

// A component the server inserted in the past appears on rollback.
func TestRemoteInsertAppliedOnRollback(t *testing.T) {
	g := newRig(t, predict.Config{})
	buff, _ := predict.Register[Buff](g.tl)
	e := g.spawn(10)
	g.stepTo(6)
	g.must(buff.Authoritative(e, 2, Buff{7}))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if v, ok := buff.At(e, 3); !ok || v.Level != 7 {
		t.Fatalf("Buff at 3 = %v %v, want {7} true", v, ok)
	}
	if v, ok := buff.Store().Get(e); !ok || v.Level != 7 {
		t.Fatalf("Buff now = %v %v, want {7} true", v, ok)
	}
}

// Several mismatches and requests in one receive phase: one rollback, from
// the earliest.
func TestEarliestMismatchWins(t *testing.T) {
	g := newRig(t, predict.Config{})
	a, b := g.spawn(10), g.spawn(20)
	g.stepTo(8)
	g.must(g.health.Authoritative(a, 6, 0))
	g.must(g.health.Authoritative(b, 3, 0))
	g.must(g.health.Authoritative(a, 5, 5)) // matches the prediction
	for _, tk := range []tick.Tick{6, 5, 3} {
		g.must(g.tl.Complete(tk))
	}
	g.tl.Request(7)
	g.tl.Step(g.sim)
	st := g.tl.Stats()
	if st.Rollbacks != 1 || st.TicksResimulated != 5 || st.Types[0].Mispredictions != 2 {
		t.Fatalf("rollbacks %d resimulated %d mispredictions %d; want 1, 5 (from 3 to 8), 2", st.Rollbacks, st.TicksResimulated, st.Types[0].Mispredictions)
	}
	if g.now(a) != -3 || g.now(b) != -6 {
		t.Fatalf("health now %d %d, want -3 -6", g.now(a), g.now(b))
	}
}

// Issue item 8: entities and components applied by replication (outside
// the predicted types) survive a prediction rollback, including entities
// spawned after the tick rolled back to and entities despawned since.
func TestReplicatedStructureSurvivesRollback(t *testing.T) {
	type Name struct{ ID int32 } // replicated, not predicted
	g := newRig(t, predict.Config{})
	names := ecs.Register[Name](g.w)
	e := g.spawn(10)
	g.stepTo(3)
	late := g.w.Spawn() // replication spawns an entity at 3
	g.must(names.Set(late, Name{7}))
	g.must(g.health.Insert(late, 3, 40))
	gone := g.spawn(30)
	g.stepTo(6)
	g.must(g.w.Despawn(gone)) // replication despawns one with history
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	n := g.w.Len()
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	if !g.w.Alive(late) || g.w.Alive(gone) || g.w.Len() != n {
		t.Fatalf("late alive %v, despawned alive %v, %d entities (want %d)", g.w.Alive(late), g.w.Alive(gone), g.w.Len(), n)
	}
	if v, ok := names.Get(late); !ok || v.ID != 7 {
		t.Fatalf("replicated component lost: %v %v", v, ok)
	}
	if g.now(late) != 36 || g.now(e) != 95 {
		t.Fatalf("health late %d e %d, want 36 95", g.now(late), g.now(e))
	}
}

// Ticks wrap around 2^32: the rings stay consecutive across the wrap.
func TestRollbackAcrossTickWrap(t *testing.T) {
	w := ecs.New()
	start := tick.Tick(1<<32 - 3)
	tl := predict.New(w, start, predict.Config{Window: 6})
	hp, _ := predict.Register[Health](tl)
	q := ecs.NewQuery1(hp.Store().Write())
	sim := func(tick.Tick) {
		for _, h := range q.All() {
			*h--
		}
	}
	e := w.Spawn()
	if err := hp.Insert(e, start, 10); err != nil {
		t.Fatal(err)
	}
	for range 6 { // ticks 2^32-2 .. 3
		tl.Step(sim)
	}
	at := start + 2 // 2^32-1
	if v, ok := hp.At(e, at); !ok || v != 8 {
		t.Fatalf("history at %v = %v %v, want 8", at, v, ok)
	}
	_ = hp.Authoritative(e, at, 100)
	_ = tl.Complete(at)
	tl.Step(sim) // rolls back across the wrap: 100 at 2^32-1, 96 at 4
	if v, _ := hp.Store().Get(e); v != 95 || tl.Now() != 4 || tl.Stats().Rollbacks != 1 {
		t.Fatalf("health %d at %v after %d rollbacks, want 95 at 4 after 1", v, tl.Now(), tl.Stats().Rollbacks)
	}
	if v, ok := hp.At(e, 0); !ok || v != 99 {
		t.Fatalf("history at 0 = %v %v, want 99", v, ok)
	}
}

// A rollback restores the entities without authoritative values too (the
// word-compare path for 8-byte-word types and the generic one), and an
// entity whose restored value is unchanged is not stamped by the restore.
func TestRollbackRestoresEveryEntity(t *testing.T) {
	type Wide struct{ X, Y float64 }
	type Odd struct {
		A int8
		B int32
	} // padding: generic path
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	wide, _ := predict.Register[Wide](tl)
	odd, _ := predict.Register[Odd](tl)
	frozen := w.Spawn()
	var moving [3]ecs.Entity
	for i := range moving {
		moving[i] = w.Spawn()
		_ = wide.Insert(moving[i], 0, Wide{X: float64(i)})
		_ = odd.Insert(moving[i], 0, Odd{A: int8(i)})
	}
	_ = wide.Insert(frozen, 0, Wide{X: 42})
	sim := func(tick.Tick) {
		for _, e := range moving {
			wide.Store().Ptr(e).X += 1.5
			odd.Store().Ptr(e).B += 2
		}
	}
	for range 6 {
		tl.Step(sim)
	}
	stamp, _ := wide.Store().Ticks(frozen)
	_ = wide.Authoritative(moving[0], 2, Wide{X: 100})
	_ = tl.Complete(2)
	tl.Step(sim)
	for i, e := range moving {
		wantX := float64(i) + 7*1.5
		if i == 0 {
			wantX = 100 + 5*1.5
		}
		if v, _ := wide.Store().Get(e); v.X != wantX {
			t.Errorf("entity %d: x = %v, want %v", i, v.X, wantX)
		}
		if v, _ := odd.Store().Get(e); v.B != 14 || v.A != int8(i) {
			t.Errorf("entity %d: odd = %+v, want {%d 14}", i, v, i)
		}
	}
	if st, _ := wide.Store().Ticks(frozen); st != stamp {
		t.Errorf("unchanged entity stamped by the rollback: %+v, was %+v", st, stamp)
	}
}

// A complete tick equal to Now (a client not ahead of the server) is
// checked against the World: a mismatch snaps it without re-simulating, a
// match changes nothing and stamps nothing.
func TestValueForNow(t *testing.T) {
	g := newRig(t, predict.Config{}, predict.LogCorrections())
	e := g.spawn(10)
	g.stepTo(4)
	g.must(g.health.Authoritative(e, 4, 6)) // matches
	g.must(g.tl.Complete(4))
	g.tl.Step(g.sim)
	g.wantRollbacks(0)
	if g.now(e) != 5 {
		t.Fatalf("health %d, want 5", g.now(e))
	}
	g.must(g.health.Authoritative(e, 5, 50))
	g.must(g.tl.Complete(5))
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	st := g.tl.Stats()
	if st.TicksResimulated != 0 || g.at(e, 5) != 50 || g.now(e) != 49 {
		t.Fatalf("resimulated %d, health %d at 5, %d now; want 0, 50, 49", st.TicksResimulated, g.at(e, 5), g.now(e))
	}
	if c := g.health.Corrections(); len(c) != 1 || c[0].Before != 5 || c[0].After != 50 {
		t.Fatalf("corrections %+v, want one from 5 to 50", c)
	}
}
