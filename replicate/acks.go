package replicate

// Acks and loss: the records of mutation messages awaiting an ack, what
// an ack resolves, and the resends of what timed out.

import (
	"math/bits"
	"time"

	"github.com/rewindgo/rewind/tick"
)

const (
	ackWindow         = 1 << 16 // mutation messages whose ack state is remembered per client
	maxRecords        = 512     // mutation messages awaiting an ack, per client
	maxRecordEntities = 1 << 16 // entities of those messages, per client
	minTimeout        = 50 * time.Millisecond
	maxTimeout        = 3 * time.Second
	maxBackoff        = 4 // the timeout doubles at most 4 times
)

// sentRecord is a mutation message sent to a client and not yet retired:
// its sequence number, tick, send time, whether it was acknowledged, and
// its entities (n entries of the client's entRing from first).
type sentRecord struct {
	seq    uint32
	tick   tick.Tick
	first  int // index in entRing (absolute count)
	n      int
	acked  bool
	sentAt time.Time
}

// record starts the ack record of the packet being built.
func (s *Server) record(c *serverClient, t tick.Tick) {
	if c.recLen == len(c.recs) {
		if len(c.recs) < maxRecords {
			c.growRecords()
		} else {
			s.lose(c, &c.recs[c.recHead])
			s.pop(c)
		}
	}
	i := (c.recHead + c.recLen) % len(c.recs)
	c.recs[i] = sentRecord{seq: c.seq, tick: t, first: c.entEnd, sentAt: s.now}
	c.cur = &c.recs[i]
	c.recLen++
}

// growRecords doubles the record ring (up to maxRecords), keeping order.
func (c *serverClient) growRecords() {
	n := max(16, 2*len(c.recs))
	nr := make([]sentRecord, n)
	for k := 0; k < c.recLen; k++ {
		nr[k] = c.recs[(c.recHead+k)%len(c.recs)]
	}
	c.recs, c.recHead = nr, 0
	if c.recLen > 0 {
		c.cur = &c.recs[c.recLen-1]
	}
}

// growEntRing doubles the entity ring (up to maxRecordEntities); entries
// keep their absolute indices.
func (c *serverClient) growEntRing() {
	n := max(256, 2*len(c.entRing))
	nr := make([]uint32, n)
	for k := c.entStart; k < c.entEnd; k++ {
		nr[k&(n-1)] = c.entRing[k&(len(c.entRing)-1)]
	}
	c.entRing = nr
}

// ringFree makes room for n more entries in the client's entity ring: it
// grows the ring, or gives up the oldest records (their entities are resent)
// when the ring is at its largest. It reports false when the open record
// alone fills the ring.
func (s *Server) ringFree(c *serverClient, n int) bool {
	for c.entEnd-c.entStart+n > len(c.entRing) {
		if len(c.entRing) < maxRecordEntities {
			c.growEntRing()
			continue
		}
		if c.recLen <= 1 {
			return false
		}
		s.lose(c, &c.recs[c.recHead])
		s.pop(c)
	}
	return true
}

func (s *Server) pop(c *serverClient) {
	r := &c.recs[c.recHead]
	c.entStart = r.first + r.n
	c.recHead = (c.recHead + 1) % len(c.recs)
	c.recLen--
}

// lose handles an unacknowledged record: its entities' latest values are
// resent on the next tick.
func (s *Server) lose(c *serverClient, r *sentRecord) {
	if r.acked || r.n == 0 {
		return
	}
	// Its values now travel in later messages (resends, or newer sends of
	// the same entities): until those are acknowledged, the client may owe
	// values older than its acknowledged ticks.
	s.irregular(c, s.tick+1)
	for k := r.first; k < r.first+r.n; k++ {
		idx := c.entRing[k&(len(c.entRing)-1)]
		if int(idx) >= len(s.ents) {
			continue
		}
		ce := s.ce(c, int(idx))
		s.catchUp(c, ce, int(idx))
		if ce.flags&ceSeen != 0 && ce.sentSeq == r.seq && ce.flags&ceSpawned != 0 && !c.acked(r.seq) {
			if ce.flags&ceResend == 0 {
				ce.flags |= ceResend
				c.lost(idx)
				c.stats.Resent++
			}
		}
	}
}

// expire retires acknowledged records and resends the timed-out ones.
func (s *Server) expire(c *serverClient) {
	timeout := s.cfg.MutationTimeout
	if timeout == 0 {
		// The transport's RTT does not see queueing in front of a slow
		// link; the measured time to an ack does.
		rtt := max(c.conn.Stats().RTT, c.ackRTT)
		if rtt == 0 {
			rtt = 100 * time.Millisecond
		}
		timeout = max(rtt*3/2+2*time.Second/time.Duration(s.cfg.TickRate), minTimeout)
		// Back off while messages keep timing out (a congested path whose
		// late acks come after their records expired), so resends do not
		// keep the path saturated.
		timeout = min(timeout<<c.backoff, maxTimeout)
	}
	lost := false
	for c.recLen > 0 {
		r := &c.recs[c.recHead]
		// A message is lost when its ack does not come in time, and at the
		// latest before its tick leaves the client's whole-segment ring.
		if !r.acked && s.now.Sub(r.sentAt) < timeout && s.tick.Sub(r.tick) < wholeRing-wholeMargin {
			break
		}
		lost = lost || (!r.acked && r.n > 0)
		s.lose(c, r)
		s.pop(c)
	}
	if lost && c.backoff < maxBackoff {
		c.backoff++
	}
}

