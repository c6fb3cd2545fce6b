package ecs

import (
	"fmt"
	"reflect"
	"slices"
)

// ComponentID identifies a registered component or resource type within one
// World. IDs are assigned in registration order.
type ComponentID int

// TypeInfo describes a registered component or resource type.
type TypeInfo struct {
	ID   ComponentID
	Name string // stable name: package path + "." + type name
	Type reflect.Type
}

// Ticks are the change ticks of one component value or resource: the world tick
// at which it was added and at which it was last written. A tick of 0 means never.
type Ticks struct {
	Added   uint64
	Changed uint64
}

// AddedSince reports whether the value was added after tick t.
func (k Ticks) AddedSince(t uint64) bool { return k.Added > t }

// ChangedSince reports whether the value was written (or added) after tick t.
func (k Ticks) ChangedSince(t uint64) bool { return k.Changed > t }

// storage is the type-erased side of a Store.
type storage interface {
	info() *TypeInfo
	isLocked() bool
	has(e Entity) bool
	removeEntity(e Entity) bool
	purgeDead() // drop entries whose entity is no longer alive
	restoredAt() uint64
	releaseLocks()
}

// World holds entities, their components and resources. A World is not safe
// for concurrent use; simulation code runs on one goroutine (see the package
// documentation for the determinism rules).
type World struct {
	ents      entities
	stores    []storage
	byType    map[reflect.Type]storage
	resources []resourceStorage
	resByType map[reflect.Type]resourceStorage
	tick      uint64
	seq       uint64 // source of world-unique layout identifiers
	observers []observer
	nextObs   int
	restore   Restore // the snapshot load in progress (see BeginRestore)
	hier      *Store[Hierarchy]
	// lockGen changes when a snapshot load releases the stores' iteration
	// locks; an iterator unlocks its stores only if it has not changed since
	// it locked them.
	lockGen uint64
	checks  bool // see SetChecks
}

// New returns an empty World. The Hierarchy component is registered in every
// World (it is what SetParent and DespawnRecursive use).
func New() *World {
	w := &World{
		byType:    make(map[reflect.Type]storage),
		resByType: make(map[reflect.Type]resourceStorage),
		tick:      1,
	}
	w.ents.layout = w.nextLayout()
	w.hier = Register[Hierarchy](w)
	return w
}

func (w *World) nextLayout() uint64 {
	w.seq++
	return w.seq
}

// Tick returns the current change tick. Every write is stamped with the tick
// current at the time of the write. A change tick is not a frame number
// (rollback.Frame, tick.Tick): saves advance it and loads never wind it back.
func (w *World) Tick() uint64 { return w.tick }

// AdvanceTick increments the change tick and returns the new value. A reader
// that wants "what changed since now" remembers Tick(), then calls AdvanceTick
// so that later writes carry a larger tick. Snapshot saves advance the tick.
// Change ticks are a 64-bit count that does not wrap in practice; they are
// bookkeeping for observers, not simulation state, and are never rolled back.
func (w *World) AdvanceTick() uint64 {
	w.tick++
	return w.tick
}

// SetChecks turns checked mode on or off. In checked mode, Read access in
// query loops hands out pointers to copies of the stored values (a chunk of
// up to 256 entities at a time) and, after each chunk, compares them with the
// values as they were: a loop whose body wrote through a Read pointer or a
// Read slice of a batch panics, when it ends or breaks and after unlocking
// its stores, with an error wrapping ErrWriteThroughRead that names the
// component type and the first entity written; the write does not reach the
// World. Get hands out a pointer to a copy for Read access. Checks
// compare a value's own bytes, not memory it references (the elements of a
// slice it holds, for example). Turn it on in tests and SyncTest runs; it
// costs a copy and a comparison of every value read. A loop keeps the mode
// it started in. The default is off.
func (w *World) SetChecks(on bool) { w.checks = on }

// Checks reports whether checked mode is on (see SetChecks).
func (w *World) Checks() bool { return w.checks }

// Len returns the number of live entities.
func (w *World) Len() int { return w.ents.alive }

// Alive reports whether e is a live entity of w.
func (w *World) Alive(e Entity) bool { return w.ents.isAlive(e) }

// Spawn creates an entity with no components. Spawning is allowed while a query
// iterates (it does not touch component storage).
func (w *World) Spawn() Entity {
	e := w.ents.spawn()
	w.ents.layout = w.nextLayout()
	w.emit(Event{Kind: Spawned, Entity: e})
	return e
}

// Grow makes room for n more entities, so that the next n Spawns do not
// reallocate the World's entity table: for loaders that spawn many
// entities at once. It changes nothing else.
func (w *World) Grow(n int) {
	if n > len(w.ents.free) {
		w.ents.slots = slices.Grow(w.ents.slots, n-len(w.ents.free))
	}
}

// SpawnAt creates the entity e with exactly its index and generation, for
// layers that need caller-chosen identities. It fails with ErrSlotInUse when a
// live entity holds the index, and with ErrNotAlive for the zero Entity or a
// zero generation. Slots below the index that did not exist yet become free.
func (w *World) SpawnAt(e Entity) error {
	if e.Generation() == 0 {
		return fmt.Errorf("%w: %v has generation 0", ErrNotAlive, e)
	}
	a := &w.ents
	i := e.Index()
	if n := uint32(len(a.slots)); n <= i {
		// New slots below i enter the free list highest index first, so the
		// LIFO free list hands them out in ascending order.
		for k := i; k > n; k-- {
			a.free = append(a.free, k-1)
		}
		for uint32(len(a.slots)) <= i {
			a.slots = append(a.slots, EntitySlot{Gen: 1})
		}
	}
	if a.slots[i].Alive {
		return fmt.Errorf("%w: %v", ErrSlotInUse, NewEntity(i, a.slots[i].Gen))
	}
	for k, f := range a.free {
		if f == i {
			a.free = append(a.free[:k], a.free[k+1:]...)
			break
		}
	}
	a.slots[i] = EntitySlot{Gen: e.Generation(), Alive: true}
	a.alive++
	a.layout = w.nextLayout()
	w.emit(Event{Kind: Spawned, Entity: e})
	return nil
}

// Despawn removes e and all its components. Its children (see SetParent) are
// detached and stay alive; use DespawnRecursive to remove a whole subtree.
func (w *World) Despawn(e Entity) error {
	if !w.ents.isAlive(e) {
		return fmt.Errorf("%w: %v", ErrNotAlive, e)
	}
	if w.entityLocked(e) {
		return fmt.Errorf("%w: despawn %v", ErrLocked, e)
	}
	w.detachAll(e)
	for _, s := range w.stores {
		s.removeEntity(e)
	}
	w.ents.despawn(e)
	w.ents.layout = w.nextLayout()
	w.emit(Event{Kind: Despawned, Entity: e})
	return nil
}

// Types returns the registered component types in registration order.
func (w *World) Types() []TypeInfo {
	out := make([]TypeInfo, len(w.stores))
	for i, s := range w.stores {
		out[i] = *s.info()
	}
	return out
}

// EntityState returns the allocator state (see EntityState). The slices are
// views into the World.
func (w *World) EntityState() EntityState {
	return EntityState{Layout: w.ents.layout, Slots: w.ents.slots, Free: w.ents.free}
}

// entityLocked reports whether a Store holding a component of e is being iterated.
func (w *World) entityLocked(e Entity) bool {
	for _, s := range w.stores {
		if s.isLocked() && s.has(e) {
			return true
		}
	}
	return false
}
