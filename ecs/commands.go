package ecs

import "errors"

// Commands records structural changes to apply later, at a point the caller
// chooses (typically right after a query loop), in the order recorded. Spawn
// allocates the entity at once, so recorded commands can refer to it.
type Commands struct {
	w   *World
	ops []func(*World) error
}

// NewCommands returns an empty command buffer for w.
func NewCommands(w *World) *Commands { return &Commands{w: w} }

// Len returns the number of recorded commands.
func (c *Commands) Len() int { return len(c.ops) }

// Do records an arbitrary change.
func (c *Commands) Do(fn func(w *World) error) { c.ops = append(c.ops, fn) }

// Spawn allocates a new entity now and returns it; its components can be
// recorded with Store.SetDeferred.
func (c *Commands) Spawn() Entity { return c.w.Spawn() }

// Despawn records the despawn of e.
func (c *Commands) Despawn(e Entity) {
	c.Do(func(w *World) error { return w.Despawn(e) })
}

// DespawnRecursive records the despawn of e and its descendants.
func (c *Commands) DespawnRecursive(e Entity) {
	c.Do(func(w *World) error { return w.DespawnRecursive(e) })
}

// SetParent records a SetParent.
func (c *Commands) SetParent(child, parent Entity) {
	c.Do(func(w *World) error { return w.SetParent(child, parent) })
}

// Apply runs the recorded commands in order and empties the buffer. It keeps
// going after a failing command and returns all errors joined.
func (c *Commands) Apply() error {
	var errs []error
	for i, op := range c.ops {
		if err := op(c.w); err != nil {
			errs = append(errs, err)
		}
		c.ops[i] = nil
	}
	c.ops = c.ops[:0]
	return errors.Join(errs...)
}

// SetDeferred records s.Set(e, v) in c.
func (s *Store[T]) SetDeferred(c *Commands, e Entity, v T) {
	c.Do(func(*World) error { return s.Set(e, v) })
}

// RemoveDeferred records s.Remove(e) in c.
func (s *Store[T]) RemoveDeferred(c *Commands, e Entity) {
	c.Do(func(*World) error { return s.Remove(e) })
}
