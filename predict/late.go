package predict

// Late authoritative values: those older than the window. A client whose
// replication was held up (a reliable update retransmitted, the mutations
// that need it held until it arrives) receives the held values of many
// ticks in one batch, each entity's oldest first. Each value older than
// the window used to be a range fault, a snap of the current state, and a
// resync request, although the newest value of the batch for the same
// entity and type, often inside the window, makes it obsolete. So an
// authoritative value or removal older than the window waits until the
// next Step:
//
//   - a newer authoritative value or removal of the same entity and type
//     arriving before that Step supersedes it: it is dropped and counted
//     in Stats.Superseded (and so is a late one arriving after a newer
//     late one);
//   - at the Step, the values left are range faults as before: applied as
//     a snap at Now (the Now they arrived at: nothing simulates in
//     between) and counted in Stats.RangeFaults.
//
// Only authoritative changes of components wait; local changes (Insert,
// Remove), despawns, resources and the values of a resync applied as a
// snap are handled at once, as before.

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// lateOp is an authoritative change older than the window, waiting for the
// next Step.
type lateOp[T any] struct {
	t tick.Tick
	o op[T]
}

// supersede drops what a newer authoritative change of e makes obsolete:
// the late change of e older than t it replaces, or, when this change at t
// is itself late (old) and e has a newer one waiting, this change, for
// which it reports true.
func (c *Component[T]) supersede(t tick.Tick, e ecs.Entity, old bool) bool {
	for i := range c.late {
		l := &c.late[i]
		if l.o.e != e {
			continue
		}
		if old && t.Before(l.t) {
			c.tl.stats.Superseded++
			return true
		}
		c.tl.stats.Superseded++
		c.late = append(c.late[:i], c.late[i+1:]...)
		return false
	}
	return false
}

// flushLate applies the late changes no newer one superseded, in arrival
// order, as snaps at Now: range faults.
func (c *Component[T]) flushLate() {
	for i := range c.late {
		l := &c.late[i]
		if c.tl.rs.has && l.t.Before(c.tl.rs.at) { // a resync replaced it since
			c.tl.stats.Obsolete++
			continue
		}
		c.tl.fault(l.t)
		o := l.o
		o.auth = false
		now := c.tl.now
		c.do(&o)
		b := &c.patches[c.tl.pslot(now)]
		if !b.used || b.t != now {
			b.t, b.used, b.ops = now, true, b.ops[:0]
		}
		b.ops = append(b.ops, o)
		c.tl.noted(now, wNow, false)
	}
	clear(c.late)
	c.late = c.late[:0]
}
