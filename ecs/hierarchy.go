package ecs

import (
	"fmt"
	"iter"
)

// Hierarchy is the component that links an entity to its parent and siblings:
// an intrusive doubly linked list of children in plain data, so it snapshots
// with the copy strategy, keeps a deterministic child order and costs O(1) per
// change. Every World registers it; change it only through SetParent, Despawn
// and DespawnRecursive.
type Hierarchy struct {
	parent, first, last, next, prev Entity
}

// Parent returns the parent entity, or the zero Entity.
func (h Hierarchy) Parent() Entity { return h.parent }

// MapEntities maps every entity reference of h (see EntityMapper).
func (h *Hierarchy) MapEntities(m EntityMapper) {
	h.parent = mapRef(m, h.parent)
	h.first = mapRef(m, h.first)
	h.last = mapRef(m, h.last)
	h.next = mapRef(m, h.next)
	h.prev = mapRef(m, h.prev)
}

func (w *World) hget(e Entity) Hierarchy {
	h, _ := w.hier.Get(e)
	return h
}

// hset stores h, removing the component when h links nothing.
func (w *World) hset(e Entity, h Hierarchy) {
	if h == (Hierarchy{}) {
		if p := w.hier.pos(e); p >= 0 {
			w.hier.removeAt(p)
			w.emit(Event{Kind: Removed, Entity: e, Component: w.hier.ti.ID})
		}
		return
	}
	_ = w.hier.Set(e, h) // callers checked liveness and locks
}

// HierarchyStore returns the Store of the Hierarchy component.
func (w *World) HierarchyStore() *Store[Hierarchy] { return w.hier }

// Parent returns e's parent, or the zero Entity when it has none.
func (w *World) Parent(e Entity) Entity { return w.hget(e).parent }

// Children iterates over e's children in the order they were attached.
func (w *World) Children(e Entity) iter.Seq[Entity] {
	return func(yield func(Entity) bool) {
		for c := w.hget(e).first; c != 0; c = w.hget(c).next {
			if !yield(c) {
				return
			}
		}
	}
}

// SetParent makes parent the parent of child, appending child to parent's
// children; the zero parent detaches child. It fails with ErrNotAlive,
// ErrCycle (parent is child or one of its descendants) or ErrLocked (a query
// is iterating the Hierarchy store).
func (w *World) SetParent(child, parent Entity) error {
	if !w.ents.isAlive(child) {
		return fmt.Errorf("%w: child %v", ErrNotAlive, child)
	}
	if parent != 0 && !w.ents.isAlive(parent) {
		return fmt.Errorf("%w: parent %v", ErrNotAlive, parent)
	}
	if w.hier.locks > 0 {
		return fmt.Errorf("%w: hierarchy", ErrLocked)
	}
	for a := parent; a != 0; a = w.hget(a).parent {
		if a == child {
			return fmt.Errorf("%w: %v under %v", ErrCycle, child, parent)
		}
	}
	if w.hget(child).parent == parent {
		return nil
	}
	w.unlink(child)
	if parent != 0 {
		ph, h := w.hget(parent), w.hget(child)
		h.parent, h.prev, h.next = parent, ph.last, 0
		if ph.last != 0 {
			x := w.hget(ph.last)
			x.next = child
			w.hset(ph.last, x)
		} else {
			ph.first = child
		}
		ph.last = child
		w.hset(parent, ph)
		w.hset(child, h)
	}
	return nil
}

// unlink removes child from its parent's list.
func (w *World) unlink(child Entity) {
	h := w.hget(child)
	p := h.parent
	if p == 0 {
		return
	}
	ph := w.hget(p)
	if h.prev != 0 {
		x := w.hget(h.prev)
		x.next = h.next
		w.hset(h.prev, x)
	} else {
		ph.first = h.next
	}
	if h.next != 0 {
		x := w.hget(h.next)
		x.prev = h.prev
		w.hset(h.next, x)
	} else {
		ph.last = h.prev
	}
	w.hset(p, ph)
	h.parent, h.prev, h.next = 0, 0, 0
	w.hset(child, h)
}

// detachAll unlinks e from its parent and orphans its children.
func (w *World) detachAll(e Entity) {
	if !w.hier.Has(e) {
		return
	}
	w.unlink(e)
	for c := w.hget(e).first; c != 0; {
		h := w.hget(c)
		next := h.next
		h.parent, h.prev, h.next = 0, 0, 0
		w.hset(c, h)
		c = next
	}
	w.hset(e, Hierarchy{})
}

// DespawnRecursive despawns e and all its descendants.
func (w *World) DespawnRecursive(e Entity) error {
	if !w.ents.isAlive(e) {
		return fmt.Errorf("%w: %v", ErrNotAlive, e)
	}
	var order []Entity
	var walk func(Entity)
	walk = func(x Entity) {
		order = append(order, x)
		for c := range w.Children(x) {
			walk(c)
		}
	}
	walk(e)
	for _, x := range order {
		if w.entityLocked(x) {
			return ErrLocked
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if err := w.Despawn(order[i]); err != nil {
			return err
		}
	}
	return nil
}
