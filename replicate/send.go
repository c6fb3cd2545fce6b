package replicate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

const (
	ackWindow         = 1 << 16 // mutation messages whose ack state is remembered per client
	maxMutationPacket = 1200
	minTimeout        = 50 * time.Millisecond
	maxTimeout        = 3 * time.Second
	maxBackoff        = 4     // the timeout doubles at most 4 times
	shrinkAbove       = 16384 // update buffers above this are released after use
	// updatePart is the most update bytes one message carries: a larger
	// update (a late joiner's whole world) is cut into parts of this size,
	// or smaller when ServerConfig.MaxMessageSize leaves less room
	// (Server.partSize).
	updatePart = 64 << 10
	// partHeader bounds a part's header: kind, total length, offset.
	partHeader = 1 + 2*binary.MaxVarintLen64
	// updateBudget is the most bytes of queued updates sent to one client
	// per tick (at least one message): a huge first update is paced over a
	// few ticks instead of filling the connection's send queue at once.
	updateBudget = 1 << 20
)

// growTicks makes room in compTicks for entity slot idx.
func (s *Server) growTicks(idx int) {
	if need := (idx + 1) * len(s.comps); len(s.compTicks) < need {
		s.compTicks = append(s.compTicks, make([]tick.Tick, need-len(s.compTicks))...)
	}
}

// Send runs one server tick of replication: it accepts new connections,
// reads the clients' messages (hellos, acks, game messages), then sends each
// authenticated client its update and mutation messages for what changed in
// the world since the previous Send, and the server messages queued since.
// Call it once per server tick, after the simulation step. It advances the
// world's change tick.
func (s *Server) Send() {
	s.now = s.cfg.Now()
	s.accept()
	s.receive()
	s.tick++
	t := s.tick
	wt := s.w.Tick()
	s.worldTicks[int(t)%tickRing] = wt
	s.structural(t)
	s.valueChanges(t)
	s.cacheStamp = t
	s.cacheBuf = s.cacheBuf[:0]
	s.blockBuf = s.blockBuf[:0]
	for i := 0; i < len(s.order); i++ {
		c := s.order[i]
		c.active = false
		if c.authed && !c.gone {
			s.sendClient(c, t)
			c.active = !c.gone
		}
		if c.gone {
			i--
		}
	}
	s.mutateChanged(t)
	for _, c := range s.order {
		if c.active {
			s.finishClient(c, t)
		}
	}
	s.flushMessages()
	s.prevWorld = wt
	s.w.AdvanceTick()
	s.spawnedNow = s.spawnedNow[:0]
	s.despawnedNow = s.despawnedNow[:0]
	s.structNow = s.structNow[:0]
	s.changedNow = s.changedNow[:0]
}

func (s *Server) replicatedNow(e ecs.Entity) bool { return s.w.Alive(e) && s.rep.Has(e) }

// structural turns the world's structural events since the last tick into
// this tick's spawns, despawns, inserts and removals of replicated data.
func (s *Server) structural(t tick.Tick) {
	for _, e := range s.touched {
		idx := int(e.Index())
		s.grow(idx)
		se := &s.ents[idx]
		if se.listed && se.e == e && !s.replicatedNow(e) {
			s.despawnedNow = append(s.despawnedNow, e)
			s.unlist(idx)
		}
	}
	for _, e := range s.touched {
		if !s.replicatedNow(e) {
			continue
		}
		idx := int(e.Index())
		se := &s.ents[idx]
		if se.touch == t && se.e == e {
			continue
		}
		se.touch = t
		mask, once := s.maskOf(e)
		if !se.listed || se.e != e {
			if se.listed { // an older generation still listed: it is gone
				s.despawnedNow = append(s.despawnedNow, se.e)
				s.unlist(idx)
			}
			se.e, se.mask, se.once = e, mask, once
			s.growTicks(idx)
			for k := range s.comps {
				s.compTicks[idx*len(s.comps)+k] = t
			}
			se.listed = true
			se.hist = [2]histEntry{}
			se.pos = int32(len(s.list))
			s.list = append(s.list, uint32(idx))
			s.spawnedNow = append(s.spawnedNow, uint32(idx))
			se.structAt = t
			continue
		}
		ins, rem := mask&^se.mask, se.mask&^mask
		se.mask, se.once = mask, once
		if ins|rem != 0 {
			se.ins, se.rem = ins, rem
			s.structNow = append(s.structNow, uint32(idx))
			se.structAt = t
		}
	}
	s.touched = s.touched[:0]
}

