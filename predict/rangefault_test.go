package predict_test

import (
	"errors"
	"testing"

	"github.com/rewindgo/rewind/predict"
)

// Values older than the window are range faults at the next Step (a
// newer value of the same entity and type would supersede them; see
// TestLateValueSuperseded): applied at the oldest tick held, which the
// Step rolls back to, so every tick held has them.
func TestRangeFault(t *testing.T) {
	g := newRig(t, predict.Config{Window: 4})
	e := g.spawn(10)
	g.stepTo(10)
	g.must(g.health.Authoritative(e, 5, 100))
	if st := g.tl.Stats(); st.RangeFaults != 0 || g.now(e) != 0 {
		t.Fatalf("before the Step: range faults %d, health %d; want 0, 0", st.RangeFaults, g.now(e))
	}
	g.tl.Step(g.sim) // 100 at 6 (the oldest tick held), re-simulates 7 .. 10, simulates 11
	st := g.tl.Stats()
	if st.RangeFaults != 1 || st.LastRangeFault != 5 || st.Superseded != 0 || st.Rollbacks != 1 || g.now(e) != 95 {
		t.Fatalf("range faults %d (last %v), superseded %d, rollbacks %d, health %d; want 1, 5, 0, 1, 95", st.RangeFaults, st.LastRangeFault, st.Superseded, st.Rollbacks, g.now(e))
	}
	if g.tl.Oldest() != 7 || g.at(e, 7) != 99 || g.at(e, 10) != 96 {
		t.Fatalf("oldest tick held %v, history at 7, 10: %d %d; want 7, 99 96", g.tl.Oldest(), g.at(e, 7), g.at(e, 10))
	}
	if err := g.health.Authoritative(e, 16, 1); !errors.Is(err, predict.ErrTooFarAhead) {
		t.Fatalf("value 5 ticks ahead with window 4: %v, want ErrTooFarAhead", err)
	}
	// A value for a tick not simulated yet applies when it is.
	g.must(g.health.Authoritative(e, 12, 50))
	g.must(g.tl.Complete(12))
	g.stepTo(12)
	if g.now(e) != 50 {
		t.Fatalf("health at 12 = %d, want 50", g.now(e))
	}
}

// A value older than the window is a change at the oldest tick held: a
// later rollback to a tick after it restores it rather than losing it.
func TestRangeFaultSurvivesLaterRollback(t *testing.T) {
	g := newRig(t, predict.Config{Window: 4})
	a, b := g.spawn(10), g.spawn(20)
	g.stepTo(10)
	g.must(g.health.Authoritative(a, 2, 100)) // 100 at 6
	g.stepTo(12)
	g.must(g.health.Authoritative(b, 9, 0))
	g.must(g.tl.Complete(9))
	g.tl.Step(g.sim) // rolls back to 9, re-simulates 10..12
	g.wantRollbacks(2)
	if g.now(a) != 93 || g.now(b) != -4 {
		t.Fatalf("health %d %d, want 93 -4", g.now(a), g.now(b))
	}
}
