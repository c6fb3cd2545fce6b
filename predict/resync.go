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
	// unsettled: a range fault since the last resync; the ticks from
	// unsettledFrom (the oldest tick held at the first one) on are not
	// Confirmed until a resync replaces them.
	unsettled     bool
	unsettledFrom tick.Tick
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
// Entities despawned before the tick the history now starts at (despawn
// markers, despawns received for earlier ticks) leave the World at once:
// no rollback goes back far enough to revive them, and replicate, which
// no longer maps them, would not despawn them. A range fault's ticks are
// Confirmed again from t on (see Confirmed).
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
	tl.despawnBefore(tl.start)
	tl.rs.has, tl.rs.at, tl.rs.snap = true, t, snap
	tl.rs.unsettled = false
	tl.stats.Resyncs++
	tl.stats.LastResync = t
	if !snap {
		tl.Request(t)
	}
	return nil
}

// Confirmed reports whether the history at tick t is final: the server's
// state at t, as far as replication can tell the client. That is: t is
// held and older than Now, complete (Complete), a Step ran since (it
// compared t's authoritative values and did the rollback they asked for,
// and refused the predicted spawns the server did not make), nothing
// received since asks to rewrite t (values of t, a rollback request at or
// before t, late values), t is not before the last resync's tick (a
// client behind the server holds a few such ticks: the resync replaced
// their state), and t is not after a range fault that no resync has
// answered yet.
//
// After a range fault (a network cut or a stall longer than the window:
// values older than the window, see Stats.RangeFaults), the ticks from the
// oldest one the history held at the fault on hold every value, removal
// and despawn the server sent (those older than the window applied from
// that oldest tick, see Component.Authoritative), but a predicted value
// the server had no reason to send (unchanged on the server since before
// the cut, changed by the client's prediction meanwhile) may still
// differ: those ticks are not Confirmed until a full resync (Resync), which
// the range fault asked for (OnRangeFault), replaces the state; the ticks
// from the resync's tick on are Confirmed once complete and stepped.
// A checksum report of such a tick is not sent (Stats.ChecksumsDropped).
//
// A held-up batch whose late values all have a newer one inside the
// window is not a range fault (late.go): its ticks stay Confirmed,
// although the same kind of difference is possible there (a value the
// client mispredicted during the hold-up and the server never sent
// since); checksum reports with ResyncOnDesync are what catches it.
//
// Nor is a tick Confirmed while the server values of a complete tick at
// or before it wait for a Step to check them (HoldRollbacks: an
// overloaded ClientFrame holds rollbacks for a few frames).
//
// A test or a checker compares the history with the server's state at
// the Confirmed ticks; Confirmed never allocates.
func (tl *Timeline) Confirmed(t tick.Tick) bool {
	if !t.Before(tl.now) || t.Before(tl.low()) || tl.lateN > 0 || tl.unsettledAt(t) || (tl.rs.has && t.Before(tl.rs.at)) {
		return false
	}
	if tl.hasReq && !tl.req.After(t) {
		return false
	}
	// A complete tick at or before t whose server values no Step has
	// checked yet (rollbacks held, HoldRollbacks) may still roll t back.
	for u := tl.low(); u.Before(t); u++ {
		if in := tl.peek(u); in != nil && in.auth && in.complete && !in.checked {
			return false
		}
	}
	in := tl.peek(t)
	return in != nil && in.complete && in.stepped && (!in.auth || in.checked)
}

// unsettledAt reports whether t follows a range fault no resync answered.
func (tl *Timeline) unsettledAt(t tick.Tick) bool {
	return tl.rs.unsettled && !t.Before(tl.rs.unsettledFrom)
}

// despawnBefore despawns from the World the entities despawned before
// tick t (despawn markers, and the despawns received for those ticks, a
// rollback to them still to come): no rollback goes before t any more, so
// none can revive them. A full resync calls it with its tick: the
// rollback to it drops later markers, and would otherwise bring back an
// entity despawned before it only in a tick it then no longer replays
// (replicate no longer maps such an entity, so the resync cannot).
func (tl *Timeline) despawnBefore(t tick.Tick) {
	tl.despawnMarked(t)
	for i := range tl.ticks {
		in := &tl.ticks[i]
		if !in.used || !in.t.Before(t) {
			continue
		}
		for _, e := range in.despawns {
			if tl.w.Alive(e) {
				_ = tl.w.Despawn(e)
			}
		}
		in.despawns = in.despawns[:0]
	}
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
	if !tl.rs.unsettled {
		tl.rs.unsettled, tl.rs.unsettledFrom = true, tl.low()
	}
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