func (s *Server) unlist(idx int) {
	se := &s.ents[idx]
	last := s.list[len(s.list)-1]
	s.list[se.pos] = last
	s.ents[last].pos = se.pos
	s.list = s.list[:len(s.list)-1]
	se.listed = false
	se.mask, se.once = 0, 0
}

// maskOf applies the rules to e: which components replicate, and which of
// them only once.
func (s *Server) maskOf(e ecs.Entity) (mask, once uint64) {
	var present uint64
	for i, c := range s.comps {
		if c.has(e) {
			present |= 1 << uint(i)
		}
	}
	for i := range s.rules {
		r := &s.rules[i]
		if present&r.comps != r.comps {
			continue
		}
		ok := true
		for j, f := range r.filters {
			if f(e) != r.want[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for j, id := range r.ids {
			bit := uint64(1) << uint(id)
			if mask&bit != 0 {
				continue
			}
			mask |= bit
			if r.modes[j] == Once {
				once |= bit
			}
		}
	}
	return mask, once
}

// valueChanges lists the entities with a replicated, on-change component
// written since the last tick (one scan of the change ticks for all clients).
func (s *Server) valueChanges(t tick.Tick) {
	defer slices.Sort(s.changedNow) // ascending slots: friendlier to the caches of the per-client scans
	for id, c := range s.comps {
		bit := uint64(1) << uint(id)
		ents, changed := c.column()
		for i, ct := range changed {
			if ct <= s.prevWorld {
				continue
			}
			e := ents[i]
			idx := int(e.Index())
			if idx >= len(s.ents) {
				continue
			}
			se := &s.ents[idx]
			if !se.listed || se.e != e || se.mask&bit == 0 || se.once&bit != 0 {
				continue
			}
			s.compTicks[idx*len(s.comps)+id] = t
			if se.chg == t {
				continue
			}
			se.chg = t
			s.changedNow = append(s.changedNow, uint32(idx))
		}
	}
}

// value returns the encoding of component id of entity idx at this tick,
// encoding it at most once per tick for all clients.
func (s *Server) value(idx, id int) []byte {
	k := idx*len(s.comps) + id
	for len(s.cache) <= k {
		s.cache = append(s.cache, cacheEntry{})
	}
	ce := &s.cache[k]
	if ce.stamp != s.cacheStamp {
		off := len(s.cacheBuf)
		s.cacheBuf = s.comps[id].appendValue(s.cacheBuf, s.ents[idx].e)
		*ce = cacheEntry{stamp: s.cacheStamp, off: uint32(off), n: uint32(len(s.cacheBuf) - off)}
	}
	return s.cacheBuf[ce.off : ce.off+ce.n]
}

func appendEntity(dst []byte, e ecs.Entity) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.Index()))
	return binary.AppendUvarint(dst, uint64(e.Generation()))
}

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

// appendComponents appends the component mask and the values of the
// components in mask (length-prefixed only for variable-size codecs).
func (s *Server) appendComponents(dst []byte, idx int, mask uint64) []byte {
	dst = binary.AppendUvarint(dst, mask)
	for m := mask; m != 0; m &= m - 1 {
		id := bits.TrailingZeros64(m)
		v := s.value(idx, id)
		if s.p.comps[id].fixed == 0 {
			dst = binary.AppendUvarint(dst, uint64(len(v)))
		}
		dst = append(dst, v...)
	}
	return dst
}

// block returns entity idx's mutation block (entity and the values in mask),
// built once per tick and mask and shared by every client.
func (s *Server) block(idx int, mask uint64) []byte {
	se := &s.ents[idx]
	if se.blkStamp != s.cacheStamp || se.blkMask != mask {
		off := len(s.blockBuf)
		s.blockBuf = appendEntity(s.blockBuf, se.e)
		s.blockBuf = s.appendComponents(s.blockBuf, idx, mask)
		se.blkStamp, se.blkMask, se.blkOff, se.blkLen = s.cacheStamp, mask, uint32(off), uint32(len(s.blockBuf)-off)
	}
	return s.blockBuf[se.blkOff : se.blkOff+se.blkLen]
}

