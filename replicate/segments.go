package replicate

// Shared segments: this tick's changed entities laid out once in
// datagram-sized segments, taken whole by clients that are up to date,
// entity by entity by the others.

import (
	"math/bits"

	"github.com/rewindgo/rewind/tick"
)

const (
	// wholeRing is the number of ticks whose whole-segment sends a client
	// remembers; mutation messages older than wholeRing-wholeMargin ticks
	// are treated as lost, so every live message's tick is remembered.
	wholeRing   = 256
	wholeMargin = 8
)

// segmenter holds this tick's changed entities, sorted into those laid
// out in shared segments and the rest. Invariants: segmentChanged lays
// out shared, unshared and segs afresh each tick (segs cover shared in
// order, each fitting every active client's messages); raise is the only
// writer of raised and raiseSettle, and wholeAllowed the only reader.
type segmenter struct {
	shared   []uint32 // changed entities in this tick's segments
	unshared []uint32 // changed entities every client visits
	segs     []segment
	noWhole  bool // no whole segments (tests compare both paths)
	// raised: an entity's priority was raised to 1 or more; what it held
	// back goes out at raiseSettle.
	raised      bool
	raiseSettle tick.Tick
	// sharedBase is the baseline of this tick's shared blocks
	// (hasSharedBase: they are deltas; chooseSharedBase), sharedBase2
	// the older one they may extrapolate from (equal: none).
	sharedBase    tick.Tick
	sharedBase2   tick.Tick
	hasSharedBase bool
}

// raise notes that an entity's priority rose to 1 or more: the values it
// held back go out at tick settle, and no client takes whole segments
// until it acknowledged that tick.
func (sg *segmenter) raise(settle tick.Tick) { sg.raised, sg.raiseSettle = true, settle }

// wholeAllowed reports whether a client that acknowledged everything up
// to acked may take whole segments.
func (sg *segmenter) wholeAllowed(acked tick.Tick) bool {
	return !sg.noWhole && !(sg.raised && sg.raiseSettle.After(acked))
}

// segment is a run of n consecutive entities of this tick's shared list
// (from first) whose blocks, laid out as in a message of their own, take
// bits bits of segBuf from byte off, and fit one mutation message; last
// is the slot of its last entity. A client that takes all of them gets
// the segment's bits in one copy.
type segment struct {
	first, n int
	off      uint32
	bits     int
	last     int64
	// others is the latest change tick of the entities' other live
	// components (hasOthers: there is one).
	hasOthers bool
	others    tick.Tick
}

// clientGroup is the number of clients whose states mutateChanged walks
// together.
const clientGroup = 8

// segmentChanged sorts this tick's changed entities into shared ones
// (listed, priority at least 1, no spawn or structural change this tick)
// and the rest (unshared: every client visits them). It encodes the shared
// block of each shared entity (the components that changed this tick),
// cuts the blocks into segments that fit a mutation message of any active
// client, and notes each entity's segment in its history.
func (s *Server) segmentChanged() {
	s.segs, s.shared, s.unshared = s.segs[:0], s.shared[:0], s.unshared[:0]
	s.chooseSharedBase(s.tick)
	limit := maxMutationPacket
	for _, c := range s.order {
		if c.active {
			limit = min(limit, c.maxPkt)
		}
	}
	limit -= mutateHeaderMax
	// Segments are laid out in segBuf as the bit-packed blocks of a
	// message (heads with the distances between slots, then bodies),
	// each starting on a byte.
	sw := &s.segW
	sw.Reset(s.segBuf[:0])
	seg := segment{last: -1}
	for _, idx := range s.changedNow {
		i := int(idx)
		se := &s.ents[i]
		live := se.mask &^ se.once &^ se.held
		ticks := s.compTicks[i*len(s.comps) : (i+1)*len(s.comps)]
		var m0 uint64
		se.others, se.hasOthers = 0, false
		for l := live; l != 0; l &= l - 1 {
			id := bits.TrailingZeros64(l)
			switch ct := ticks[id]; {
			case ct == s.tick:
				m0 |= 1 << uint(id)
			case !se.hasOthers || ct.After(se.others):
				se.others, se.hasOthers = ct, true
			}
		}
		if !se.listed || se.prio < 1 || m0 == 0 || se.structAt == s.tick || !s.sharedBlocks() {
			s.unshared = append(s.unshared, idx)
			continue
		}
		off := len(s.blockBuf)
		var nb int
		s.blockBuf, nb = s.appendBody(s.blockBuf, i, m0, s.sharedBase, s.sharedBase2, s.hasSharedBase)
		se.shOff, se.shLen, se.shBits = uint32(off), uint32(len(s.blockBuf)-off), uint32(nb)
		// Visits later this tick that need the same block reuse it.
		se.blkStamp, se.blkMask, se.blkOff, se.blkLen, se.blkBits = s.cacheStamp, m0, se.shOff, se.shLen, se.shBits
		se.blkBase, se.blkBase2, se.blkDelta = s.sharedBase, s.sharedBase2, s.hasSharedBase
		if seg.n > 0 && (seg.bits+headBits(seg.last, idx)+nb+1+7)/8 > limit {
			s.segs = append(s.segs, seg)
			seg = segment{first: len(s.shared), last: -1}
		}
		if seg.n == 0 {
			seg.off = uint32(len(sw.Finish()))
		}
		h := sw.Len()
		writeHead(sw, seg.last, idx)
		sw.WriteBitsFrom(s.blockBuf[se.shOff:], nb)
		seg.bits += sw.Len() - h
		seg.last = int64(idx)
		se.seg = int32(len(s.segs))
		se.hist[1], se.hist[0] = se.hist[0], histEntry{tick: s.tick, seg: se.seg + 1}
		s.shared = append(s.shared, idx)
		seg.n++
		if se.hasOthers && (!seg.hasOthers || se.others.After(seg.others)) {
			seg.others, seg.hasOthers = se.others, true
		}
	}
	if seg.n > 0 {
		s.segs = append(s.segs, seg)
	}
	s.segBuf = sw.Finish()
}

