package effect_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rewindgo/rewind/effect"
	"github.com/rewindgo/rewind/tick"
)

type log struct{ calls []string }

func (l *log) tracker() *effect.Tracker[string, int] {
	return effect.New(effect.Config[string, int]{
		Play:   func(t tick.Tick, k string, p int) { l.calls = append(l.calls, fmt.Sprintf("play %d %s %d", t, k, p)) },
		Cancel: func(t tick.Tick, k string, p int) { l.calls = append(l.calls, fmt.Sprintf("cancel %d %s %d", t, k, p)) },
		Confirm: func(t tick.Tick, k string, p int) {
			l.calls = append(l.calls, fmt.Sprintf("confirm %d %s %d", t, k, p))
		},
	})
}

func (l *log) want(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(l.calls, want) {
		t.Fatalf("calls %q, want %q", l.calls, want)
	}
	l.calls = nil
}

// An effect fired in a tick that a rollback re-simulates identically
// plays exactly once.
func TestRefiredEffectPlaysOnce(t *testing.T) {
	var l log
	fx := l.tracker()
	fx.Fire(5, "shot", 1)
	fx.Fire(6, "step", 2)
	l.want(t, "play 5 shot 1", "play 6 step 2")
	fx.Rewind(4)
	fx.Fire(5, "shot", 1)
	fx.Fire(6, "step", 9) // the same effect with another payload: still the same effect
	fx.Resimulated(6)
	l.want(t)
	if st := fx.Stats(); st.Played != 2 || st.Refired != 2 || st.Cancelled != 0 || st.Pending != 2 {
		t.Fatalf("stats %+v", st)
	}
	fx.Confirm(6)
	l.want(t, "confirm 5 shot 1", "confirm 6 step 2")
}

// One the rollback removes is cancelled; one that first appears during a
// re-simulation plays once, then.
func TestRollbackCancelsAndAdds(t *testing.T) {
	var l log
	fx := l.tracker()
	for tk := tick.Tick(1); tk <= 8; tk++ {
		fx.Fire(tk, "tick", int(tk))
	}
	fx.Fire(5, "hit", 50)
	fx.Fire(7, "hit", 70)
	l.calls = nil
	fx.Rewind(4) // re-simulate 4..8: tick 5's hit no longer happens, a new one at 6
	for tk := tick.Tick(4); tk <= 8; tk++ {
		fx.Fire(tk, "tick", int(tk))
		switch tk {
		case 6:
			fx.Fire(6, "hit", 60)
		case 7:
			fx.Fire(7, "hit", 70)
		}
	}
	fx.Resimulated(8)
	l.want(t, "play 6 hit 60", "cancel 5 hit 50")
	fx.Fire(9, "tick", 9)
	fx.Confirm(6)
	l.want(t, "play 9 tick 9",
		"confirm 1 tick 1", "confirm 2 tick 2", "confirm 3 tick 3", "confirm 4 tick 4",
		"confirm 5 tick 5", "confirm 6 tick 6", "confirm 6 hit 60")
	// A rollback after a confirmation keeps the confirmed ones out of it.
	fx.Rewind(7)
	fx.Resimulated(9)
	l.want(t, "cancel 7 tick 7", "cancel 7 hit 70", "cancel 8 tick 8", "cancel 9 tick 9")
	if st := fx.Stats(); st.Pending != 0 {
		t.Fatalf("pending %d after everything was confirmed or cancelled", st.Pending)
	}
}

// Effects of ticks the re-simulation has not reached yet stay: a
// rollback re-simulating 3..5 of a timeline at 7 leaves 6 and 7 to the
// Steps that simulate them next, and the order of a tick's effects is
// the order they were fired in.
func TestRewindLeavesLaterTicks(t *testing.T) {
	var l log
	fx := l.tracker()
	fx.Fire(3, "a", 0)
	fx.Fire(6, "b", 0)
	fx.Rewind(3)
	fx.Fire(3, "c", 0) // new at 3: after a, before b
	fx.Resimulated(5)
	fx.Fire(6, "b", 0) // not re-simulated in this rollback, still held: not played again
	l.want(t, "play 3 a 0", "play 6 b 0", "play 3 c 0", "cancel 3 a 0")
	fx.Confirm(10)
	l.want(t, "confirm 3 c 0", "confirm 6 b 0")
}
