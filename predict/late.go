package predict

// Late authoritative values: those older than the window. A client whose
// replication was held up (a reliable update retransmitted, the mutations
// that need it held until it arrives) or cut off receives the held values
// of many ticks in one batch, each entity's oldest first. So an
// authoritative value or removal older than the window waits until the
// next Step:
//
//   - a newer late value or removal of the same entity and type arriving
//     before that Step replaces it: it is dropped and counted in
//     Stats.Superseded (and so is a late one arriving after a newer late
//     one);
//   - a newer one within the window (often the newest of the batch)
//     supersedes it too (counted in Stats.Superseded, not a range fault,
//     no resync asked: a batch held up under loss is common, and a resync
//     each time would cost more than it repairs), but it still holds from
//     the oldest tick held until that newer one, so it is kept;
//   - at the Step, the values left apply at the oldest tick the history
//     holds (low), before low's own values and changes (newer than
//     them), as changes from outside the simulation, and the Step rolls
//     back to low: every tick the history holds then has them, as the
//     server's state had them since their tick (a bullet spawned during
//     a cut has its velocity at every tick held, not only from Now).
//     Those no newer one superseded are range faults (Stats.RangeFaults,
//     OnRangeFault: a resync is asked for, since what the server did not
//     send while the client was cut off, its values unchanged since the
//     last tick it knew, may differ from the prediction), and the ticks
//     from low on are not Confirmed until the resync arrives.
//
// Despawns, local changes (Insert, Remove) and resource values older than
// the window are range faults placed at low the same way when they arrive
// (they are not superseded; a resource value gives way to one of low
// itself), and the next Step rolls back to low. The values of a resync
// older than the window apply at Now (the history starts there).

import (
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// lateOp is an authoritative change older than the window, waiting for the
// next Step.
type lateOp[T any] struct {
	t     tick.Tick
	o     op[T]
	newer bool // a newer change within the window arrived: not a range fault
}

// supersede handles what a newer authoritative change of e at t makes
// obsolete. A late change (old) of e replaces the waiting late change
// older than it, or, when it is older than the waiting one, is dropped
// (it reports true); a change within the window marks the waiting one as
// superseded, which still applies from the oldest tick held.
func (c *Component[T]) supersede(t tick.Tick, e ecs.Entity, old bool) bool {
	for i := range c.late {
		l := &c.late[i]
		if l.o.e != e {
			continue
		}
		switch {
		case old && t.Before(l.t):
			c.tl.stats.Superseded++
			return true
		case old:
			c.tl.stats.Superseded++
			c.late = slices.Delete(c.late, i, i+1) // clears the freed slot
		case !l.newer:
			c.tl.stats.Superseded++
			l.newer = true
		}
		return false
	}
	return false
}

// flushLate applies the late changes at the oldest tick held, before that
// tick's own changes, and asks the Step to roll back there; those no newer
// change superseded are range faults.
func (c *Component[T]) flushLate() {
	if len(c.late) == 0 {
		return
	}
	tl := c.tl
	at := tl.low()
	b := &c.patches[tl.pslot(at)]
	if !b.used || b.t != at {
		b.t, b.used, b.ops = at, true, b.ops[:0]
	}
	n := len(b.ops)
	for i := range c.late {
		l := &c.late[i]
		if tl.rs.has && l.t.Before(tl.rs.at) { // a resync replaced it since
			tl.stats.Obsolete++
			continue
		}
		if !l.newer {
			tl.fault(l.t)
		}
		o := l.o
		o.auth = false
		b.ops = append(b.ops, o)
		if at == tl.now {
			c.do(&o)
		}
	}
	first(b.ops, n)
	if at != tl.now {
		tl.Request(at)
	}
	clear(c.late)
	c.late = c.late[:0]
}

// first moves ops[n:] before ops[:n], keeping the order of both parts:
// changes older than the window go before the tick's own.
func first[T any](ops []T, n int) {
	if n == 0 || n == len(ops) {
		return
	}
	slices.Reverse(ops[:n])
	slices.Reverse(ops[n:])
	slices.Reverse(ops)
}
