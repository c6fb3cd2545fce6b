package ecs

import (
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/internal/typename"
)

// The functions in this file reach a component or resource by its type through
// the World; they cost a map lookup more than the Store or Resource methods.
// Unregistered types give ErrNotRegistered or a zero result.

// Get returns a copy of e's T (zero and false when absent or unregistered).
func Get[T any](w *World, e Entity) (T, bool) {
	if s := StoreOf[T](w); s != nil {
		return s.Get(e)
	}
	var zero T
	return zero, false
}

// Has reports whether e has a T.
func Has[T any](w *World, e Entity) bool {
	s := StoreOf[T](w)
	return s != nil && s.Has(e)
}

// Ptr returns a pointer to e's T (nil when absent or unregistered); see Store.Ptr.
func Ptr[T any](w *World, e Entity) *T {
	if s := StoreOf[T](w); s != nil {
		return s.Ptr(e)
	}
	return nil
}

// Set gives e the value v; see Store.Set.
func Set[T any](w *World, e Entity, v T) error {
	s := StoreOf[T](w)
	if s == nil {
		return notRegistered[T]()
	}
	return s.Set(e, v)
}

// Remove removes e's T; see Store.Remove.
func Remove[T any](w *World, e Entity) error {
	s := StoreOf[T](w)
	if s == nil {
		return notRegistered[T]()
	}
	return s.Remove(e)
}

// GetResource returns a copy of resource T (zero and false when absent or unregistered).
func GetResource[T any](w *World) (T, bool) {
	if r := ResourceOf[T](w); r != nil {
		return r.Get()
	}
	var zero T
	return zero, false
}

// SetResource stores resource T.
func SetResource[T any](w *World, v T) error {
	r := ResourceOf[T](w)
	if r == nil {
		return notRegistered[T]()
	}
	r.Set(v)
	return nil
}

// ResourcePtr returns a pointer to resource T (nil when absent or unregistered); see Resource.Ptr.
func ResourcePtr[T any](w *World) *T {
	if r := ResourceOf[T](w); r != nil {
		return r.Ptr()
	}
	return nil
}

// RemoveResource removes resource T and reports whether it was present.
func RemoveResource[T any](w *World) bool {
	r := ResourceOf[T](w)
	return r != nil && r.Remove()
}

func notRegistered[T any]() error {
	return fmt.Errorf("%w: %s", ErrNotRegistered, typename.Of(reflect.TypeFor[T]()))
}
