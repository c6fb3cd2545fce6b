package replicate

// A tick's changes of the world (spawns, despawns, structural and value
// changes of replicated entities) and the values and blocks encoded once
// per tick for every client.

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
)

// worldChanges collects the world's structural events (touched, from an
// observer) and sorts them, each tick, into spawns, despawns, structural
// changes and value changes of replicated entities (structural and
// valueChanges fill them; the send phase reads them). Invariant, kept by
// its methods: the lists hold this tick's changes only (reset empties
// them after the send), and touched every entity the world reported
// since the last structural pass while observing.
type worldChanges struct {
	cancel       func() // stops observing the world
	touched      []ecs.Entity
	spawnedNow   []uint32
	despawnedNow []ecs.Entity
	structNow    []uint32
	changedNow   []uint32
	// held lists the entity slots with changes a send interval holds
	// back (srvEnt.held; WithSendEvery), released at a due tick.
	held []uint32
}

// observe starts collecting w's structural events, and counts every
// entity w holds already as touched.
func (wc *worldChanges) observe(w *ecs.World) {
	wc.cancel = w.Observe(func(ev ecs.Event) {
		wc.touched = append(wc.touched, ev.Entity)
	})
	for e := range w.Entities() {
		wc.touched = append(wc.touched, e)
	}
}

// stopObserving stops collecting the world's events (idempotent).
func (wc *worldChanges) stopObserving() {
	if wc.cancel != nil {
		wc.cancel()
		wc.cancel = nil
	}
}

// reset forgets this tick's changes once they are sent.
func (wc *worldChanges) reset() {
	wc.spawnedNow = wc.spawnedNow[:0]
	wc.despawnedNow = wc.despawnedNow[:0]
	wc.structNow = wc.structNow[:0]
	wc.changedNow = wc.changedNow[:0]
}

// encodings holds this tick's encoded values (one per entity and component,
// shared by every client) and mutation blocks. Invariant, kept by begin:
// cache entries and blocks stamped with cacheStamp (the tick being sent)
// point into this tick's cacheBuf and blockBuf, and no others are used;
// compTicks covers every listed slot (growTicks). Blocks are appended to
// blockBuf by block (this file) and by segmentChanged (segments.go),
// which lays this tick's shared blocks side by side.
type encodings struct {
	cache      []cacheEntry
	cacheBuf   []byte
	blockBuf   []byte
	compTicks  []tick.Tick // per entity slot and component: server tick of the last change
	cacheStamp tick.Tick
	// deltaMask: the components whose mutations carry the delta flag
	// (component.delta; the protocol's, whatever ServerConfig.NoDeltas).
	deltaMask uint64
	// jn holds the values of delta-encoded components of the last ticks
	// (journal.go), keyed by entity slot and component: the baselines.
	jn journal
	// bits writes block bodies; segW this tick's segments into segBuf.
	bits   bin.BitWriter
	segW   bin.BitWriter
	segBuf []byte
}

// begin starts the encodings of tick t: what earlier ticks encoded is
// stale.
func (en *encodings) begin(t tick.Tick) {
	en.cacheStamp = t
	en.cacheBuf = en.cacheBuf[:0]
	en.blockBuf = en.blockBuf[:0]
}

// shrink releases the tick's encoding buffers when they are far
// larger than this tick needed: a late joiner's first update encodes the
// whole world once, and the server must not keep that much for good.
// Steady ticks use about the same bytes each tick, so they keep theirs.
func (s *encodings) shrink() {
	if cap(s.cacheBuf) > 1<<20 && 4*len(s.cacheBuf) < cap(s.cacheBuf) {
		s.cacheBuf = nil
	}
	if cap(s.blockBuf) > 1<<20 && 4*len(s.blockBuf) < cap(s.blockBuf) {
		s.blockBuf = nil
	}
}

// growTicks makes room in compTicks for entity slot idx.
func (s *Server) growTicks(idx int) { s.encodings.growTicks(idx, len(s.comps)) }