// mutateChanged adds the entities that changed this tick to every client's
// mutation messages. A client that is up to date takes whole segments of
// the shared entities:
// each is one message, filled with one copy, and the client's per-entity
// states are not touched (they learn the send later, from the entities'
// histories: catchUp). For the other segments it runs entity by entity over
// the clients' states of that entity, which lie side by side in memory: a
// client that owes exactly the components that changed this tick takes the
// entity's shared block into the message of the entity's segment; any other
// case (other values pending, priority below 1, hidden, deferred) is
// visited after the segments, like the entities owed from earlier ticks.
func (s *Server) mutateChanged(t tick.Tick) {
	s.segmentChanged()
	// Clients go in groups whose per-client state stays in cache over all
	// the changed entities; within a group, entity by entity.
	for _, g := range s.groups {
		w, slots := g.width, g.members
		for _, c := range slots {
			if c.active {
				s.takeWhole(c, t)
			}
		}
		for j := range s.segs {
			sg := &s.segs[j]
			need := false
			for _, c := range slots {
				need = need || c.active && !c.tookWhole(t, j)
			}
			if !need {
				continue
			}
			for _, idx := range s.shared[sg.first : sg.first+sg.n] {
				i := int(idx)
				se := &s.ents[i]
				row := g.tab[i*w : i*w+w]
				gen := se.e.Generation()
				for k, c := range slots {
					if !c.active || c.tookWhole(t, j) {
						continue
					}
					if !s.take(c, &row[k], se, idx, gen, t) {
						c.slow = append(c.slow, idx)
					}
				}
			}
		}
	}
	for _, c := range s.order {
		if !c.active {
			continue
		}
		s.fillSegment(c)
		for _, idx := range c.slow {
			i := int(idx)
			s.visit(c, s.ce(c, i), i, t, false)
		}
		c.slow = c.slow[:0]
		for _, idx := range s.unshared {
			i := int(idx)
			s.visit(c, s.ce(c, i), i, t, false)
		}
	}
}

// upToDate reports whether the client may take whole segments at tick t:
// nothing lost or deferred since the last tick it acknowledged fully
// (acked, which it returns), and no priority raise unsettled.
func (s *Server) upToDate(c *serverClient, t tick.Tick) (acked tick.Tick, ok bool) {
	acked = t - 1
	if c.recLen > 0 {
		acked = c.recs[c.recHead].tick - 1
	}
	if c.dirty && !c.settle.After(acked) {
		c.dirty = false
	}
	return acked, !c.dirty && s.wholeAllowed(acked)
}

