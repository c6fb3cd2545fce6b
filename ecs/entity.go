package ecs

import (
	"fmt"
	"iter"
)

// Entity identifies an entity in a World: a 32-bit slot index and a 32-bit
// generation. The generation changes every time a slot is reused, so an Entity
// kept after its despawn never refers to a newer entity in the same slot.
//
// The zero Entity is never alive; use it as "no entity". Entity values are plain
// data: they can be stored in components with the copy snapshot strategy, and a
// snapshot load brings despawned entities back with exactly the same values.
type Entity uint64

// NewEntity builds an Entity from a slot index and a generation. Game code gets
// entities from World.Spawn; NewEntity exists for codecs and tests.
func NewEntity(index, generation uint32) Entity {
	return Entity(uint64(generation)<<32 | uint64(index))
}

// Index returns the slot index of e.
func (e Entity) Index() uint32 { return uint32(e) }

// Generation returns the generation of e. Live entities have a generation of at least 1.
func (e Entity) Generation() uint32 { return uint32(e >> 32) }

// IsZero reports whether e is the zero Entity ("no entity").
func (e Entity) IsZero() bool { return e == 0 }

// Bits returns e as a uint64 (index in the low 32 bits, generation in the high
// 32 bits), a stable form for wire formats and for deriving per-entity RNG streams.
func (e Entity) Bits() uint64 { return uint64(e) }

// String formats e as "index.vgeneration", for example "7v2"; the zero Entity is "none".
func (e Entity) String() string {
	if e == 0 {
		return "none"
	}
	return fmt.Sprintf("%dv%d", e.Index(), e.Generation())
}

// EntitySlot is the allocator record of one slot index: its current generation
// and whether the entity with that generation is alive. It is plain data, part of
// EntityState.
type EntitySlot struct {
	Gen   uint32
	Alive bool
}

// entities is the allocator: a slot per index and a LIFO free list. The free list
// order is state: it decides which Entity the next Spawn returns, so it is saved
// and restored with snapshots and covered by checksums.
type entities struct {
	slots  []EntitySlot
	free   []uint32
	alive  int
	layout uint64 // changes (to a fresh world-unique value) on every spawn or despawn
}

func (a *entities) isAlive(e Entity) bool {
	i := e.Index()
	return e != 0 && int(i) < len(a.slots) && a.slots[i].Alive && a.slots[i].Gen == e.Generation()
}

func (a *entities) spawn() Entity {
	if n := len(a.free); n > 0 {
		i := a.free[n-1]
		a.free = a.free[:n-1]
		s := &a.slots[i]
		s.Alive = true
		a.alive++
		return NewEntity(i, s.Gen)
	}
	i := uint32(len(a.slots))
	a.slots = append(a.slots, EntitySlot{Gen: 1, Alive: true})
	a.alive++
	return NewEntity(i, 1)
}

func (a *entities) despawn(e Entity) {
	s := &a.slots[e.Index()]
	s.Alive = false
	s.Gen++
	if s.Gen == 0 { // generation 0 is reserved for the zero Entity
		s.Gen = 1
	}
	a.free = append(a.free, e.Index())
	a.alive--
}

// EntityState is the allocator state of a World: every slot's generation and
// liveness and the free list. It is what a snapshot saves to bring back the same
// entity identities and the same future Spawn results. Slices returned by
// World.EntityState are views into the World: copy them, never modify them.
type EntityState struct {
	// Layout is a world-unique identifier of this exact allocator state: two
	// states with the same Layout of the same World are identical.
	Layout uint64
	Slots  []EntitySlot
	Free   []uint32
}

// Entities returns the live entities in slot index order.
func (w *World) Entities() iter.Seq[Entity] {
	return func(yield func(Entity) bool) {
		for i, s := range w.ents.slots {
			if s.Alive && !yield(NewEntity(uint32(i), s.Gen)) {
				return
			}
		}
	}
}
