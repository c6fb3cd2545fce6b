package ecs

import "slices"

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
				w.observers = slices.Delete(w.observers, i, i+1) // clears the tail: fn is released
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