// chooseSharedBase chooses the baseline of tick t's shared blocks: the
// oldest tick that every up-to-date client acknowledged fully, at most
// deltaMaxAge ticks back. Such a client holds every entity's values at
// that tick (each change went out at its tick and was acknowledged), if
// the values of its last lost message were resent by then (else it is
// not deltaOK: it takes no shared block this tick, and gets its own
// deltas from its acknowledged ticks, visit), of the entities spawned on
// it by then (clientEnt.spawnTick; spawnedBy for whole segments).
func (s *Server) chooseSharedBase(t tick.Tick) {
	s.sharedBase, s.sharedBase2, s.hasSharedBase = 0, 0, false
	for _, c := range s.order {
		c.deltaOK = false
	}
	if s.deltaMask == 0 || s.cfg.NoDeltas || !s.sharedBlocks() {
		return
	}
	oldest := t - deltaMaxAge
	for _, c := range s.order {
		if !c.active {
			continue
		}
		if acked, ok := s.upToDate(c, t); ok && !acked.Before(oldest) && (!s.hasSharedBase || acked.Before(s.sharedBase)) {
			s.sharedBase, s.hasSharedBase = acked, true
		}
	}
	if !s.hasSharedBase || !s.sharedBase.Before(t) {
		s.sharedBase, s.hasSharedBase = 0, false
		return
	}
	// The older baseline, as far before the baseline as the baseline is
	// before t (the extrapolation doubles the change since it), if the
	// clients' last irregularities were settled by then.
	s.sharedBase2 = s.sharedBase - tick.Tick(t.Sub(s.sharedBase))
	if t.Sub(s.sharedBase2) > deltaMaxAge {
		s.sharedBase2 = s.sharedBase
	}
	for _, c := range s.order {
		if c.active && c.settle.After(s.sharedBase2) {
			s.sharedBase2 = s.sharedBase
		}
	}
	for _, c := range s.order {
		if !c.active {
			continue
		}
		acked, ok := s.upToDate(c, t)
		// The values a lost message carried reached the client at its
		// last irregularity's settle tick: a baseline before that may
		// predate them.
		c.deltaOK = ok && !acked.Before(s.sharedBase) && !c.settle.After(s.sharedBase2)
	}
}

// wholeTick records the segments a client took whole at tick: segment j
// (bit j of mask) went out in message base + (the number of lower bits set).
type wholeTick struct {
	tick tick.Tick
	base uint32
	mask uint32
}

// maxWhole is the number of a tick's segments that may go out whole (the
// width of wholeTick.mask); later ones take the per-client path.
const maxWhole = 32

// tookWhole reports whether the client took segment j of this tick (t)
// whole.
func (c *serverClient) tookWhole(t tick.Tick, j int) bool {
	return j < maxWhole && c.whole[int(t)%wholeRing].mask&(1<<uint(j)) != 0
}

// takeWhole gives the client, when it is up to date, every segment whose
// entities it owes exactly this tick's values: the client has everything
// older acknowledged (no lost message or deferral since the last fully
// acknowledged tick, and the segment's older changes no newer than that
// tick), and every entity of the segment was spawned on it before this
// tick. Each such segment becomes one message. The client remembers which
// segments of the tick it took and their sequence numbers (whole).
func (s *Server) takeWhole(c *serverClient, t tick.Tick) {
	acked, ok := s.upToDate(c, t)
	var mask uint32
	if ok && (!s.hasSharedBase || c.deltaOK) {
		all := c.spawned == len(s.list) && len(c.newSpawns) == 0
		room := maxPacketsPerTick - c.nPkts
		need := 0
		for j := 0; j < len(s.segs) && j < maxWhole && room > 0; j++ {
			sg := &s.segs[j]
			if sg.hasOthers && sg.others.After(acked) || !all && !s.allShown(c, sg) ||
				s.hasSharedBase && c.lastSpawn.After(s.sharedBase2) && !s.spawnedBy(c, sg, s.sharedBase2) {
				continue
			}
			mask |= 1 << uint(j)
			need += sg.n
			room--
		}
		if mask != 0 && !s.ringFree(c, need) {
			mask = 0
		}
	}
	c.whole[int(t)%wholeRing] = wholeTick{tick: t, base: c.seq, mask: mask}
	for m := mask; m != 0; m &= m - 1 {
		sg := &s.segs[bits.TrailingZeros32(m)]
		s.startPacket(c, t)
		c.bw.WriteBitsFrom(s.segBuf[sg.off:], sg.bits)
		c.prev = sg.last
		r := c.entRing
		for _, idx := range s.shared[sg.first : sg.first+sg.n] {
			r[c.entEnd&(len(r)-1)] = idx
			c.entEnd++
		}
		c.cur.n = sg.n
		c.wholeMsgs++
	}
}

