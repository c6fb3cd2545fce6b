package replicate

// Mutation messages: packing each client's pending values into
// datagrams, and sending them.

import (
	"math"
	"math/bits"

	"github.com/rewindgo/rewind/internal/bin"

	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// maxMutationPacket is the largest mutation message (less when a conn's
// datagrams are smaller): one datagram.
const maxMutationPacket = transport.MaxPacketSize

// maxPacketsPerTick is the most mutation messages a client gets per tick
// (their index and count are one byte each).
const maxPacketsPerTick = 255

// startMutations begins the client's mutation messages of tick t with the
// entities it owes from earlier ticks: timed-out sends (resent with their
// latest values) and entities held back by their priority.
func (s *Server) startMutations(c *serverClient, t tick.Tick) {
	c.nPkts, c.spent, c.open = 0, 0, false
	c.maxPkt = min(maxMutationPacket, c.conn.MaxUnreliableSize()) - mutationCountGrowth
	resend, deferred := c.takeResends(), c.takeDeferred()
	for _, idx := range resend {
		i := int(idx)
		if i < len(s.ents) {
			ce := s.ce(c, i)
			ce.flags &^= ceResend
			s.visit(c, ce, i, t, true)
		}
	}
	for _, idx := range deferred {
		i := int(idx)
		if i < len(s.ents) {
			ce := s.ce(c, i)
			ce.flags &^= ceDeferred
			s.visit(c, ce, i, t, false)
		}
	}
}

// visit adds entity idx's pending values to the client's mutation messages,
// unless it has nothing pending, was already sent this tick, or its priority
// defers it (forced: a resend, not subject to priority).
func (s *Server) visit(c *serverClient, ce *clientEnt, i int, t tick.Tick, forced bool) {
	if !forced && ce.flags&ceDeferred != 0 {
		return // already considered (and deferred again) this tick
	}
	se := &s.ents[i]
	if !se.listed || ce.gen != se.e.Generation() || ce.flags&ceSpawned == 0 {
		return
	}
	s.resolve(c, ce, i)
	if ce.sentTick == t || ce.ackedTick == t {
		return
	}
	m := s.pendingMask(i, ce)
	if m == 0 {
		return
	}
	if p := s.priority(c, se); !forced && p < 1 {
		ce.acc += p
		if ce.acc < 1-accSlack {
			if ce.flags&ceDeferred == 0 {
				ce.flags |= ceDeferred
				c.deferEnt(uint32(i))
			}
			return
		}
		ce.acc = 0
	}
	// A resend is absolute: its loss may be the client's missing baseline.
	if s.writeBlock(c, i, m, t, c.maxPkt, ce.ackedTick, ce.ackedPrev, !forced) {
		c.sent(ce, t)
		return
	}
	s.irregular(c, t+1) // no more messages this tick: it goes next tick
	if ce.flags&ceDeferred == 0 {
		ce.flags |= ceDeferred
		c.deferEnt(uint32(i))
	}
}

// accSlack absorbs the rounding of a float32 accumulator: twelve
// additions of 1/12 make 0.99999994, and the twelfth tick must send.
const accSlack = 1e-5

// sharedBlocks reports whether this tick's changes may go out in blocks
// and segments shared by every client: not when each client has its own
// priorities (ServerConfig.Priority) or byte budget (BudgetPerTick).
func (s *Server) sharedBlocks() bool { return s.cfg.Priority == nil && s.cfg.BudgetPerTick <= 0 }

// priority is entity se's send priority for client c: the entity's, times
// ServerConfig.Priority's for the client.
func (s *Server) priority(c *serverClient, se *srvEnt) float32 {
	p := se.prio
	if s.cfg.Priority != nil {
		if f := s.cfg.Priority(c.id, se.e); f > 0 && !math.IsNaN(float64(f)) {
			p *= f
		}
	}
	return p
}

// startPacket closes the client's open mutation message (if any) and
// opens a new one of tick t: its header, then the bit-packed entity blocks
// that writeBlock, takeWhole and fillSegment add (c.bw, c.prev).
func (s *Server) startPacket(c *serverClient, t tick.Tick) {
	c.closePacket()
	if c.nPkts == len(c.pkts) {
		c.pkts = append(c.pkts, make([]byte, 0, maxMutationPacket))
	}
	// Index and count are patched in finishPackets.
	c.bw.Reset(appendMutationHeader(c.pkts[c.nPkts][:0], t, uint32(t.Sub(c.entUpdate)), c.seq))
	c.prev, c.open = -1, true
	c.nPkts++
	s.record(c, t)
	c.ackBits[(c.seq/64)%(ackWindow/64)] &^= 1 << (c.seq % 64)
	c.seq++
}

// closePacket ends the open mutation message: the bit that ends its
// blocks, and padding to a byte (nothing after a header alone).
func (c *serverClient) closePacket() {
	if !c.open {
		return
	}
	if c.prev >= 0 { // a message without blocks ends with its header
		c.bw.WriteBool(false)
	}
	c.pkts[c.nPkts-1] = c.bw.Finish()
	c.open = false
}

// packetBytes is the size the open message would have with n more bits.
func (c *serverClient) packetBytes(n int) int { return (c.bw.Len() + n + 1 + 7) / 8 }

// headBits is the size of an entity block's head after the block of
// entity slot prev (-1: the first of its message): the bit that says a
// block follows, and the slot's zig-zagged distance from the next slot
// in exponential-Golomb code of order 2.
func headBits(prev int64, idx uint32) int {
	x := zigzag64(int64(idx)-prev-1)>>2 + 1
	return 1 + 2*bits.Len64(x) - 1 + 2
}

// writeHead writes an entity block's head (headBits).
func writeHead(w *bin.BitWriter, prev int64, idx uint32) {
	v := zigzag64(int64(idx) - prev - 1)
	if code, n, ok := bin.ExpGolombCode(v, 2); ok && n < 64 {
		w.WriteBits(1|code<<1, n+1) // a block follows, then its slot
		return
	}
	w.WriteBool(true)
	w.WriteExpGolomb(v, 2)
}

func zigzag64(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// appendBlock adds entity slot idx's block, its head and the body bits
// (nb of them), to the open message.
func (c *serverClient) appendBlock(idx uint32, body []byte, nb int) {
	writeHead(&c.bw, c.prev, idx)
	c.bw.WriteBitsFrom(body, nb)
	c.prev = int64(idx)
}

// writeBlock writes entity idx's pending components into the current
// packet (deltas from their values at base, or from their extrapolation
// from base2 through base, if useBase and the journal has them), starting a new packet when it does not fit. It reports false when
// no more packets may be sent this tick.
func (s *Server) writeBlock(c *serverClient, idx int, m uint64, t tick.Tick, maxPkt int, base, base2 tick.Tick, useBase bool) bool {
	if c.nPkts == 0 {
		s.startPacket(c, t)
	}
	s.ringFree(c, 1)
	body, nb := s.block(idx, m, base, base2, useBase)
	cost := headBits(c.prev, uint32(idx)) + nb
	if b := s.cfg.BudgetPerTick; b > 0 && c.spent > 0 && c.spent+cost > 8*b {
		return false // over the budget: it waits for the next tick
	}
	if c.packetBytes(cost) > maxPkt && c.cur.n > 0 {
		// Does not fit: start a new packet.
		if c.nPkts == maxPacketsPerTick {
			return false
		}
		s.startPacket(c, t)
		cost = headBits(c.prev, uint32(idx)) + nb
	}
	c.appendBlock(uint32(idx), body, nb)
	c.spent += cost
	c.entRing[c.entEnd&(len(c.entRing)-1)] = uint32(idx)
	c.entEnd++
	c.cur.n++
	return true
}

// finishPackets patches index and count into the tick's packets and sends
// them: unreliable, or reliable-unordered for a single entity too large for
// a datagram.
func (s *Server) finishPackets(c *serverClient) {
	c.closePacket()
	maxU := c.conn.MaxUnreliableSize()
	for i := 0; i < c.nPkts; i++ {
		b := c.pkts[i]
		b = patchMutationHeader(b, i, c.nPkts)
		c.pkts[i] = b
		ch := transport.Unreliable
		if len(b) > maxU {
			ch = transport.ReliableUnordered
		}
		s.sendTo(c, ch, b)
		c.stats.MutationMessages++
	}
}

// finishClient sends the client's mutation messages of the tick.
func (s *Server) finishClient(c *serverClient, t tick.Tick) {
	if c.nPkts == 0 && (!s.cfg.NoTickTracking || !c.proven) {
		// (A joining client gets one even without tick tracking: its ack
		// proves the first update arrived.)
		s.startPacket(c, t)
	}
	s.finishPackets(c)
	if c.gone {
		return
	}
	c.rates(s.now)
	c.showNewSpawns()
}

// sent records in the entity's state that it went out at tick t in the
// message being built.
func (c *serverClient) sent(ce *clientEnt, t tick.Tick) {
	c.sentIn(ce, t, c.seq-1)
}

// sentIn records in the entity's state that it went out at tick t in
// message seq; the previous send stays known (its late ack still counts).
func (c *serverClient) sentIn(ce *clientEnt, t tick.Tick, seq uint32) {
	if ce.flags&cePin == 0 {
		ce.pinTick, ce.pinSeq = t, seq
		ce.flags |= cePin
	}
	if ce.flags&ceSeen != 0 {
		ce.prevTick, ce.prevSeq = ce.sentTick, ce.sentSeq
		ce.flags |= cePrev
	}
	ce.sentTick, ce.sentSeq = t, seq
	ce.flags |= ceSeen
}