func (s *Server) visible(c *serverClient, idx int) bool {
	v := s.ce(c, idx).vis
	return v == 1 || (v == 0 && !s.cfg.HiddenByDefault)
}

// syncGen resets the client's view of slot idx when it belonged to an older
// generation of the entity slot.
func (s *Server) syncGen(c *serverClient, idx int) *clientEnt {
	ce := s.ce(c, idx)
	if gen := s.ents[idx].e.Generation(); ce.gen != gen {
		if ce.flags&ceSpawned != 0 {
			c.spawned--
			c.setShown(idx, false)
		}
		*ce = clientEnt{gen: gen}
	}
	return ce
}

// setShown sets or clears entity slot idx's bit in the client's shown set.
func (c *serverClient) setShown(idx int, on bool) {
	w := idx / 64
	if w >= len(c.shown) {
		if !on {
			return
		}
		c.shown = append(c.shown, make([]uint64, w+1-len(c.shown))...)
	}
	if on {
		c.shown[w] |= 1 << uint(idx%64)
	} else {
		c.shown[w] &^= 1 << uint(idx%64)
	}
}

func (c *serverClient) isShown(idx uint32) bool {
	w := int(idx / 64)
	return w < len(c.shown) && c.shown[w]&(1<<(idx%64)) != 0
}

func (s *Server) spawnOn(c *serverClient, idx int, t tick.Tick) {
	se := &s.ents[idx]
	ce := s.syncGen(c, idx)
	ce.flags |= ceSpawned
	ce.ackedTick, ce.sentTick = t, t
	c.spawned++
	c.newSpawns = append(c.newSpawns, uint32(idx))
	for i, m := range c.maps {
		if m.server == se.e {
			c.secMap = appendEntity(c.secMap, m.server)
			c.secMap = appendEntity(c.secMap, m.client)
			c.nMap++
			c.maps = append(c.maps[:i], c.maps[i+1:]...)
			break
		}
	}
	c.secIns = appendEntity(c.secIns, se.e)
	c.secIns = append(c.secIns, 1)
	c.secIns = s.appendComponents(c.secIns, idx, se.mask)
	c.nIns++
}

func (s *Server) despawnOn(c *serverClient, idx int, e ecs.Entity) {
	ce := s.ce(c, idx)
	ce.flags &^= ceSpawned
	c.spawned--
	c.setShown(idx, false)
	c.secDesp = appendEntity(c.secDesp, e)
	c.nDesp++
}