// ack marks mutation message seq received by the client. The entities of
// the message learn it lazily (resolveAck), so an ack costs O(1) whatever
// the message held.
func (s *Server) ack(c *serverClient, seq uint32) {
	if c.seq-seq > ackWindow || seq == c.seq {
		return
	}
	c.ackBits[(seq/64)%(ackWindow/64)] |= 1 << (seq % 64)
	if c.recLen == 0 {
		return
	}
	off := seq - c.recs[c.recHead].seq
	if off >= uint32(c.recLen) {
		return
	}
	r := &c.recs[(c.recHead+int(off))%len(c.recs)]
	if !c.proven {
		s.proven(c)
	}
	if !r.acked {
		if c.backoff > 0 {
			c.backoff-- // acks arrive in time again
		}
		if d := s.now.Sub(r.sentAt); d > 0 {
			if c.ackRTT == 0 {
				c.ackRTT = d
			} else {
				c.ackRTT += (d - c.ackRTT) / 8
			}
		}
	}
	r.acked = true
	if r.tick.After(c.stats.AckedTick) {
		c.stats.AckedTick = r.tick
	}
}

// acked reports whether the client acknowledged mutation message seq (false
// when seq is older than the ack window: treated as lost, so resent).
func (c *serverClient) acked(seq uint32) bool {
	return c.seq-seq <= ackWindow && c.ackBits[(seq/64)%(ackWindow/64)]&(1<<(seq%64)) != 0
}

// resolveAck moves the entity's acknowledged tick to its newest send known
// acknowledged: its last, the one before, or its pinned send.
func (c *serverClient) resolveAck(ce *clientEnt) {
	if ce.flags&ceSeen == 0 {
		return
	}
	if ce.sentTick.After(ce.ackedTick) && c.acked(ce.sentSeq) {
		ce.setAcked(ce.sentTick)
	} else if ce.flags&cePrev != 0 && ce.prevTick.After(ce.ackedTick) && c.acked(ce.prevSeq) {
		ce.setAcked(ce.prevTick)
	}
	if ce.flags&cePin != 0 {
		switch {
		case c.acked(ce.pinSeq):
			ce.setAcked(ce.pinTick)
			ce.flags &^= cePin // the next send is pinned
		case c.retired(ce.pinSeq):
			ce.flags &^= cePin // lost
		}
	}
}

// setAcked moves the entity's acknowledged tick forward to t, keeping the
// one before as ackedPrev (the second baseline of predicted deltas).
func (ce *clientEnt) setAcked(t tick.Tick) {
	if t.After(ce.ackedTick) {
		ce.ackedPrev, ce.ackedTick = ce.ackedTick, t
	}
}

// retired reports whether mutation message seq is no longer awaiting its
// ack: acknowledged, or given up as lost.
func (c *serverClient) retired(seq uint32) bool {
	if c.recLen == 0 {
		return true
	}
	return int32(seq-c.recs[c.recHead].seq) < 0
}

// resolve brings the entity's state up to date: sends in whole segments,
// then acknowledgements.
func (s *Server) resolve(c *serverClient, ce *clientEnt, idx int) {
	s.catchUp(c, ce, idx)
	c.resolveAck(ce)
}

// irregular notes that the client may owe values older than its
// acknowledged ticks until what is sent up to tick settle is acknowledged:
// it takes no whole segments until then.
func (s *Server) irregular(c *serverClient, settle tick.Tick) {
	if !c.dirty || settle.After(c.settle) {
		c.settle = settle
	}
	c.dirty = true
}

// pendingMask returns the components of entity idx that changed since the
// client acknowledged them, from the server tick at which each component
// last changed (kept per entity for all clients).
func (s *Server) pendingMask(idx int, ce *clientEnt) uint64 {
	se := &s.ents[idx]
	live := se.mask &^ se.once &^ se.held
	ticks := s.compTicks[idx*len(s.comps) : (idx+1)*len(s.comps)]
	var m uint64
	for l := live; l != 0; l &= l - 1 {
		id := bits.TrailingZeros64(l)
		if ticks[id].After(ce.ackedTick) {
			m |= 1 << uint(id)
		}
	}
	return m
}

// takeResends returns the entities found lost since the last tick and
// starts this tick's list empty (the two buffers swap).
func (a *clientAcks) takeResends() []uint32 {
	r := a.resend
	a.resend, a.resend2 = a.resend2[:0], r
	return r
}

// lost queues entity slot idx for a resend next tick.
func (a *clientAcks) lost(idx uint32) { a.resend = append(a.resend, idx) }

// ackRepeats is how many Acks messages (one per client Update that has
// one to send) repeat each acknowledgement: acks travel unreliably, so a
// lost one is made good by the next, and the server sees an
// acknowledgement lost only if all of them are (0.1% at 10% loss); it then
// resends the values, as for a lost mutation message.
const ackRepeats = 3

// ackSet is what a client acknowledges: the newest mutation message it
// took, and which of the ackSpan messages before it.
type ackSet struct {
	newest uint32
	mask   uint64 // bit i: message newest-1-i acknowledged
	n      int    // messages before newest that the window covers
	any    bool
	repeat int // Acks messages still to send
}

// add acknowledges message seq. A message more than ackSpan older than the
// newest is not acknowledged: the server counts it lost.
func (w *ackSet) add(seq uint32) {
	switch d := seq - w.newest; {
	case !w.any:
		w.newest, w.mask, w.n, w.any = seq, 0, 0, true
	case d == 0:
		return
	case d < 1<<31: // newer
		if d >= 64 {
			w.mask = 0
		} else {
			w.mask = w.mask<<d | 1<<(d-1)
		}
		w.newest, w.n = seq, min(w.n+int(min(d, ackSpan)), ackSpan)
	default: // older
		back := w.newest - seq
		if back > ackSpan {
			return
		}
		w.mask |= 1 << (back - 1)
		w.n = max(w.n, int(back))
	}
	w.repeat = ackRepeats
}
