package replicate

// Visibility (per client and entity) and priority.

import (
	"fmt"
	"math"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// SetVisible shows or hides entity e to client id from the next Send. An
// entity that becomes visible is sent whole; one that becomes hidden is
// despawned on that client.
func (s *Server) SetVisible(id ClientID, e ecs.Entity, visible bool) error {
	c := s.client(id)
	if c == nil {
		return ErrNotConnected
	}
	v := uint8(2)
	if visible {
		v = 1
	} else {
		c.markFiltered()
	}
	if !c.queueVisibility(visChange{e: e, vis: v}) {
		return fmt.Errorf("%w: visibility queue full", ErrTooLarge)
	}
	return nil
}

// SetPriority sets the send priority of entity e's mutations (default 1):
// changes are sent when priority × ticks since the last send reaches 1, so
// 0.25 sends at most every 4th tick; low priorities never starve.
func (s *Server) SetPriority(e ecs.Entity, priority float32) {
	if priority <= 0 || math.IsNaN(float64(priority)) {
		priority = 1
	}
	idx := int(e.Index())
	s.grow(idx)
	if s.ents[idx].prio < 1 && priority >= 1 {
		// Values the entity's priority held back go out next tick: no
		// client takes whole segments until that tick is acknowledged.
		s.raise(s.tick + 1)
	}
	s.ents[idx].prio = priority
}

type visChange struct {
	e   ecs.Entity
	vis uint8
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
			c.markDespawned(ce, idx)
		}
		*ce = clientEnt{gen: gen}
	}
	return ce
}

// The client's spawn bookkeeping: an entity state's ceSpawned flag, the
// count of spawned entities (clientUpdate.spawned), the shown set (spawned
// before this tick) and this tick's newSpawns change together, by
// markSpawned, markDespawned, forgetSpawns and showNewSpawns only.

// markSpawned notes that entity slot idx (state ce) is spawned on the
// client in this tick's update.
func (c *serverClient) markSpawned(ce *clientEnt, idx int) {
	ce.flags |= ceSpawned
	c.spawned++
	c.newSpawns = append(c.newSpawns, uint32(idx))
}

// markDespawned notes that entity slot idx (state ce, spawned) is no
// longer spawned on the client.
func (c *serverClient) markDespawned(ce *clientEnt, idx int) {
	ce.flags &^= ceSpawned
	c.spawned--
	c.setShown(idx, false)
}

// forgetSpawns notes that nothing is spawned on the client (a full
// resync, which also clears every entity state).
func (c *serverClient) forgetSpawns() {
	c.spawned = 0
	clear(c.shown)
}

// showNewSpawns moves this tick's spawns that are still spawned into the
// shown set, at the end of the tick.
func (c *serverClient) showNewSpawns() {
	for _, idx := range c.newSpawns {
		if i := int(idx); c.ent(i).flags&ceSpawned != 0 {
			c.setShown(i, true)
		}
	}
	c.newSpawns = c.newSpawns[:0]
	if cap(c.newSpawns) > 256 { // a late joiner's first tick
		c.newSpawns = nil
	}
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

// applyVisibility applies the client's visibility changes queued since the
// last tick (SetVisible) to its update of tick t: an entity that becomes
// visible is spawned on it (a fresh client gets every visible entity
// anyway), one that becomes hidden is despawned.
func (s *Server) applyVisibility(c *serverClient, t tick.Tick) {
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
}

// queueVisibility queues a visibility change for the next tick; false
// when the queue is full (2^20 changes).
func (v *clientView) queueVisibility(vc visChange) bool {
	if len(v.visQueue) >= 1<<20 {
		return false
	}
	v.visQueue = append(v.visQueue, vc)
	return true
}

// takeDeferred returns the entities deferred last tick and starts this
// tick's list empty (the two buffers swap: no allocation in steady state).
func (v *clientView) takeDeferred() []uint32 {
	d := v.deferred
	v.deferred, v.deferred2 = v.deferred2[:0], d
	return d
}

// deferEnt defers entity slot idx to the next tick.
func (v *clientView) deferEnt(idx uint32) { v.deferred = append(v.deferred, idx) }