// sendClient sends the client its update for tick t and prepares its
// mutation messages with the entities it owes (resends, deferred); the
// entities that changed this tick are added for every client at once by
// mutateChanged, and finishClient sends the messages.
func (s *Server) sendClient(c *serverClient, t tick.Tick) {
	c.secMap, c.secDesp, c.secRem, c.secIns = c.secMap[:0], c.secDesp[:0], c.secRem[:0], c.secIns[:0]
	c.nMap, c.nDesp, c.nRem, c.nIns = 0, 0, 0, 0
	s.expire(c)

	// Despawns first: a slot may be despawned and reused in one tick.
	for _, e := range s.despawnedNow {
		idx := int(e.Index())
		ce := s.ce(c, idx)
		if ce.flags&ceSpawned != 0 && ce.gen == e.Generation() {
			s.despawnOn(c, idx, e)
		}
	}
	for _, vc := range c.visQueue {
		idx := int(vc.e.Index())
		if idx >= len(s.ents) || !s.ents[idx].listed || s.ents[idx].e != vc.e {
			continue // not replicated (any more)
		}
		ce := s.syncGen(c, idx)
		ce.vis = vc.vis
		vis := s.visible(c, idx)
		switch {
		case vis && ce.flags&ceSpawned == 0 && !c.fresh:
			s.spawnOn(c, idx, t)
		case !vis && ce.flags&ceSpawned != 0:
			s.despawnOn(c, idx, s.ents[idx].e)
		}
	}
	c.visQueue = c.visQueue[:0]
	if c.fresh {
		// A new client gets everything it may see.
		c.fresh = false
		for _, idx := range s.list {
			i := int(idx)
			ce := s.syncGen(c, i)
			if ce.flags&ceSpawned == 0 && s.visible(c, i) {
				s.spawnOn(c, i, t)
			}
		}
	} else {
		for _, idx := range s.spawnedNow {
			i := int(idx)
			if !s.ents[i].listed {
				continue
			}
			ce := s.syncGen(c, i)
			if ce.flags&ceSpawned == 0 && s.visible(c, i) {
				s.spawnOn(c, i, t)
			}
		}
	}
	for _, idx := range s.structNow {
		i := int(idx)
		se := &s.ents[i]
		ce := s.ce(c, i)
		if ce.flags&ceSpawned == 0 || ce.gen != se.e.Generation() || ce.ackedTick == t {
			continue
		}
		if se.rem != 0 {
			c.secRem = appendEntity(c.secRem, se.e)
			n := 0
			for m := se.rem; m != 0; m &= m - 1 {
				n++
			}
			c.secRem = binary.AppendUvarint(c.secRem, uint64(n))
			for id := range s.comps {
				if se.rem&(1<<uint(id)) != 0 {
					c.secRem = binary.AppendUvarint(c.secRem, uint64(id))
				}
			}
			c.nRem++
		}
		// The update carries the entity's inserted components and every
		// value not yet acknowledged, so the client can treat mutations
		// older than this update as stale (they could otherwise re-insert
		// a component the update removed).
		s.resolve(c, ce, i)
		if m := (se.ins | s.pendingMask(i, ce)) & se.mask; m != 0 {
			c.secIns = appendEntity(c.secIns, se.e)
			c.secIns = append(c.secIns, 0)
			c.secIns = s.appendComponents(c.secIns, i, m)
			c.nIns++
		}
		ce.ackedTick, ce.sentTick = t, t
	}
	if c.nMap+c.nDesp+c.nRem+c.nIns > 0 {
		b := append(c.upd[:0], kindUpdate)
		b = binary.AppendUvarint(b, uint64(t))
		b = binary.AppendUvarint(b, uint64(c.nMap))
		b = append(b, c.secMap...)
		b = binary.AppendUvarint(b, uint64(c.nDesp))
		b = append(b, c.secDesp...)
		b = binary.AppendUvarint(b, uint64(c.nRem))
		b = append(b, c.secRem...)
		b = binary.AppendUvarint(b, uint64(c.nIns))
		b = append(b, c.secIns...)
		c.upd = b
		sent := s.sendUpdate(c, b)
		if cap(c.upd) > shrinkAbove { // a late joiner's full state: do not keep its buffers
			c.upd, c.secIns, c.secMap, c.secDesp, c.secRem = nil, nil, nil, nil, nil
		}
		if !sent {
			return
		}
		c.lastUpdate = t
	}
	if c.backOff < len(c.backlog) && !s.flushBacklog(c) {
		return
	}
	s.startMutations(c, t)
}

// sendUpdate sends update message b, or queues it behind the client's
// backlog of updates: cut into parts when larger than updatePart, or when
// earlier updates still wait (updates stay in order). The client applies
// an update only once it has all of its parts, so it stays atomic. Its
// mutations and messages are held by the client until then, as for any
// update that has not arrived yet. It reports false when the client was
// dropped (also when its queue would exceed ServerConfig.MaxUpdateBacklog).
func (s *Server) sendUpdate(c *serverClient, b []byte) bool {
	part := s.partSize()
	if len(b) <= part && c.backOff == len(c.backlog) {
		return s.sendTo(c, transport.ReliableOrdered, b)
	}
	if len(c.backlog)-c.backOff+len(b) > s.cfg.MaxUpdateBacklog {
		s.drop(c, fmt.Sprintf("not keeping up (more than %d bytes of updates queued)", s.cfg.MaxUpdateBacklog))
		return false
	}
	if len(b) <= part {
		c.backlog = appendBytes(c.backlog, b)
		return true
	}
	var hdr [partHeader]byte
	for off := 0; off < len(b); off += part {
		h := append(hdr[:0], kindUpdatePart)
		h = binary.AppendUvarint(h, uint64(len(b)))
		h = binary.AppendUvarint(h, uint64(off))
		p := b[off:min(off+part, len(b))]
		c.backlog = binary.AppendUvarint(c.backlog, uint64(len(h)+len(p)))
		c.backlog = append(append(c.backlog, h...), p...)
	}
	return true
}

