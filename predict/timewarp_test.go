package predict_test

import (
	"testing"

	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// The scenarios of bevy_timewarp's tests (reference section 6.2), with the
// same numbers: every tick, an entity with Health and no Shield loses 1.

func TestBasicRollback(t *testing.T) {
	g := newRig(t, predict.Config{})
	e1, e2 := g.spawn(10), g.spawn(20)
	g.stepTo(4)
	if g.now(e1) != 6 {
		t.Fatalf("health at 4 = %d, want 6", g.now(e1))
	}
	// The server says e1 had 100 at the end of tick 2.
	g.must(g.health.Authoritative(e1, 2, 100))
	g.tl.Step(g.sim) // not complete yet: no rollback
	g.wantRollbacks(0)
	if g.now(e1) != 5 {
		t.Fatalf("health at 5 before tick 2 is complete = %d, want 5", g.now(e1))
	}
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	if st := g.tl.Stats(); st.TicksResimulated != 3 || st.Types[0].Mispredictions != 1 {
		t.Fatalf("resimulated %d ticks, %d mispredictions; want 3 and 1", st.TicksResimulated, st.Types[0].Mispredictions)
	}
	g.tl.Step(g.sim) // saves tick 6 into the history
	for tk, want := range map[tick.Tick]Health{2: 100, 3: 99, 4: 98, 5: 97, 6: 96} {
		if got := g.at(e1, tk); got != want {
			t.Errorf("health at %d = %d, want %d", tk, got, want)
		}
	}
	if g.at(e2, 6) != 14 || g.now(e2) != 13 {
		t.Errorf("other entity: %d at 6, %d now; want 14, 13", g.at(e2, 6), g.now(e2))
	}
	// A matching value causes no rollback.
	g.must(g.health.Authoritative(e1, 4, 98))
	g.must(g.tl.Complete(4))
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
}

func TestComponentAddAndRemove(t *testing.T) {
	g := newRig(t, predict.Config{})
	e := g.spawn(10)
	g.stepTo(5)
	// The server gave e a Shield at tick 3: health froze at 7.
	g.must(g.shield.Authoritative(e, 3, Shield{1}))
	g.must(g.tl.Complete(3))
	g.tl.Step(g.sim) // tick 6
	g.wantRollbacks(1)
	if g.at(e, 4) != 7 || g.at(e, 5) != 7 || g.now(e) != 7 {
		t.Fatalf("shielded health: %d, %d, %d; want 7 7 7", g.at(e, 4), g.at(e, 5), g.now(e))
	}
	// Removing it resumes the damage.
	g.must(g.shield.Remove(e, g.tl.Now()))
	g.stepTo(8)
	if g.now(e) != 5 {
		t.Fatalf("health after removal = %d, want 5", g.now(e))
	}
	// Re-adding it through an authoritative value at 7 rolls back again.
	g.must(g.shield.Authoritative(e, 7, Shield{2}))
	g.must(g.tl.Complete(7))
	g.tl.Step(g.sim) // tick 9
	g.wantRollbacks(2)
	if g.now(e) != 6 {
		t.Fatalf("health after re-shield = %d, want 6", g.now(e))
	}
}

func TestDespawnMarker(t *testing.T) {
	g := newRig(t, predict.Config{})
	e := g.spawn(10)
	g.stepTo(3)
	g.must(g.tl.Despawn(e))
	if g.hs.Has(e) || !g.w.Alive(e) || !g.tl.Despawned(e) {
		t.Fatalf("after Despawn: has health %v, alive %v, marked %v; want false true true", g.hs.Has(e), g.w.Alive(e), g.tl.Despawned(e))
	}
	g.stepTo(3 + 10) // the marker's tick is the oldest of the window
	if !g.w.Alive(e) {
		t.Fatal("despawned before the window passed")
	}
	g.tl.Step(g.sim)
	if g.w.Alive(e) || g.tl.Despawned(e) {
		t.Fatal("still alive one window after the marker")
	}
}

func TestDespawnRevivalDuringRollback(t *testing.T) {
	g := newRig(t, predict.Config{})
	e := g.spawn(10)
	g.stepTo(5)
	g.must(g.tl.DespawnAt(e, 5)) // the server despawned e at 5
	g.stepTo(7)
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	revived := false
	g.extra = func(t tick.Tick) {
		if g.tl.InRollback() && t == 4 && g.hs.Has(e) {
			revived = true
		}
	}
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	if !revived {
		t.Fatal("the despawned entity was not re-simulated at tick 4")
	}
	if g.at(e, 4) != 98 || g.at(e, 5) != -1 || g.hs.Has(e) || !g.tl.Despawned(e) {
		t.Fatalf("health %d at 4, %d at 5, present now %v; want 98, absent, absent", g.at(e, 4), g.at(e, 5), g.hs.Has(e))
	}
}

// TestDespawnAtPredicted: the server's despawn of an entity the
// simulation already despawned at the same tick (a predicted despawn: a
// bullet at the end of its lifetime) requests no rollback; at another
// tick it does, and the entity's history follows the server's tick.
func TestDespawnAtPredicted(t *testing.T) {
	for _, c := range []struct {
		server    tick.Tick // the server's despawn tick
		rollbacks uint64
		at4       Health // health in the history at 4 afterwards
	}{
		{server: 5, rollbacks: 0, at4: 6}, // the sim despawns e at 5, as the server
		{server: 4, rollbacks: 1, at4: -1},
	} {
		g := newRig(t, predict.Config{})
		e := g.spawn(10)
		g.extra = func(t tick.Tick) {
			if t == 5 {
				g.must(g.tl.Despawn(e))
			}
		}
		g.stepTo(7)
		g.must(g.tl.DespawnAt(e, c.server))
		g.tl.Step(g.sim)
		g.wantRollbacks(c.rollbacks)
		if g.at(e, 4) != c.at4 || g.at(e, 5) != -1 || g.hs.Has(e) || !g.tl.Despawned(e) {
			t.Fatalf("server despawn at %v: health %d at 4, %d at 5, present now %v", c.server, g.at(e, 4), g.at(e, 5), g.hs.Has(e))
		}
		g.stepTo(5 + 10 + 1) // the marker leaves the window
		if g.w.Alive(e) {
			t.Fatalf("server despawn at %v: alive one window after", c.server)
		}
	}
}

func TestErrorCorrection(t *testing.T) {
	g := newRig(t, predict.Config{}, predict.LogCorrections())
	e := g.spawn(10)
	g.stepTo(4)
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	c := g.health.Corrections()
	if len(c) != 1 || c[0] != (predict.Correction[Health]{Entity: e, Tick: 4, Before: 6, After: 98}) {
		t.Fatalf("corrections = %+v, want [{%v 4 6 98}]", c, e)
	}
	if st := g.tl.Stats(); st.Corrections != 1 || st.Types[0].Corrections != 1 {
		t.Fatalf("stats corrections %d / %d, want 1", st.Corrections, st.Types[0].Corrections)
	}
	// A confirming value records nothing.
	g.must(g.health.Authoritative(e, 3, 99))
	g.must(g.tl.Complete(3))
	g.tl.Step(g.sim)
	if c := g.health.Corrections(); len(c) != 0 {
		t.Fatalf("corrections after a confirming value: %+v", c)
	}
}

func TestSpawningInThePast(t *testing.T) {
	g := newRig(t, predict.Config{})
	g.spawn(50)
	g.stepTo(4)
	// Replication spawns e now, with a value for tick 2 and one for 3 in
	// the same receive phase: one rollback, from the oldest.
	e := g.w.Spawn()
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.health.Authoritative(e, 3, 99))
	g.must(g.tl.Complete(3))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	g.tl.Step(g.sim)
	if g.at(e, 1) != -1 || g.at(e, 2) != 100 || g.at(e, 5) != 97 {
		t.Fatalf("health %d at 1, %d at 2, %d at 5; want absent, 100, 97", g.at(e, 1), g.at(e, 2), g.at(e, 5))
	}
}

func TestRollbackOverNewSpawn(t *testing.T) {
	g := newRig(t, predict.Config{})
	e1 := g.spawn(10)
	g.stepTo(5)
	e2 := g.spawn(50) // spawned at 5
	g.stepTo(7)
	g.must(g.health.Authoritative(e1, 3, 100))
	g.must(g.tl.Complete(3))
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	if !g.w.Alive(e2) || g.now(e2) != 47 || g.at(e2, 4) != -1 || g.now(e1) != 95 {
		t.Fatalf("e2 alive %v health %d (absent at 4: %v), e1 %d; want true 47 true 95", g.w.Alive(e2), g.now(e2), g.at(e2, 4) == -1, g.now(e1))
	}
}
