package ecs

import (
	"fmt"
	"iter"
	"reflect"
	"slices"

	"github.com/rewindgo/rewind/internal/typename"
)

// Store holds every value of one component type T in dense arrays (a sparse
// set): values, their entities and their change ticks sit in parallel slices in
// a deterministic order that depends only on the sequence of operations. Get a
// Store from Register or StoreOf; it stays valid for the life of its World.
type Store[T any] struct {
	w       *World
	ti      TypeInfo
	dense   []T
	ents    []Entity
	added   []uint64
	changed []uint64
	sparse  []int32 // slot index -> dense position + 1; 0 = absent

	// spare buffers reused by restore so a load allocates nothing in steady state
	spareEnts    []Entity
	spareAdded   []uint64
	spareChanged []uint64
	spareDense   []T

	layout     uint64 // world-unique id of the current entity layout
	maxChanged uint64 // no value has a Changed tick above this
	restored   uint64 // epoch of the last load that restored this Store
	locks      int    // queries currently iterating this store
}

// Register registers component type T with w and returns its Store. Registering
// a type twice returns the same Store.
func Register[T any](w *World) *Store[T] {
	t := reflect.TypeFor[T]()
	if s, ok := w.byType[t]; ok {
		return s.(*Store[T])
	}
	s := &Store[T]{w: w, ti: TypeInfo{ID: ComponentID(len(w.stores)), Name: typename.Of(t), Type: t}}
	s.layout = w.nextLayout()
	w.stores = append(w.stores, s)
	w.byType[t] = s
	return s
}

// StoreOf returns the Store of T, or nil if T was not registered with w
// (by Register, or by snapshot.Copy, Clone or Codec, which call it). Use
// Register where the type may not be registered yet: it returns the
// existing Store when it is. The methods of a nil Store panic with a
// message that names T and says so.
func StoreOf[T any](w *World) *Store[T] {
	s, _ := w.byType[reflect.TypeFor[T]()].(*Store[T])
	return s
}

// Info describes the component type.
func (s *Store[T]) Info() TypeInfo { return s.ti }

func (s *Store[T]) info() *TypeInfo { return &s.ti }

// World returns the World the Store belongs to.
func (s *Store[T]) World() *World { return s.w }

// Len returns the number of entities that have a T.
func (s *Store[T]) Len() int {
	s.registered()
	return len(s.dense)
}

// registered panics, naming T, when s is nil: the Store of a type never
// registered (StoreOf returned nil).
func (s *Store[T]) registered() {
	if s == nil {
		panicUnregistered(reflect.TypeFor[T]())
	}
}

//go:noinline
func panicUnregistered(t reflect.Type) {
	panic(fmt.Sprintf("ecs: nil *Store[%s]: %s was never registered with the World, so ecs.StoreOf returned nil; "+
		"get the Store from ecs.Register (or register the type with snapshot.Copy, Clone or Codec first)", t, typename.Of(t)))
}

func (s *Store[T]) pos(e Entity) int {
	i := e.Index()
	if int(i) < len(s.sparse) {
		if p := int(s.sparse[i]) - 1; p >= 0 && s.ents[p] == e {
			return p
		}
	}
	return -1
}

func (s *Store[T]) has(e Entity) bool { return s.pos(e) >= 0 }

// Has reports whether e has a T. It is false for dead or stale entities.
func (s *Store[T]) Has(e Entity) bool {
	s.registered()
	return s.pos(e) >= 0
}

// Get returns a copy of e's T. The result is the zero T and false when e has
// no T, is dead or is stale. Get does not count as a write.
func (s *Store[T]) Get(e Entity) (T, bool) {
	s.registered()
	if p := s.pos(e); p >= 0 {
		return s.dense[p], true
	}
	var zero T
	return zero, false
}

// Ticks returns the change ticks of e's T.
func (s *Store[T]) Ticks(e Entity) (Ticks, bool) {
	s.registered()
	if p := s.pos(e); p >= 0 {
		return Ticks{Added: s.added[p], Changed: s.changed[p]}, true
	}
	return Ticks{}, false
}

// Ptr returns a pointer to e's T for reading and writing, or nil when e has no
// T. Handing out the pointer counts as a write at the current tick, so a write
// through it is never missed by change detection. The pointer is valid until
// the next structural change of this Store; do not keep it.
func (s *Store[T]) Ptr(e Entity) *T {
	s.registered()
	p := s.pos(e)
	if p < 0 {
		return nil
	}
	s.mark(p)
	return &s.dense[p]
}

func (s *Store[T]) mark(p int) {
	s.changed[p] = s.w.tick
	s.maxChanged = s.w.tick
}

// Set gives e the value v: it overwrites an existing T (a write) or inserts a
// new one (a structural change, refused with ErrLocked while a query iterates
// this Store). It fails with ErrNotAlive for dead or stale entities.
func (s *Store[T]) Set(e Entity, v T) error {
	s.registered()
	if p := s.pos(e); p >= 0 {
		s.dense[p] = v
		s.mark(p)
		return nil
	}
	if !s.w.ents.isAlive(e) {
		return fmt.Errorf("%w: %v", ErrNotAlive, e)
	}
	if s.locks > 0 {
		return fmt.Errorf("%w: insert %s", ErrLocked, s.ti.Name)
	}
	s.insert(e, v)
	s.w.emit(Event{Kind: Inserted, Entity: e, Component: s.ti.ID})
	return nil
}