// allShown reports whether every entity of the segment was spawned on the
// client before this tick.
func (s *Server) allShown(c *serverClient, sg *segment) bool {
	for _, idx := range s.shared[sg.first : sg.first+sg.n] {
		if !c.isShown(idx) {
			return false
		}
	}
	return true
}

// spawnedBy reports whether every entity of the segment was spawned on
// the client at or before tick b.
func (s *Server) spawnedBy(c *serverClient, sg *segment, b tick.Tick) bool {
	for _, idx := range s.shared[sg.first : sg.first+sg.n] {
		if s.ce(c, int(idx)).spawnTick.After(b) {
			return false
		}
	}
	return true
}

// take puts the entity's shared block into the client's message of the
// entity's segment when the client owes exactly the components that changed
// this tick. Otherwise it reports false and leaves the entity to visit (it
// may have resolved the entity's ack, which visit does first anyway).
func (s *Server) take(c *serverClient, ce *clientEnt, se *srvEnt, idx uint32, gen uint32, t tick.Tick) bool {
	if ce.flags&(ceSpawned|ceDeferred) != ceSpawned || ce.gen != gen {
		return false
	}
	if s.hasSharedBase && (!c.deltaOK || ce.spawnTick.After(s.sharedBase2)) ||
		!s.hasSharedBase && se.mask&s.deltaMask != 0 && !s.cfg.NoDeltas {
		// The shared block is a delta this client may lack the baseline
		// of, or absolute where the client's own delta is smaller:
		// visit sends it the client's own block.
		return false
	}
	s.resolve(c, ce, int(idx))
	if ce.sentTick == t || ce.ackedTick == t || se.hasOthers && se.others.After(ce.ackedTick) {
		return false // sent or updated this tick, or older values are pending too
	}
	if c.seg != se.seg+1 {
		if c.nPkts == maxPacketsPerTick {
			return false
		}
		s.fillSegment(c)
		s.startPacket(c, t)
		c.seg = se.seg + 1
	}
	if c.entEnd-c.entStart >= len(c.entRing) {
		s.ringFree(c, 1)
	}
	c.entRing[c.entEnd&(len(c.entRing)-1)] = idx
	c.entEnd++
	c.cur.n++
	c.sent(ce, t)
	return true
}

// fillSegment writes the blocks the client took from its open segment into
// the segment's message: the segment's bytes in one copy when it took them
// all.
func (s *Server) fillSegment(c *serverClient) {
	if c.seg == 0 {
		return
	}
	sg := &s.segs[c.seg-1]
	c.seg = 0
	if c.cur.n == sg.n {
		c.bw.WriteBitsFrom(s.segBuf[sg.off:], sg.bits)
		c.prev = sg.last
		return
	}
	for k := c.cur.first; k < c.cur.first+c.cur.n; k++ {
		idx := c.entRing[k&(len(c.entRing)-1)]
		se := &s.ents[idx]
		c.appendBlock(idx, s.blockBuf[se.shOff:], int(se.shBits))
	}
}

// catchUp applies to the entity's state the sends of its shared block in
// segments the client took whole (takeWhole), from the entity's history:
// the entries newer than the state's last send, at ticks whose whole
// segments the client remembers (an entry of this tick before the client's
// whole segments of the tick are decided is not one yet). Every other way
// of sending an entity catches up first, so the history's last two entries
// are all it can miss.
func (s *Server) catchUp(c *serverClient, ce *clientEnt, idx int) {
	se := &s.ents[idx]
	if ce.gen != se.e.Generation() {
		return
	}
	for k := len(se.hist) - 1; k >= 0; k-- {
		h := se.hist[k]
		if h.seg == 0 || !h.tick.After(ce.sentTick) {
			continue
		}
		w := &c.whole[int(h.tick)%wholeRing]
		j := uint(h.seg - 1)
		if w.tick != h.tick || j >= maxWhole || w.mask&(1<<j) == 0 {
			continue
		}
		c.sentIn(ce, h.tick, w.base+uint32(bits.OnesCount32(w.mask&(1<<j-1))))
	}
}