// partSize is the most update bytes one message carries: updatePart, or
// less when MaxMessageSize is smaller, so every part fits the conn.
func (s *Server) partSize() int {
	return min(updatePart, s.cfg.MaxMessageSize-partHeader)
}

// flushBacklog sends the client's queued update messages, up to
// updateBudget bytes (at least one message). It reports false when the
// client was dropped.
func (s *Server) flushBacklog(c *serverClient) bool {
	sent := 0
	for c.backOff < len(c.backlog) && sent < updateBudget {
		n, w := binary.Uvarint(c.backlog[c.backOff:])
		msg := c.backlog[c.backOff+w : c.backOff+w+int(n)]
		if !s.sendTo(c, transport.ReliableOrdered, msg) {
			return false
		}
		c.backOff += w + int(n)
		sent += int(n)
	}
	if c.backOff == len(c.backlog) {
		c.backlog, c.backOff = c.backlog[:0], 0
		if cap(c.backlog) > shrinkAbove {
			c.backlog = nil
		}
	}
	return true
}

func (s *Server) rates(c *serverClient) {
	if el := s.now.Sub(c.rateStart); el >= time.Second {
		c.stats.OutPerSec = float64(c.stats.BytesOut-c.rateOut) / el.Seconds()
		c.stats.InPerSec = float64(c.stats.BytesIn-c.rateIn) / el.Seconds()
		c.rateStart, c.rateOut, c.rateIn = s.now, c.stats.BytesOut, c.stats.BytesIn
	}
}

