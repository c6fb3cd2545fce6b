package ecs

// EventKind is the kind of a structural Event.
type EventKind uint8

// Structural event kinds.
const (
	Spawned   EventKind = iota + 1 // an entity was spawned (or brought back by a load)
	Despawned                      // an entity and all its components were removed
	Inserted                       // a component was added to an entity
	Removed                        // a component was removed from a live entity
)

func (k EventKind) String() string {
	switch k {
	case Spawned:
		return "spawned"
	case Despawned:
		return "despawned"
	case Inserted:
		return "inserted"
	case Removed:
		return "removed"
	}
	return "unknown"
}

// Event describes one structural change of a World. Despawned implies the
// removal of all the entity's components; no Removed events are sent for them.
type Event struct {
	Kind      EventKind
	Entity    Entity
	Component ComponentID // for Inserted and Removed
}

type observer struct {
	id int
	fn func(Event)
}

// Observe registers fn to be called synchronously, in registration order, for
// every structural change, including those made by a snapshot load (delivered
// when the load finishes). fn must not make structural changes itself. The
// returned function unregisters fn.
func (w *World) Observe(fn func(Event)) (cancel func()) {
	w.nextObs++
	id := w.nextObs
	w.observers = append(w.observers, observer{id: id, fn: fn})
	return func() {
		for i, o := range w.observers {
			if o.id == id {
				w.observers = append(w.observers[:i], w.observers[i+1:]...)
				return
			}
		}
	}
}

func (w *World) emit(ev Event) {
	for _, o := range w.observers {
		o.fn(ev)
	}
}

// restoreState tracks one snapshot load in progress.
type restoreState struct {
	epoch  uint64
	events []Event
}

// BeginRestore starts a snapshot load: it restores the entity allocator to st
// (entities alive now but not in st die; entities of st come back with their
// identity). The caller then calls Restore on every Store and Resource it
// saved, and finally FinishRestore. Part of the restore protocol used by
// package snapshot.
//
// A load also releases the iteration locks of every Store. Iterators unlock
// their stores when the loop ends, returns or breaks, but not when the loop
// body panics (they have no deferred cleanup, so that loops compile to plain
// code): a program that recovers from such a panic restores a saved frame,
// and the load leaves no store locked. Loading from inside a query loop is
// not supported.
func (w *World) BeginRestore(st EntityState) {
	w.restore.epoch++
	w.releaseLocks()
	if st.Layout == w.ents.layout {
		return
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
			w.restore.events = append(w.restore.events, Event{Kind: Despawned, Entity: NewEntity(uint32(i), o.Gen)})
		}
		if s.Alive && (!o.Alive || o.Gen != s.Gen) {
			w.restore.events = append(w.restore.events, Event{Kind: Spawned, Entity: NewEntity(uint32(i), s.Gen)})
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
}

// releaseLocks unlocks every Store; iterations still running will not unlock
// them again (see lockGen).
func (w *World) releaseLocks() {
	w.lockGen++
	for _, s := range w.stores {
		s.releaseLocks()
	}
}

// FinishRestore ends a snapshot load: components of stores that were not
// restored are removed from entities that no longer exist, and the structural
// events of the load are delivered to observers.
func (w *World) FinishRestore() {
	for _, s := range w.stores {
		if s.restoredAt() != w.restore.epoch {
			s.purgeDead()
		}
	}
	evs := w.restore.events
	w.restore.events = evs[:0]
	for _, ev := range evs {
		w.emit(ev)
	}
}
