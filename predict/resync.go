package predict

// Resync: replication replaced the client's replicated state (all of it,
// or some entities, or the RNG state) with the server's at tick T, and the
// Timeline continues from that state. Range faults ask the server for one.

import (
	"fmt"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// resyncState is the Timeline's last resync.
type resyncState struct {
	has  bool
	at   tick.Tick
	snap bool // at was older than the window: its values apply at Now
	// onFault is called with the tick of each range fault (OnRangeFault).
	onFault func(t tick.Tick)
}

// Resync tells the Timeline that the server's state at the end of tick t
// replaces the client's (replicate's Resync hook, installed by Attach and
// Hooks, calls it for a full resync, before the resync's values arrive). The history is reset
// at t: ticks before t are forgotten, and values, removals and despawns of
// ticks before t that arrive later are obsolete: refused (ErrObsolete) and
// counted in Stats.Obsolete, never range faults. The resync's values then
// arrive as authoritative values of t, and:
//
//   - t within the window (the usual case: the client predicts ahead of
//     the server): the next Step rolls back to t, restoring the predicted
//     state of t with the resync's values applied, and re-simulates t+1 ..
//     Now from it;
//   - t ahead of Now (a client behind the server): the values apply when
//     the Timeline simulates t; the history starts at Now;
//   - t older than the window: the values apply to the current state as a
//     snap (not counted as range faults), and the history starts at Now.
//
// Stats.Resyncs counts resyncs and LastResync is the newest t. Resync
// during Step gives ErrInStep.
func (tl *Timeline) Resync(t tick.Tick) error {
	if tl.inStep {
		return ErrInStep
	}
	low := tl.low()
	snap := false
	switch {
	case t.After(tl.now):
		tl.start = tl.now
	case t.Before(low):
		tl.start, snap = tl.now, true
	default:
		tl.start = t
	}
	if tl.hasReq && tl.req.Before(t) {
		tl.hasReq = false // a rollback to before the resync: obsolete
	}
	tl.rs.has, tl.rs.at, tl.rs.snap = true, t, snap
	tl.stats.Resyncs++
	tl.stats.LastResync = t
	if !snap {
		tl.Request(t)
	}
	return nil
}

// OnRangeFault makes the Timeline call fn with the tick of every range
// fault (a value, change or rollback request older than the window,
// counted in Stats.RangeFaults), outside or inside Step; nil stops it.
// Attach installs one that asks the server for a resync
// (replicate.Client.RequestResync).
func (tl *Timeline) OnRangeFault(fn func(t tick.Tick)) { tl.rs.onFault = fn }

// obsolete reports whether t is older than the last resync: what arrives
// for it describes a state the resync replaced.
func (tl *Timeline) obsolete(t tick.Tick) bool {
	if !tl.rs.has || !t.Before(tl.rs.at) {
		return false
	}
	tl.stats.Obsolete++
	return true
}

// fault counts a range fault at t (older than the window) and reports it
// to the OnRangeFault function, unless t is the tick of a resync applied
// as a snap (its values are older than the window by design).
func (tl *Timeline) fault(t tick.Tick) {
	if tl.resyncSnap(t) {
		return
	}
	tl.stats.RangeFaults++
	tl.stats.LastRangeFault = t
	tl.cfg.Logger.Debug("predict: change older than the window, snapped", "tick", t, "now", tl.now)
	if tl.rs.onFault != nil {
		tl.rs.onFault(t)
	}
}

// resyncSnap reports whether t is the tick of a resync applied as a snap.
func (tl *Timeline) resyncSnap(t tick.Tick) bool {
	return tl.rs.has && tl.rs.snap && t == tl.rs.at
}

// attachResync routes replicate's resyncs to tl (Resync) and tl's range
// faults to a resync request of c.
func attachResync(c *replicate.Client, tl *Timeline) {
	tl.OnRangeFault(func(t tick.Tick) {
		_ = c.RequestResync(fmt.Sprintf("range fault at tick %v", t))
	})
}

// resyncHook is the Resync client hook of Hooks: a full resync is
// Timeline.Resync. A partial or RNG-only one replaces some values only:
// they arrive as authoritative values of their tick (a spawn or insertion
// requesting a rollback to it, a differing resource found when the tick
// completes), and the rest of the history, with values of older ticks
// still to come for other entities, stays valid.
func resyncHook(tl *Timeline) func(t tick.Tick, kind replicate.ResyncKind, reason string) {
	return func(t tick.Tick, kind replicate.ResyncKind, _ string) {
		if kind == replicate.ResyncFull {
			_ = tl.Resync(t)
		}
	}
}