// pendingMask returns the components of entity idx that changed since the
// client acknowledged them, from the server tick at which each component
// last changed (kept per entity for all clients).
func (s *Server) pendingMask(idx int, ce *clientEnt) uint64 {
	se := &s.ents[idx]
	live := se.mask &^ se.once
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

// startMutations begins the client's mutation messages of tick t with the
// entities it owes from earlier ticks: timed-out sends (resent with their
// latest values) and entities held back by their priority.
func (s *Server) startMutations(c *serverClient, t tick.Tick) {
	c.nPkts = 0
	c.maxPkt = min(maxMutationPacket, c.conn.MaxUnreliableSize())
	resend, deferred := c.resend, c.deferred
	c.resend, c.resend2 = c.resend2[:0], resend
	c.deferred, c.deferred2 = c.deferred2[:0], deferred
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

// segment is a run of n consecutive entities of this tick's shared list
// (from first) whose shared blocks lie side by side in
// blockBuf[off : off+size] and fit one mutation message. A client that
// takes all of them gets the segment's bytes in one copy.
type segment struct {
	first, n  int
	off, size uint32
	// others is the latest change tick of the entities' other live
	// components (hasOthers: there is one).
	hasOthers bool
	others    tick.Tick
}

// clientGroup is the number of clients whose states mutateChanged walks
// together.
const clientGroup = 8

// mutateHeaderMax bounds a mutation message's header: kind, three uvarints
// of at most 5 bytes each, index and count.
const mutateHeaderMax = 1 + 3*binary.MaxVarintLen32 + 2

// segmentChanged sorts this tick's changed entities into shared ones
// (listed, priority at least 1, no spawn or structural change this tick)
// and the rest (unshared: every client visits them). It encodes the shared
// block of each shared entity (the components that changed this tick),
// cuts the blocks into segments that fit a mutation message of any active
// client, and notes each entity's segment in its history.
func (s *Server) segmentChanged() {
	s.segs, s.shared, s.unshared = s.segs[:0], s.shared[:0], s.unshared[:0]
	limit := maxMutationPacket
	for _, c := range s.order {
		if c.active {
			limit = min(limit, c.maxPkt)
		}
	}
	limit -= mutateHeaderMax
	seg := segment{off: uint32(len(s.blockBuf))}
	for _, idx := range s.changedNow {
		i := int(idx)
		se := &s.ents[i]
		live := se.mask &^ se.once
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
		if !se.listed || se.prio < 1 || m0 == 0 || se.structAt == s.tick {
			s.unshared = append(s.unshared, idx)
			continue
		}
		off := len(s.blockBuf)
		s.blockBuf = appendEntity(s.blockBuf, se.e)
		s.blockBuf = s.appendComponents(s.blockBuf, i, m0)
		se.shOff, se.shLen = uint32(off), uint32(len(s.blockBuf)-off)
		// Visits later this tick that need the same block reuse it.
		se.blkStamp, se.blkMask, se.blkOff, se.blkLen = s.cacheStamp, m0, se.shOff, se.shLen
		if seg.n > 0 && int(seg.size)+int(se.shLen) > limit {
			s.segs = append(s.segs, seg)
			seg = segment{first: len(s.shared), off: uint32(off)}
		}
		se.seg = int32(len(s.segs))
		se.hist[1], se.hist[0] = se.hist[0], histEntry{tick: s.tick, seg: se.seg + 1}
		s.shared = append(s.shared, idx)
		seg.n++
		seg.size += se.shLen
		if se.hasOthers && (!seg.hasOthers || se.others.After(seg.others)) {
			seg.others, seg.hasOthers = se.others, true
		}
	}
	if seg.n > 0 {
		s.segs = append(s.segs, seg)
	}
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
	n := s.slotCap
	// Clients go in groups whose per-client state stays in cache over all
	// the changed entities; within a group, entity by entity.
	for g := 0; g < n; g += clientGroup {
		h := min(g+clientGroup, n)
		slots := s.slotOf[g:h]
		for _, c := range slots {
			if c != nil && c.active {
				s.takeWhole(c, t)
			}
		}
		for j := range s.segs {
			sg := &s.segs[j]
			need := false
			for _, c := range slots {
				need = need || c != nil && c.active && !c.tookWhole(t, j)
			}
			if !need {
				continue
			}
			for _, idx := range s.shared[sg.first : sg.first+sg.n] {
				i := int(idx)
				se := &s.ents[i]
				row := s.cstate[i*n+g : i*n+h]
				gen := se.e.Generation()
				for k, c := range slots {
					if c == nil || !c.active || c.tookWhole(t, j) {
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

// tookWhole reports whether the client took segment j of this tick (t)
// whole.
func (c *serverClient) tookWhole(t tick.Tick, j int) bool {
	return j < maxWhole && c.whole[int(t)%wholeRing].mask&(1<<uint(j)) != 0
}

// maxWhole is the number of a tick's segments that may go out whole (the
// width of wholeTick.mask); later ones take the per-client path.
const maxWhole = 32

// takeWhole gives the client, when it is up to date, every segment whose
// entities it owes exactly this tick's values: the client has everything
// older acknowledged (no lost message or deferral since the last fully
// acknowledged tick, and the segment's older changes no newer than that
// tick), and every entity of the segment was spawned on it before this
// tick. Each such segment becomes one message. The client remembers which
// segments of the tick it took and their sequence numbers (whole).
func (s *Server) takeWhole(c *serverClient, t tick.Tick) {
	acked := t - 1
	if c.recLen > 0 {
		acked = c.recs[c.recHead].tick - 1
	}
	if c.dirty && !c.settle.After(acked) {
		c.dirty = false
	}
	var mask uint32
	if !c.dirty && !s.noWhole && !(s.raised && s.raiseSettle.After(acked)) {
		all := c.spawned == len(s.list) && len(c.newSpawns) == 0
		room := maxPacketsPerTick - c.nPkts
		need := 0
		for j := 0; j < len(s.segs) && j < maxWhole && room > 0; j++ {
			sg := &s.segs[j]
			if sg.hasOthers && sg.others.After(acked) || !all && !s.allShown(c, sg) {
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
		p := &c.pkts[c.nPkts-1]
		*p = append(*p, s.blockBuf[sg.off:sg.off+sg.size]...)
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

// take puts the entity's shared block into the client's message of the
// entity's segment when the client owes exactly the components that changed
// this tick. Otherwise it reports false and leaves the entity to visit (it
// may have resolved the entity's ack, which visit does first anyway).
func (s *Server) take(c *serverClient, ce *clientEnt, se *srvEnt, idx uint32, gen uint32, t tick.Tick) bool {
	if ce.flags&(ceSpawned|ceDeferred) != ceSpawned || ce.gen != gen {
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

// sent records in the entity's state that it went out at tick t in the
// message being built.
func (c *serverClient) sent(ce *clientEnt, t tick.Tick) {
	c.sentIn(ce, t, c.seq-1)
}

// sentIn records in the entity's state that it went out at tick t in
// message seq; the previous send stays known (its late ack still counts).
func (c *serverClient) sentIn(ce *clientEnt, t tick.Tick, seq uint32) {
	if ce.flags&ceSeen != 0 {
		ce.prevTick, ce.prevSeq = ce.sentTick, ce.sentSeq
		ce.flags |= cePrev
	}
	ce.sentTick, ce.sentSeq = t, seq
	ce.flags |= ceSeen
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

// fillSegment writes the blocks the client took from its open segment into
// the segment's message: the segment's bytes in one copy when it took them
// all.
func (s *Server) fillSegment(c *serverClient) {
	if c.seg == 0 {
		return
	}
	sg := &s.segs[c.seg-1]
	c.seg = 0
	p := &c.pkts[c.nPkts-1]
	if c.cur.n == sg.n {
		*p = append(*p, s.blockBuf[sg.off:sg.off+sg.size]...)
		return
	}
	for k := c.cur.first; k < c.cur.first+c.cur.n; k++ {
		se := &s.ents[c.entRing[k&(len(c.entRing)-1)]]
		*p = append(*p, s.blockBuf[se.shOff:se.shOff+se.shLen]...)
	}
}

// finishClient sends the client's mutation messages of the tick.
func (s *Server) finishClient(c *serverClient, t tick.Tick) {
	if c.nPkts == 0 && !s.cfg.NoTickTracking {
		s.startPacket(c, t)
	}
	s.finishPackets(c)
	s.rates(c)
	for _, idx := range c.newSpawns {
		if i := int(idx); s.ce(c, i).flags&ceSpawned != 0 {
			c.setShown(i, true)
		}
	}
	c.newSpawns = c.newSpawns[:0]
	if cap(c.newSpawns) > 256 { // a late joiner's first tick
		c.newSpawns = nil
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
	if !forced && se.prio < 1 {
		ce.acc += se.prio
		if ce.acc < 1 {
			if ce.flags&ceDeferred == 0 {
				ce.flags |= ceDeferred
				c.deferred = append(c.deferred, uint32(i))
			}
			return
		}
		ce.acc = 0
	}
	if s.writeBlock(c, i, m, t, c.maxPkt) {
		c.sent(ce, t)
		return
	}
	s.irregular(c, t+1) // no more messages this tick: it goes next tick
	if ce.flags&ceDeferred == 0 {
		ce.flags |= ceDeferred
		c.deferred = append(c.deferred, uint32(i))
	}
}

func (s *Server) startPacket(c *serverClient, t tick.Tick) {
	if c.nPkts == len(c.pkts) {
		c.pkts = append(c.pkts, make([]byte, 0, maxMutationPacket))
	}
	b := append(c.pkts[c.nPkts][:0], kindMutations)
	b = binary.AppendUvarint(b, uint64(t))
	b = binary.AppendUvarint(b, uint64(t.Sub(c.lastUpdate)))
	b = binary.AppendUvarint(b, uint64(c.seq))
	b = append(b, 0, 0) // index and count, patched in finishPackets
	c.pkts[c.nPkts] = b
	c.nPkts++
	s.record(c, t)
	c.ackBits[(c.seq/64)%(ackWindow/64)] &^= 1 << (c.seq % 64)
	c.seq++
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

// retained estimates the bytes of per-client replication state.
func (c *serverClient) retained() int {
	n := c.nEnts*int(unsafe.Sizeof(clientEnt{})) + cap(c.recs)*int(unsafe.Sizeof(sentRecord{})) + 4*cap(c.entRing)
	n += 4*(cap(c.resend)+cap(c.deferred)+cap(c.resend2)+cap(c.deferred2)+cap(c.slow)) + int(unsafe.Sizeof(visChange{}))*cap(c.visQueue) + int(unsafe.Sizeof(mapping{}))*cap(c.maps)
	n += cap(c.secMap) + cap(c.secDesp) + cap(c.secRem) + cap(c.secIns) + cap(c.upd) + cap(c.backlog)
	for _, p := range c.pkts {
		n += cap(p)
	}
	n += 8*cap(c.shown) + 4*cap(c.newSpawns)
	return n + int(unsafe.Sizeof(*c)) + int(unsafe.Sizeof(*c.ackBits)) + int(unsafe.Sizeof(*c.whole))
}

func (s *Server) pop(c *serverClient) {
	r := &c.recs[c.recHead]
	c.entStart = r.first + r.n
	c.recHead = (c.recHead + 1) % len(c.recs)
	c.recLen--
}

// writeBlock writes entity idx's pending components into the current
// packet, starting a new packet when it does not fit. It reports false when
// no more packets may be sent this tick.
func (s *Server) writeBlock(c *serverClient, idx int, m uint64, t tick.Tick, maxPkt int) bool {
	if c.nPkts == 0 {
		s.startPacket(c, t)
	}
	s.ringFree(c, 1)
	p := &c.pkts[c.nPkts-1]
	block := s.block(idx, m)
	if len(*p)+len(block) > maxPkt && c.cur.n > 0 {
		// Does not fit: start a new packet.
		if c.nPkts == maxPacketsPerTick {
			return false
		}
		s.startPacket(c, t)
		p = &c.pkts[c.nPkts-1]
	}
	*p = append(*p, block...)
	c.entRing[c.entEnd&(len(c.entRing)-1)] = uint32(idx)
	c.entEnd++
	c.cur.n++
	return true
}

// finishPackets patches index and count into the tick's packets and sends
// them: unreliable, or reliable-unordered for a single entity too large for
// a datagram.
func (s *Server) finishPackets(c *serverClient) {
	maxU := c.conn.MaxUnreliableSize()
	for i := 0; i < c.nPkts; i++ {
		b := c.pkts[i]
		hdr := headerLen(b)
		b[hdr-2], b[hdr-1] = byte(i), byte(c.nPkts)
		ch := transport.Unreliable
		if len(b) > maxU {
			ch = transport.ReliableUnordered
		}
		s.sendTo(c, ch, b)
		c.stats.MutationMessages++
	}
}

// headerLen finds the end of a mutation packet's header (after index and count).
func headerLen(b []byte) int {
	off := 1
	for k := 0; k < 3; k++ {
		_, n := binary.Uvarint(b[off:])
		off += n
	}
	return off + 2
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
				c.resend = append(c.resend, idx)
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

// resolveAck moves the entity's acknowledged tick to its last send when the
// client acknowledged that message.
func (c *serverClient) resolveAck(ce *clientEnt) {
	if ce.flags&ceSeen == 0 {
		return
	}
	if ce.sentTick.After(ce.ackedTick) && c.acked(ce.sentSeq) {
		ce.ackedTick = ce.sentTick
	} else if ce.flags&cePrev != 0 && ce.prevTick.After(ce.ackedTick) && c.acked(ce.prevSeq) {
		ce.ackedTick = ce.prevTick
	}
}

// flushMessages sends the server messages queued since the last tick.
func (s *Server) flushMessages() {
	for _, q := range s.out {
		payload := s.outBuf[q.off : q.off+q.n]
		for _, c := range s.order {
			if !c.authed || c.gone || !q.to.includes(c.id) {
				continue
			}
			b := append(s.scratch[:0], kindServerMsg)
			b = binary.AppendUvarint(b, uint64(q.spec.id))
			req := uint64(c.lastUpdate)
			if q.spec.independent {
				req = 0
			}
			b = binary.AppendUvarint(b, req)
			b = append(b, payload...)
			s.scratch = b
			err := c.conn.Send(q.spec.ch, b)
			if errors.Is(err, transport.ErrTooLarge) {
				// SendToClients checked the size against MaxMessageSize and
				// the clients of the time: this conn's limits are smaller.
				// The game message is lost for this client; its
				// replication state is not, so it stays connected.
				s.log.Warn("replicate: server message too large for a client's conn", "client", c.id, "message", q.spec.name, "err", err)
				continue
			}
			s.afterSend(c, q.spec.ch, len(b), err)
		}
	}
	s.out = s.out[:0]
	s.outBuf = s.outBuf[:0]
}
