package ecs

// Restore is the restore protocol through which a World's stores are set
// back to saved values: BeginRestore, then RestoreStore for every store
// restored, then Finish. Two packages use it: snapshot loads a saved frame
// (snapshot.Ring.Load, allocator included), and predict restores its
// predicted types for a rollback (with the World's current allocator
// state, so entity identity is never undone). Game code never uses it.
// A World has one Restore, reused by every load, so a load allocates
// nothing in steady state. Loading from inside a query loop is not
// supported.
type Restore struct {
	w      *World
	epoch  uint64  // counts loads; a store restored in this load holds it
	events []Event // the structural events of this load, delivered by Finish
}

// BeginRestore starts a load of w (a restore): it restores the entity
// allocator to st (entities alive now but not in st die; entities of st
// come back with their identity) and returns w's Restore.
//
// A load also releases the iteration locks of every Store. Iterators unlock
// their stores when the loop ends, returns or breaks, but not when the loop
// body panics (they have no deferred cleanup, so that loops compile to plain
// code): a program that recovers from such a panic restores a saved frame,
// and the load leaves no store locked.
func BeginRestore(w *World, st EntityState) *Restore {
	r := &w.restore
	r.w = w
	r.epoch++
	w.releaseLocks()
	if st.Layout == w.ents.layout {
		return r
	}
	old := w.ents.slots
	n := max(len(old), len(st.Slots))
	for i := range n {
		var o, s EntitySlot
		if i < len(old) {
			o = old[i]
		}
		if i < len(st.Slots) {
			s = st.Slots[i]
		}
		if o.Alive && (!s.Alive || o.Gen != s.Gen) {
			r.events = append(r.events, Event{Kind: Despawned, Entity: NewEntity(uint32(i), o.Gen)})
		}
		if s.Alive && (!o.Alive || o.Gen != s.Gen) {
			r.events = append(r.events, Event{Kind: Spawned, Entity: NewEntity(uint32(i), s.Gen)})
		}
	}
	w.ents.slots = append(w.ents.slots[:0], st.Slots...)
	w.ents.free = append(w.ents.free[:0], st.Free...)
	alive := 0
	for _, s := range st.Slots {
		if s.Alive {
			alive++
		}
	}
	w.ents.alive = alive
	w.ents.layout = st.Layout
	return r
}

// Finish ends the load: components of stores that were not
// restored are removed from entities that no longer exist, and the
// structural events of the load are delivered to observers.
func (r *Restore) Finish() {
	w := r.w
	for _, s := range w.stores {
		if s.restoredAt() != r.epoch {
			s.purgeDead()
		}
	}
	evs := r.events
	r.events = evs[:0]
	for _, ev := range evs {
		w.emit(ev)
	}
}

// releaseLocks unlocks every Store; iterations still running will not unlock
// them again (see lockGen).
func (w *World) releaseLocks() {
	w.lockGen++
	for _, s := range w.stores {
		s.releaseLocks()
	}
}

// RestoreStore is the step of a load r that restores s (a Store of the
// World being loaded). It sets s's entity layout to the one identified by
// layout (whose entities, in dense order, are ents), as saved at change
// tick savedTick, and returns the value and Changed-tick slices in the
// restored layout, for the caller to overwrite with the saved values.
// Values of entities that keep the component hold their pre-load content
// (moved to their restored position) and their ticks; components that come
// back hold the zero value and are stamped with the current tick.
//
// The caller must stamp changed[p] with the World's current tick for every
// position whose value it changes, or, when it cannot compare values, for
// every position with changed[p] > savedTick (written since the save). That
// keeps change ticks honest: to an observer a load is a write of exactly
// the values it changes, and nothing else.
//
// When write is false, s has not been written since savedTick and holds the
// saved layout, so its values already are the saved ones. It panics when s
// belongs to another World. RestoreStore is a function rather than a method
// of Restore because it is generic; it costs no interface call per store.
func RestoreStore[T any](r *Restore, s *Store[T], layout uint64, ents []Entity, savedTick uint64) (values []T, changed []uint64, write bool) {
	w := s.w
	if w != r.w {
		panic("ecs: RestoreStore: the Store belongs to another World than the load")
	}
	now := w.tick
	s.restored = r.epoch
	if layout == s.layout {
		if s.maxChanged <= savedTick {
			return s.dense, s.changed, false
		}
		s.maxChanged = now
		return s.dense, s.changed, true
	}
	n := len(ents)
	newEnts := append(s.spareEnts[:0], ents...)
	newAdded := resize(s.spareAdded, n)
	newChanged := resize(s.spareChanged, n)
	newDense := resize(s.spareDense, n)
	var zero T
	for j, e := range ents {
		if p := s.pos(e); p >= 0 {
			newDense[j], newAdded[j], newChanged[j] = s.dense[p], s.added[p], s.changed[p]
		} else {
			newDense[j], newAdded[j], newChanged[j] = zero, now, now
			r.events = append(r.events, Event{Kind: Inserted, Entity: e, Component: s.ti.ID})
		}
	}
	for _, e := range s.ents {
		s.sparse[e.Index()] = 0
	}
	if need := len(w.ents.slots); need > len(s.sparse) {
		s.sparse = append(s.sparse, make([]int32, need-len(s.sparse))...)
	}
	for j, e := range newEnts {
		s.sparse[e.Index()] = int32(j + 1)
	}
	for _, e := range s.ents {
		if w.ents.isAlive(e) && s.pos2(e, newEnts) < 0 {
			r.events = append(r.events, Event{Kind: Removed, Entity: e, Component: s.ti.ID})
		}
	}
	clear(s.dense) // drop references held by the old arrangement
	s.spareEnts, s.ents = s.ents, newEnts
	s.spareAdded, s.added = s.added, newAdded
	s.spareChanged, s.changed = s.changed, newChanged
	s.spareDense, s.dense = s.dense[:0], newDense
	s.layout = layout
	s.maxChanged = now
	return s.dense, s.changed, true
}

// pos2 looks e up through the (already rebuilt) sparse array in ents.
func (s *Store[T]) pos2(e Entity, ents []Entity) int {
	if p := int(s.sparse[e.Index()]) - 1; p >= 0 && ents[p] == e {
		return p
	}
	return -1
}

// resize returns a slice of length n, reusing b's capacity when it suffices.
func resize[E any](b []E, n int) []E {
	if cap(b) >= n {
		return b[:n]
	}
	return append(b[:cap(b)], make([]E, n-cap(b))...)
}

// NewLayout returns a fresh world-unique layout id of w, for a restore of
// a state that did not come from w's own saves (a decoded state: see
// snapshot.Ring.LoadEncoded). Pass it as EntityState.Layout to
// BeginRestore and as the layout of each RestoreStore, so that the loaded
// layouts are never mistaken for ones w already holds.
func NewLayout(w *World) uint64 { return w.nextLayout() }