// growTicks makes room in compTicks for entity slot idx of nComps
// components.
func (s *encodings) growTicks(idx, nComps int) {
	if need := (idx + 1) * nComps; len(s.compTicks) < need {
		s.compTicks = append(s.compTicks, make([]tick.Tick, need-len(s.compTicks))...)
	}
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
			s.jn.clearRange(idx*len(s.comps), len(s.comps))
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
				s.jn.clearRange(idx*len(s.comps), len(s.comps))
			}
			s.listEnt(idx, e, mask, once)
			s.growTicks(idx)
			for k := range s.comps {
				s.compTicks[idx*len(s.comps)+k] = t
			}
			s.spawnedNow = append(s.spawnedNow, uint32(idx))
			se.structAt = t
			continue
		}
		ins, rem := mask&^se.mask, se.mask&^mask
		onceNew := once != se.once
		se.mask, se.once = mask, once
		for m := rem; m != 0; m &= m - 1 {
			s.jn.clear(idx*len(s.comps) + bits.TrailingZeros64(m))
		}
		if ins|rem != 0 || onceNew {
			se.ins, se.rem, se.onceNew = ins, rem, onceNew
			s.structNow = append(s.structNow, uint32(idx))
			se.structAt = t
		}
	}
	s.touched = s.touched[:0]
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
	// Components with a send interval: those due at t, and those not.
	var due, notDue uint64
	for id, c := range s.comps {
		if n := c.info().every; n > 1 {
			if uint32(t)%uint32(n) == 0 {
				due |= 1 << uint(id)
			} else {
				notDue |= 1 << uint(id)
			}
		}
	}
	if due != 0 {
		s.releaseHeld(t, due)
	}
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
			if notDue&bit != 0 {
				if se.held == 0 {
					s.held = append(s.held, uint32(idx))
				}
				se.held |= bit
				continue
			}
			if se.chg == t {
				continue
			}
			se.chg = t
			s.changedNow = append(s.changedNow, uint32(idx))
		}
	}
}

// releaseHeld lets the held changes of the components due at t go out:
// their entities join this tick's changes. An entity keeps its place in
// the list while it holds others.
func (s *Server) releaseHeld(t tick.Tick, due uint64) {
	k := 0
	for _, idx := range s.held {
		se := &s.ents[idx]
		if r := se.held & due; r != 0 {
			se.held &^= r
			// They count as changed now: a send since their change left
			// them out, and its ack must not cover them.
			ticks := s.compTicks[int(idx)*len(s.comps) : (int(idx)+1)*len(s.comps)]
			for m := r; m != 0; m &= m - 1 {
				ticks[bits.TrailingZeros64(m)] = t
			}
			if se.listed && se.chg != t {
				se.chg = t
				s.changedNow = append(s.changedNow, idx)
			}
		}
		if se.held != 0 { // (a slot listed anew since has held 0: dropped)
			s.held[k] = idx
			k++
		}
	}
	s.held = s.held[:k]
}

type cacheEntry struct {
	stamp tick.Tick
	off   uint32
	n     uint32
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
		checkFixed(s.p.comps[id].fixed, int(ce.n), s.p.comps[id].name)
	}
	return s.cacheBuf[ce.off : ce.off+ce.n]
}

// appendComponents appends the component mask and the values of the
// components in mask (length-prefixed only for variable-size codecs).
func (s *Server) appendComponents(dst []byte, idx int, mask uint64) []byte {
	return s.appendValues(binary.AppendUvarint(dst, mask), idx, mask)
}

