package predict

import (
	"github.com/rewindgo/rewind/effect"
	"github.com/rewindgo/rewind/tick"
)

// AddEffects makes the Timeline drive e, usually a package effect
// Tracker, which keeps sounds, particles and hit markers fired by the
// simulation from playing twice in a re-simulation and cancels those a
// rollback removes. The Timeline calls e.Rewind(from) before a rollback
// re-simulates the ticks from on, e.Resimulated(now) after it, and
// e.Confirm(t) once the ticks up to t can no longer be rolled back: t is
// Confirmed (its server values arrived and matched) or older than the
// window. The simulation fires effects with the tick it simulates
// (Timeline.Tick).
func (tl *Timeline) AddEffects(e effect.Follower) { tl.fx.list = append(tl.fx.list, e) }

// effects are a Timeline's effect trackers and the newest tick confirmed
// to them.
type effects struct {
	list      []effect.Follower
	confirmed tick.Tick
	any       bool // confirmed is set
}

func (fx *effects) rewind(from tick.Tick) {
	for _, e := range fx.list {
		e.Rewind(from)
	}
}

func (fx *effects) resimulated(to tick.Tick) {
	for _, e := range fx.list {
		e.Resimulated(to)
	}
}

// confirm confirms the ticks that became final: those before the window,
// and the run of Confirmed ticks after the last confirmed one.
func (fx *effects) confirm(tl *Timeline) {
	if len(fx.list) == 0 {
		return
	}
	to := tl.low()
	if fx.any && to.Before(fx.confirmed) {
		to = fx.confirmed
	}
	for tl.Confirmed(to + 1) {
		to++
	}
	if fx.any && !to.After(fx.confirmed) {
		return
	}
	fx.confirmed, fx.any = to, true
	for _, e := range fx.list {
		e.Confirm(to)
	}
}
