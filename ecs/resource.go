package ecs

import (
	"reflect"

	"github.com/rewindgo/rewind/internal/typename"
)

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
	r := &Resource[T]{w: w, ti: TypeInfo{ID: ComponentID(len(w.resources)), Name: typename.Of(t), Type: t}}
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
