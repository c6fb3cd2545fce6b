package replicate

// Codecs of component and message values.

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/canon"
)

// Codec encodes values of T for the wire. The default codec of a plain-data
// type writes its canonical form (package internal/canon: fields in
// declaration order, little-endian, no padding); implement Codec for types
// that hold slices or strings, or to quantize.
type Codec[T any] interface {
	// Append appends the encoding of *v to dst.
	Append(dst []byte, v *T) []byte
	// Decode decodes exactly src (the bytes one Append produced) into *v. It
	// must return an error, never panic, on bytes it did not produce. *v
	// may hold a value decoded before (received messages are decoded into
	// reused values): Decode must set all of *v, and may reuse the memory
	// its slices refer to (decode into v.S[:0] to receive without
	// allocating).
	Decode(src []byte, v *T) error
}

// FixedSizer is implemented by a Codec whose every encoding has the same
// size (quant.Codec without variable fields does): its component values
// then travel without a length prefix, like plain data's. Append must
// produce exactly FixedSize bytes; the server checks, and refuses to send
// a value of another size (Send panics: the codec breaks its contract).
type FixedSizer interface {
	FixedSize() int
}

// checkFixed panics when a codec with a fixed size appended another
// number of bytes: its values would corrupt every message after them.
func checkFixed(fixed, n int, name string) {
	if fixed > 0 && n != fixed {
		panic(fmt.Sprintf("replicate: the codec of %s appended %d bytes, its FixedSize is %d", name, n, fixed))
	}
}

// plainCodec is the default codec of a plain-data type.
type plainCodec[T any] struct{ l *canon.Form }

func newPlainCodec[T any]() (plainCodec[T], error) {
	l, err := canon.Of(reflect.TypeFor[T]())
	if err != nil {
		return plainCodec[T]{}, fmt.Errorf("%w: %w (give the type a Codec)", ErrNotPlainData, err)
	}
	return plainCodec[T]{l: l}, nil
}

func (c plainCodec[T]) Append(dst []byte, v *T) []byte { return c.l.Append(dst, unsafe.Pointer(v)) }

func (c plainCodec[T]) Decode(src []byte, v *T) error {
	if len(src) != c.l.Encoded || !c.l.Decode(src, unsafe.Pointer(v)) {
		return errValue
	}
	return nil
}

// convCodec encodes T through a wire form W (quantization).
type convCodec[T, W any] struct {
	to   func(T) W
	from func(W) T
	w    Codec[W]
}

func (c convCodec[T, W]) Append(dst []byte, v *T) []byte {
	w := c.to(*v)
	return c.w.Append(dst, &w)
}

func (c convCodec[T, W]) Decode(src []byte, v *T) error {
	var w W
	if err := c.w.Decode(src, &w); err != nil {
		return err
	}
	*v = c.from(w)
	return nil
}
