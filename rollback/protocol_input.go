package rollback

// Inputs on the wire: sending every unacknowledged frame delta-encoded
// against the last acknowledged one, acks, and receiving a peer's frames
// into its receive ring.

import (
	"github.com/rewindgo/rewind/rollback/internal/wire"
	"github.com/rewindgo/rewind/transport"
)

// ack drops pending frames the peer has received.
func (n *netcore) ack(e *endpoint, f Frame) {
	if f <= e.lastAcked || f > e.pending.last {
		return
	}
	e.lastAcked = f
	// Keep the acked frame itself: it is the delta base of the next packet.
	e.pending.dropThrough(f - 1)
}

func (n *netcore) onInput(h handler, e *endpoint, m *wire.Message) {
	if m.DisconnectRequested {
		h.dropEndpoint(e, "the peer disconnected us")
		return
	}
	if !e.host && len(m.Status) != n.cfg.NumPlayers {
		n.malformedFrom(h, e, "status length", nil)
		return
	}
	n.ack(e, Frame(m.AckFrame))
	e.sumAcked = max(e.sumAcked, Frame(m.SumAck))
	if !e.host {
		copy(e.peerStatus, m.Status)
		e.hasStatus = true
		h.onInputMeta(e, m)
	}
	start := Frame(m.StartFrame)
	if m.NumFrames == 0 {
		return
	}
	if top := start + Frame(m.NumFrames) - 1; top > e.lastSeen {
		e.lastSeen = top
	}
	e.ackDue = true
	var base []byte
	switch {
	case start == e.recvFrom:
		// The first frame of a stream (0, or where it restarted after a
		// rejoin) has no base.
		base = nil
	case e.recv.has(start - 1):
		base = e.recv.get(start - 1)
	default:
		// No decode base (a gap, or older than we keep): wait for a resend.
		e.dropped++
		return
	}
	if start+Frame(m.NumFrames)-1 <= e.lastRecv {
		return // nothing new
	}
	if err := n.dec.Reset(m.Inputs, base, m.NumFrames, n.maxRecord()); err != nil {
		n.malformedFrom(h, e, "inputs", err)
		return
	}
	want := len(e.handles)
	if e.host {
		want = n.cfg.NumPlayers
	}
	for f := start; ; f++ {
		rec, ok, err := n.dec.Next()
		if err != nil {
			n.malformedFrom(h, e, "inputs", err)
			return
		}
		if !ok {
			return
		}
		if f <= e.lastRecv {
			continue
		}
		if f != e.lastRecv+1 {
			return
		}
		if !splitRecord(rec, want, n.cfg.MaxInputSize, nil) {
			n.malformedFrom(h, e, "input record", nil)
			return
		}
		if !h.onRecord(e, f, rec) {
			return
		}
		e.recv.push(f, rec)
		e.lastRecv = f
	}
}

// flush sends what each running endpoint is owed: pending inputs (with the
// acks), or bare acks. fill (nil for none) fills the session part of an
// Input message.
func (n *netcore) flush(fill func(*endpoint, *wire.Message)) {
	for _, e := range n.eps {
		if e.state != stateRunning || e.hold {
			continue
		}
		if e.inputDirty || e.disconnectRq {
			n.sendInput(e, fill)
		} else if e.ackDue {
			m := n.msg(wire.KindInputAck)
			m.AckFrame, m.SumAck = int32(e.lastRecv), e.takeSumAck()
			n.send(e)
		}
		e.ackDue = false
	}
}

// sendInput sends every unacknowledged frame (as many as fit one datagram),
// delta-encoded against the last acknowledged one.
func (n *netcore) sendInput(e *endpoint, fill func(*endpoint, *wire.Message)) {
	e.inputDirty = false
	first := e.lastAcked + 1
	if e.pending.empty() || first < e.pending.first {
		first = e.pending.first
	}
	count := int(e.pending.last - first + 1)
	if count < 0 {
		count = 0
	}
	if count > wire.MaxFrames {
		count = wire.MaxFrames
	}
	if e.sendLimit != NullFrame && first+Frame(count) > e.sendLimit {
		// A rejoin notice the peer has not acknowledged comes first.
		count = max(int(e.sendLimit-first), 0)
	}
	var base []byte
	if first > 0 && e.pending.has(first-1) {
		base = e.pending.get(first - 1)
	}
	for {
		n.enc.Reset(base)
		for i := 0; i < count; i++ {
			n.enc.Add(e.pending.get(first + Frame(i)))
		}
		n.rec = n.enc.AppendTo(n.rec[:0])
		n.msg(wire.KindInput)
		if fill != nil && !e.host {
			// Peers gossip every player's connection status; spectators
			// get it too (informational: their records carry the status).
			fill(e, &n.out)
		}
		n.out.SumAck = e.sumAck()
		start := first
		if count == 0 {
			start = e.pending.last + 1
			if start < 0 {
				start = 0
			}
		}
		n.out.StartFrame = int32(start)
		n.out.AckFrame = int32(e.lastRecv)
		n.out.DisconnectRequested = e.disconnectRq
		n.out.NumFrames = count
		n.out.Inputs = n.rec
		// Upper bound of the encoded size: header, compressed inputs, a
		// status (at most 8 bytes) per player, a report (frame uvarint and
		// 8-byte checksum, at most 13 bytes) per report, 32 for the rest.
		if count <= 1 || 4+len(n.rec)+8*len(n.out.Status)+13*len(n.out.Reports)+32 <= transport.MaxPacketSize {
			break
		}
		count /= 2
	}
	n.send(e)
	e.lastInput = n.now
	e.sumAckDue = false
}
