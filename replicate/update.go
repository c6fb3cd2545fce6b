package replicate

// Each client's update message of the tick: spawns (with entity mappings),
// despawns, removals and insertions.

import (
	"encoding/binary"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

func (s *Server) spawnOn(c *serverClient, idx int, t tick.Tick) {
	se := &s.ents[idx]
	ce := s.syncGen(c, idx)
	c.markSpawned(ce, idx)
	c.lastSpawn, ce.spawnTick = t, t
	ce.ackedTick, ce.sentTick = t, t
	if ce, ok := c.claims.take(se.e); ok {
		c.secMap = appendEntity(c.secMap, se.e)
		c.secMap = appendEntity(c.secMap, ce)
		c.nMap++
	}
	s.appendInsert(c, idx, se.mask, true)
}

// appendInsert adds to c's update an insertion entry of entity slot idx
// with the components of mask (spawn: the entry spawns the entity on the
// client).
func (s *Server) appendInsert(c *serverClient, idx int, mask uint64, spawn bool) {
	c.secIns = appendEntity(c.secIns, s.ents[idx].e)
	flags := b2u8(spawn)
	byRule := s.ents[idx].once &^ s.onceTypes
	if byRule != 0 {
		flags |= insertOnce
	}
	c.secIns = append(c.secIns, flags)
	if byRule != 0 {
		c.secIns = binary.AppendUvarint(c.secIns, byRule)
	}
	c.secIns = s.appendComponents(c.secIns, idx, mask)
	c.nIns++
}

func (s *Server) despawnOn(c *serverClient, idx int, e ecs.Entity) {
	c.markDespawned(s.ce(c, idx), idx)
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
	if s.joinTimedOut(c) {
		return
	}
	s.expire(c)
	c.claims.expire(s.now)
	s.startResync(c, t)
	if c.gone {
		return
	}

	// Despawns first: a slot may be despawned and reused in one tick.
	for _, e := range s.despawnedNow {
		idx := int(e.Index())
		ce := s.ce(c, idx)
		if ce.flags&ceSpawned != 0 && ce.gen == e.Generation() {
			s.despawnOn(c, idx, e)
		}
	}
	s.applyVisibility(c, t)
	if c.takeFresh() {
		// A new client gets everything it may see.
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
		if m := (se.ins | s.pendingMask(i, ce)) & se.mask; m != 0 || se.onceNew {
			s.appendInsert(c, i, m, false)
		}
		ce.ackedTick, ce.sentTick = t, t
	}
	s.resourceSection(c, t)
	if c.nMap+c.nDesp+c.nRem+c.nIns+c.nRes > 0 || c.forcing {
		b := appendUpdate(c.upd[:0], t, c.nMap, c.secMap, c.nDesp, c.secDesp, c.nRem, c.secRem, c.nIns, c.secIns)
		b = appendResourceSection(b, c.nRes, c.secRes)
		c.upd = b
		sent := s.sendUpdate(c, b)
		if cap(c.upd) > shrinkAbove { // a late joiner's full state: do not keep its buffers
			c.upd, c.secIns, c.secMap, c.secDesp, c.secRem = nil, nil, nil, nil, nil
		}
		if !sent {
			return
		}
		c.lastUpdate = t
		if c.nMap+c.nDesp+c.nRem+c.nIns > 0 || s.reportTick(t) {
			// Mutations need this update: its entities, or (on a checksum
			// report tick) its resources, so that the client's complete
			// tick is the server's state at t (desync.go).
			c.entitiesSent(t)
		}
	}
	if c.backOff < len(c.backlog) && !s.flushBacklog(c) {
		return
	}
	if c.backOff == len(c.backlog) {
		c.joined(s.now) // the first update is all on its way
	}
	s.startMutations(c, t)
}