// appendValues appends the values of the components in mask, in id order
// (length-prefixed only for variable-size codecs).
func (s *Server) appendValues(dst []byte, idx int, mask uint64) []byte {
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

// block returns the body of entity idx's mutation block (the values in
// mask) and its length in bits, built once per tick, mask and baseline and
// shared by every client: with base, the values of delta-encoded
// components travel as their change from their values at tick base where
// the journal holds those (else the body is absolute).
func (s *Server) block(idx int, mask uint64, base tick.Tick, useBase bool) ([]byte, int) {
	se := &s.ents[idx]
	if !useBase || s.cfg.NoDeltas || mask&s.deltaMask == 0 || s.tick.Sub(base) > deltaMaxAge || !base.Before(s.tick) {
		useBase, base = false, 0
	}
	if se.blkStamp != s.cacheStamp || se.blkMask != mask || se.blkBase != base || se.blkDelta != useBase {
		off := len(s.blockBuf)
		var nb int
		s.blockBuf, nb = s.appendBody(s.blockBuf, idx, mask, base, useBase)
		se.blkStamp, se.blkMask, se.blkOff, se.blkLen, se.blkBits = s.cacheStamp, mask, uint32(off), uint32(len(s.blockBuf)-off), uint32(nb)
		se.blkBase, se.blkDelta = base, useBase
	}
	return s.blockBuf[se.blkOff : se.blkOff+se.blkLen], int(se.blkBits)
}

// appendBody appends the bit-packed body of entity idx's mutation block
// with the values in mask, padded to a byte, and returns its length in
// bits: the mask, then deltas from the values at tick base (useBase) when
// the journal holds every one of them, then the absolute values (the form
// is in wire.go).
func (s *Server) appendBody(dst []byte, idx int, mask uint64, base tick.Tick, useBase bool) ([]byte, int) {
	nc := len(s.comps)
	w := &s.bits
	w.Reset(dst)
	start := w.Len()
	w.WriteBits(mask, nc)
	abs := mask
	if dm := mask & s.deltaMask; dm != 0 {
		if useBase {
			oldest := s.tick - deltaMaxAge
			for m := dm; m != 0; m &= m - 1 {
				id := bits.TrailingZeros64(m)
				if _, et, ok := s.jn.atTick(idx*nc+id, base, s.p.comps[id].fixed); !ok || et.Before(oldest) {
					useBase = false
					break
				}
			}
		}
		w.WriteBool(useBase)
		if useBase {
			abs &^= dm
			w.WriteExpGolomb(uint64(s.tick.Sub(base)-1), 0)
			for m := dm; m != 0; m &= m - 1 {
				id := bits.TrailingZeros64(m)
				c := s.p.comps[id]
				b, _ := s.jn.at(idx*nc+id, base, c.fixed)
				appendFieldDelta(w, c.delta, b, s.value(idx, id))
			}
		}
	}
	for m := abs; m != 0; m &= m - 1 {
		id := bits.TrailingZeros64(m)
		v := s.value(idx, id)
		if s.p.comps[id].fixed == 0 {
			w.WriteExpGolomb(uint64(len(v)), valueLenOrder)
		}
		w.WriteBitsFrom(v, 8*len(v))
	}
	n := w.Len() - start
	return w.Finish(), n
}

// valueLenOrder is the exponential-Golomb order of a variable-size value's
// length in a mutation block.
const valueLenOrder = 4

// recordValues notes in the journal this tick's values of the delta-encoded
// components that changed (and go out: not held back, not Once), the
// baselines of later deltas.
func (s *Server) recordValues(t tick.Tick) {
	// Every change is recorded, with clients or not: a baseline is the
	// newest entry at or before its tick, so a change left out would make
	// an older value pass for it.
	if s.deltaMask == 0 {
		return
	}
	nc := len(s.comps)
	for _, list := range [...][]uint32{s.changedNow, s.spawnedNow, s.structNow} {
		for _, idx := range list {
			i := int(idx)
			se := &s.ents[i]
			if !se.listed {
				continue
			}
			ticks := s.compTicks[i*nc : (i+1)*nc]
			for m := se.mask &^ se.once &^ se.held & s.deltaMask; m != 0; m &= m - 1 {
				id := bits.TrailingZeros64(m)
				if ticks[id] == t {
					s.jn.record(i*nc+id, t, s.value(i, id))
				}
			}
		}
	}
}
