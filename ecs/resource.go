package ecs

import "reflect"

// Resource holds the single value of a resource type T (a singleton such as
// the game's RNG, a score or a match clock) and whether it is present. Presence
// is state: a snapshot load removes a resource that did not exist at the saved
// frame and brings back one that was removed since.
type Resource[T any] struct {
	w       *World
	ti      TypeInfo
	value   T
	present bool
	ticks   Ticks
}

type resourceStorage interface {
	info() *TypeInfo
}

// RegisterResource registers resource type T with w and returns its Resource,
// initially absent. Registering a type twice returns the same Resource.
func RegisterResource[T any](w *World) *Resource[T] {
	t := reflect.TypeFor[T]()
	if r, ok := w.resByType[t]; ok {
		return r.(*Resource[T])
	}
	r := &Resource[T]{w: w, ti: TypeInfo{ID: ComponentID(len(w.resources)), Name: typeName(t), Type: t}}
	w.resources = append(w.resources, r)
	w.resByType[t] = r
	return r
}

// ResourceOf returns the Resource of T, or nil if T was not registered with w.
func ResourceOf[T any](w *World) *Resource[T] {
	r, _ := w.resByType[reflect.TypeFor[T]()].(*Resource[T])
	return r
}

// Resources returns the registered resource types in registration order.
func (w *World) Resources() []TypeInfo {
	out := make([]TypeInfo, len(w.resources))
	for i, r := range w.resources {
		out[i] = *r.info()
	}
	return out
}

func (r *Resource[T]) info() *TypeInfo { return &r.ti }

// Info describes the resource type.
func (r *Resource[T]) Info() TypeInfo { return r.ti }

// Present reports whether the resource exists.
func (r *Resource[T]) Present() bool { return r.present }

// Get returns a copy of the value, or the zero T and false when absent.
func (r *Resource[T]) Get() (T, bool) { return r.value, r.present }

// Ptr returns a pointer to the value for reading and writing, or nil when the
// resource is absent. Like Store.Ptr, handing out the pointer counts as a write.
func (r *Resource[T]) Ptr() *T {
	if !r.present {
		return nil
	}
	r.ticks.Changed = r.w.tick
	return &r.value
}

// Set stores v, inserting the resource if it was absent.
func (r *Resource[T]) Set(v T) {
	if !r.present {
		r.present = true
		r.ticks.Added = r.w.tick
	}
	r.value = v
	r.ticks.Changed = r.w.tick
}

// Remove removes the resource and reports whether it was present.
func (r *Resource[T]) Remove() bool {
	if !r.present {
		return false
	}
	var zero T
	r.value, r.present, r.ticks = zero, false, Ticks{}
	return true
}

// Ticks returns the change ticks of the value (zero when absent).
func (r *Resource[T]) Ticks() Ticks { return r.ticks }

// Restore brings the resource to the presence it had when saved at
// savedTick and returns the value for the caller to overwrite with the saved
// one (nil when absent) and its Changed tick. As with Store.Restore, the
// caller stamps *changed with the current tick when it changes the value (or
// cannot tell and *changed > savedTick); a resource that comes back is
// stamped already. write is false when the value already is the saved one.
// Part of the restore protocol used by package snapshot.
func (r *Resource[T]) Restore(present bool, savedTick uint64) (value *T, changed *uint64, write bool) {
	now := r.w.tick
	switch {
	case !present:
		r.Remove()
		return nil, nil, false
	case !r.present:
		r.present = true
		r.ticks = Ticks{Added: now, Changed: now}
		return &r.value, &r.ticks.Changed, true
	case r.ticks.Changed <= savedTick:
		return &r.value, &r.ticks.Changed, false
	default:
		return &r.value, &r.ticks.Changed, true
	}
}
