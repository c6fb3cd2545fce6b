package lagcomp

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/column"
)

// Type is one component type tracked by a History.
type Type[T any] struct {
	h       *History
	s       *ecs.Store[T]
	lerp    func(a, b T, f float64) T
	layouts column.Layouts
	frames  []frame[T] // by slot
}

type frame[T any] struct {
	layout *column.Layout
	vals   []T
}

// Track registers component type T (plain data: no pointers) with h, and
// with h's World if it is not. lerp interpolates between the values of
// two ticks (f in [0, 1)); it must be the function the clients
// interpolate with, so both sides compute the same value. A nil lerp
// shows the earlier tick's value (no interpolation).
func Track[T any](h *History, lerp func(a, b T, f float64) T) (*Type[T], error) {
	if _, err := column.PlainOf[T](); err != nil {
		return nil, fmt.Errorf("%w: %v: %w", ErrNotPlainData, reflect.TypeFor[T](), err)
	}
	s := ecs.Register[T](h.w)
	for _, ty := range h.types {
		if o, ok := ty.(*Type[T]); ok && o.s == s {
			return nil, fmt.Errorf("%w: %v", ErrTracked, reflect.TypeFor[T]())
		}
	}
	ty := &Type[T]{h: h, s: s, lerp: lerp, frames: make([]frame[T], h.cfg.Ticks)}
	h.types = append(h.types, ty)
	return ty, nil
}

func (ty *Type[T]) capture(slot int) {
	f := &ty.frames[slot]
	col := ty.s.Column()
	if f.layout == nil || f.layout.ID != col.Layout {
		column.Release(&f.layout)
		f.layout = ty.layouts.Acquire(col.Layout, col.Entities, 0)
	}
	f.vals = append(f.vals[:0], col.Values...)
}

func (ty *Type[T]) bytes() int {
	var zero T
	n := ty.layouts.Bytes()
	for i := range ty.frames {
		n += cap(ty.frames[i].vals) * int(unsafe.Sizeof(zero))
	}
	return n
}

// at returns e's value in slot s.
func (ty *Type[T]) at(s int, e ecs.Entity) (*T, bool) {
	f := &ty.frames[s]
	if f.layout == nil {
		return nil, false
	}
	p := f.layout.Pos(e)
	if p < 0 {
		return nil, false
	}
	return &f.vals[p], true
}

// At returns e's value in view v: at the view's tick, interpolated
// towards the next by the view's fraction with the Type's lerp. It
// reports false when e had no T at the view's tick. An entity that lost T
// at the next tick shows its value at the view's tick.
func (ty *Type[T]) At(v View, e ecs.Entity) (T, bool) {
	var zero T
	if !v.ok || v.h != ty.h {
		return zero, false
	}
	a, ok := ty.at(v.s0, e)
	if !ok {
		return zero, false
	}
	if v.s1 < 0 || ty.lerp == nil {
		return *a, true
	}
	b, ok := ty.at(v.s1, e)
	if !ok {
		return *a, true
	}
	return ty.lerp(*a, *b, v.frac), true
}

// Each calls fn with every entity that had T at the view's tick and its
// value in the view (as At returns it), in the store's order at that
// tick; it stops when fn returns false.
func (ty *Type[T]) Each(v View, fn func(e ecs.Entity, val T) bool) {
	if !v.ok || v.h != ty.h {
		return
	}
	f := &ty.frames[v.s0]
	if f.layout == nil {
		return
	}
	for i, e := range f.layout.Ents {
		val := f.vals[i]
		if v.s1 >= 0 && ty.lerp != nil {
			if b, ok := ty.at(v.s1, e); ok {
				val = ty.lerp(val, *b, v.frac)
			}
		}
		if !fn(e, val) {
			return
		}
	}
}

// Present returns e's value now, in the World: for the entities the
// shooting client predicts, which it shows at the present.
func (ty *Type[T]) Present(e ecs.Entity) (T, bool) { return ty.s.Get(e) }