// SetIfChanged is Set for comparable types that skips the write (and the
// change tick) when e already holds an equal value. It reports whether it wrote.
func SetIfChanged[T comparable](s *Store[T], e Entity, v T) (bool, error) {
	if p := s.pos(e); p >= 0 && s.dense[p] == v {
		return false, nil
	}
	return true, s.Set(e, v)
}

// Grow makes room for n more values, so that the next n inserts do not
// reallocate the Store's dense arrays (values, entities, change ticks;
// the sparse index grows with the entities' indices): for loaders that insert many values at
// once. It changes nothing else.
func (s *Store[T]) Grow(n int) {
	if n <= 0 {
		return
	}
	s.dense = slices.Grow(s.dense, n)
	s.ents = slices.Grow(s.ents, n)
	s.added = slices.Grow(s.added, n)
	s.changed = slices.Grow(s.changed, n)
}

func (s *Store[T]) insert(e Entity, v T) {
	i := int(e.Index())
	if i >= len(s.sparse) {
		s.sparse = append(s.sparse, make([]int32, max(i+1, len(s.w.ents.slots))-len(s.sparse))...)
	}
	s.dense = append(s.dense, v)
	s.ents = append(s.ents, e)
	s.added = append(s.added, s.w.tick)
	s.changed = append(s.changed, s.w.tick)
	s.sparse[i] = int32(len(s.dense))
	s.maxChanged = s.w.tick
	s.layout = s.w.nextLayout()
}

// Remove removes e's T. Removing a T that e does not have is not an error;
// a dead or stale entity gives ErrNotAlive, and a Store being iterated gives
// ErrLocked.
func (s *Store[T]) Remove(e Entity) error {
	s.registered()
	if !s.w.ents.isAlive(e) {
		return fmt.Errorf("%w: %v", ErrNotAlive, e)
	}
	p := s.pos(e)
	if p < 0 {
		return nil
	}
	if s.locks > 0 {
		return fmt.Errorf("%w: remove %s", ErrLocked, s.ti.Name)
	}
	s.removeAt(p)
	s.w.emit(Event{Kind: Removed, Entity: e, Component: s.ti.ID})
	return nil
}

func (s *Store[T]) removeEntity(e Entity) bool {
	if p := s.pos(e); p >= 0 {
		s.removeAt(p)
		return true
	}
	return false
}

// removeAt swap-removes dense position p.
func (s *Store[T]) removeAt(p int) {
	last := len(s.dense) - 1
	s.sparse[s.ents[p].Index()] = 0
	if p != last {
		s.dense[p] = s.dense[last]
		s.ents[p] = s.ents[last]
		s.added[p] = s.added[last]
		s.changed[p] = s.changed[last]
		s.sparse[s.ents[p].Index()] = int32(p + 1)
	}
	var zero T
	s.dense[last] = zero // drop references held by the removed value
	s.dense = s.dense[:last]
	s.ents = s.ents[:last]
	s.added = s.added[:last]
	s.changed = s.changed[:last]
	s.layout = s.w.nextLayout()
}

func (s *Store[T]) purgeDead() {
	for p := len(s.ents) - 1; p >= 0; p-- {
		if !s.w.ents.isAlive(s.ents[p]) {
			s.removeAt(p)
		}
	}
}

func (s *Store[T]) restoredAt() uint64 { return s.restored }
func (s *Store[T]) isLocked() bool     { return s.locks > 0 }
func (s *Store[T]) releaseLocks()      { s.locks = 0 }

// All iterates over every entity with a T and a pointer to its value, in dense
// order. Every value handed out is marked as written at the current tick. The
// Store is locked against inserts and removals while the loop runs (if the
// loop body panics, until the next snapshot load; see Query1.All).
func (s *Store[T]) All() iter.Seq2[Entity, *T] {
	s.registered()
	return func(yield func(Entity, *T) bool) {
		gen := s.lock()
		now := s.w.tick
		if len(s.dense) > 0 {
			s.maxChanged = now
		}
		dense, ents, changed := s.dense, s.ents[:len(s.dense)], s.changed[:len(s.dense)]
		for p := range dense {
			changed[p] = now
			if !yield(ents[p], &dense[p]) {
				break
			}
		}
		s.unlock(gen)
	}
}

// Values iterates over every entity with a T and a copy of its value, in dense
// order, without marking anything as written. It locks the Store like All.
func (s *Store[T]) Values() iter.Seq2[Entity, T] {
	s.registered()
	return func(yield func(Entity, T) bool) {
		gen := s.lock()
		dense, ents := s.dense, s.ents[:len(s.dense)]
		for p := range dense {
			if !yield(ents[p], dense[p]) {
				break
			}
		}
		s.unlock(gen)
	}
}

// lock and unlock bracket an iteration (see Query1.start).
func (s *Store[T]) lock() (gen uint64) {
	s.locks++
	return s.w.lockGen
}

func (s *Store[T]) unlock(gen uint64) {
	if s.w.lockGen == gen {
		s.locks--
	}
}

// Column is a read-only view of a Store's dense arrays, for snapshot,
// checksum and replication layers. All slices have the same length and are
// views into the Store: never modify them, and do not keep them across
// structural changes.
type Column[T any] struct {
	Layout   uint64 // world-unique id of this entity layout
	Entities []Entity
	Values   []T
	Added    []uint64
	Changed  []uint64
	// MaxChanged is an upper bound of Changed.
	MaxChanged uint64
}

// Column returns the read-only view of the Store's arrays.
func (s *Store[T]) Column() Column[T] {
	return Column[T]{Layout: s.layout, Entities: s.ents, Values: s.dense, Added: s.added, Changed: s.changed, MaxChanged: s.maxChanged}
}
