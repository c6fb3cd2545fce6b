package quant

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/bin"
)

// Codec bit-packs a T's fields, each by its quantizer, into the fewest
// whole bytes: the fields' codes in order, least significant bit first,
// the last byte padded with zero bits (package internal/bin's bit form).
// Its Append and Decode make it a replicate.Codec[T] (pass it to
// replicate.WithCodec); Quantize snaps a value to what a receiver
// decodes, so a server can simulate on exactly the client's value.
// A Codec holds no mutable state: one may serve any number of goroutines.
type Codec[T any] struct {
	fields []Field[T]
	bits   int
	vary   bool
}

// NewCodec returns the codec of fields, in that order. Every byte of T
// that holds data (not padding, nor a blank _ field) must belong to
// exactly one field, so that
// Decode sets all of a T and Quantize's result is all of what the
// receiver sees; NewCodec panics otherwise, naming the first uncovered
// field, or if an accessor returns a pointer outside its argument.
func NewCodec[T any](fields ...Field[T]) *Codec[T] {
	c := &Codec[T]{fields: append([]Field[T](nil), fields...)}
	var probe T
	base := uintptr(unsafe.Pointer(&probe))
	size := unsafe.Sizeof(probe)
	covered := make([]bool, size)
	for _, f := range c.fields {
		mustField(f)
		c.bits += f.bits
		c.vary = c.vary || f.vary
		for _, s := range f.ptrs(&probe) {
			off := uintptr(s.p) - base
			if uintptr(s.p) < base || off+s.n > size {
				panic(fmt.Sprintf("quant: an accessor of %T returns a pointer outside its argument", probe))
			}
			for i := off; i < off+s.n; i++ {
				if covered[i] {
					panic(fmt.Sprintf("quant: two fields of the codec of %T cover byte %d", probe, i))
				}
				covered[i] = true
			}
		}
	}
	if name, ok := uncovered(reflect.TypeFor[T](), 0, covered); !ok {
		panic(fmt.Sprintf("quant: no field of the codec of %T covers %s", probe, name))
	}
	return c
}

// uncovered walks t's data (not its padding) at offset off and reports
// the first part not covered.
func uncovered(t reflect.Type, off uintptr, covered []bool) (string, bool) {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" { // padding the type declares: no data
				continue
			}
			if name, ok := uncovered(f.Type, off+f.Offset, covered); !ok {
				return joinName(f.Name, name), false
			}
		}
		return "", true
	case reflect.Array:
		for i := range t.Len() {
			if name, ok := uncovered(t.Elem(), off+uintptr(i)*t.Elem().Size(), covered); !ok {
				return fmt.Sprintf("[%d]%s", i, name), false
			}
		}
		return "", true
	}
	for i := off; i < off+t.Size(); i++ {
		if !covered[i] {
			return "", false
		}
	}
	return "", true
}

func joinName(a, b string) string {
	if b == "" || b[0] == '[' {
		return a + b
	}
	return a + "." + b
}

// Bits returns the most bits a value takes (fewer when an AtRest group is
// at rest).
func (c *Codec[T]) Bits() int { return c.bits }

// FixedSize returns the size in bytes of every encoding, or 0 if sizes
// vary (an AtRest group whose fields take bits, sent only when moving).
// replicate length-prefixes the values of custom codecs today; a fixed
// size would let it drop the prefix.
func (c *Codec[T]) FixedSize() int {
	if c.vary {
		return 0
	}
	return (c.bits + 7) / 8
}

// FieldBits returns the widths of the codes an encoding holds, in order
// (a Vec3Field's three, a rotation's index and three components, ...), or
// nil when sizes vary (AtRest). It makes the codec a
// replicate.FieldLayout: replicate then sends a value as its change from
// one the client holds, code by code, so an unchanged code costs one bit
// and a code that moved by d about 2+log2(width)+log2(|d|) bits.
func (c *Codec[T]) FieldBits() []int {
	if c.vary {
		return nil
	}
	var w []int
	for _, f := range c.fields {
		w = append(w, f.codes...)
	}
	return w
}

// MaxSize returns the most bytes Append appends.
func (c *Codec[T]) MaxSize() int { return (c.bits + 7) / 8 }

// Append appends the encoding of *v: each field's code of its value, so
// the receiver decodes what Quantize(v) makes of *v.
func (c *Codec[T]) Append(dst []byte, v *T) []byte {
	w := bin.NewBitWriter(dst)
	for _, f := range c.fields {
		w = f.put(w, v)
	}
	return w.Finish()
}

// Decode decodes exactly src, bytes Append produced, into *v, setting all
// of it. Any other bytes are an error, never a panic: ErrSize if src ends
// inside a field or whole bytes follow the last, ErrPadding if the last
// byte's unused bits are not zero, ErrCode for a code no value encodes to.
// Accepted bytes are exactly Append's encoding of the decoded value. On
// error, *v may be partly overwritten.
func (c *Codec[T]) Decode(src []byte, v *T) error {
	r := bin.NewBitReader(src)
	for _, f := range c.fields {
		r = f.get(r, v)
	}
	switch err := r.End(); {
	case err == nil:
		return nil
	case errors.Is(err, ErrCode):
		return err
	case err == bin.ErrPadding:
		return ErrPadding
	default:
		return ErrSize
	}
}

// Quantize snaps *v in place to the value a receiver of Append(v)
// decodes: afterwards Decode(Append(v)) equals *v.
func (c *Codec[T]) Quantize(v *T) {
	for _, f := range c.fields {
		f.snap(v)
	}
}
