package predict_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/effect"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// Effects through a Timeline's rollbacks: the rig's entity loses 1 health
// a tick and fires a "low" effect at each tick its health is a multiple
// of 5. A server value for a past tick that agrees re-simulates nothing;
// one that disagrees re-simulates, and the effects follow the new
// history: those fired again are not played twice, those no longer fired
// are cancelled, new ones play once. Effects are confirmed when their
// tick is Confirmed or leaves the window.
func TestTimelineDrivesEffects(t *testing.T) {
	g := newRig(t, predict.Config{})
	var calls []string
	fx := effect.New(effect.Config[ecs.Entity, Health]{
		Play:    func(t tick.Tick, _ ecs.Entity, h Health) { calls = append(calls, fmt.Sprintf("play %d %d", t, h)) },
		Cancel:  func(t tick.Tick, _ ecs.Entity, h Health) { calls = append(calls, fmt.Sprintf("cancel %d %d", t, h)) },
		Confirm: func(t tick.Tick, _ ecs.Entity, h Health) { calls = append(calls, fmt.Sprintf("confirm %d %d", t, h)) },
	})
	g.tl.AddEffects(fx)
	e := g.spawn(22)
	other := g.spawn(100) // fires nothing: its corrections roll back without changing e
	g.extra = func(t tick.Tick) {
		if h, ok := g.hs.Get(e); ok && h%5 == 0 {
			fx.Fire(t, e, h)
		}
	}
	want := func(w ...string) {
		t.Helper()
		if !slices.Equal(calls, w) {
			t.Fatalf("calls %q, want %q", calls, w)
		}
		calls = nil
	}
	g.stepTo(8) // health 22 - 8 = 14 at tick 8; 20 at tick 2, 15 at tick 7
	want("play 2 20", "play 7 15")

	// The server agrees about tick 3 (health 19): no rollback, no calls
	// but the confirmation of ticks up to 3.
	g.must(g.health.Authoritative(e, 3, 19))
	for tk := tick.Tick(1); tk <= 3; tk++ { // the server's ticks complete in order
		g.must(g.tl.Complete(tk))
	}
	g.tl.Step(g.sim)
	g.wantRollbacks(0)
	want("confirm 2 20")

	// The server says tick 4 had health 17 (not 18): a rollback
	// re-simulates 5..9, health 16, 15 at tick 6 (not 7), ..., 12 at 9.
	g.must(g.health.Authoritative(e, 4, 17))
	g.must(g.tl.Complete(4))
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	want("play 6 15", "cancel 7 15")

	// A rollback that re-simulates the same history of e (a correction of
	// the other entity at tick 5) plays nothing again: tick 6's effect is
	// fired again, not played. The new tick 11 plays its own.
	g.must(g.health.Authoritative(other, 5, 50))
	g.must(g.health.Authoritative(e, 5, 16))
	g.must(g.tl.Complete(5))
	g.tl.Step(g.sim)
	g.wantRollbacks(2)
	want("play 11 10")
	if st := fx.Stats(); st.Played != 4 || st.Cancelled != 1 || st.Refired == 0 {
		t.Fatalf("effect stats %+v", st)
	}
	// Ticks leave the window: every effect still held is confirmed.
	g.stepTo(30)
	want("play 16 5", "confirm 6 15", "play 21 0", "confirm 11 10", "play 26 -5", "confirm 16 5")
}
