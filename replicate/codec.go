package replicate

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/layout"
)

// Codec encodes values of T for the wire. The default codec of a plain-data
// type writes its canonical form (package internal/layout: fields in
// declaration order, little-endian, no padding); implement Codec for types
// that hold slices or strings, or to quantize.
type Codec[T any] interface {
	// Append appends the encoding of *v to dst.
	Append(dst []byte, v *T) []byte
	// Decode decodes exactly src (the bytes one Append produced) into *v. It
	// must return an error, never panic, on bytes it did not produce.
	Decode(src []byte, v *T) error
}

// plainCodec is the default codec of a plain-data type.
type plainCodec[T any] struct{ l *layout.Layout }

func newPlainCodec[T any]() (plainCodec[T], error) {
	l, err := layout.Of(reflect.TypeFor[T]())
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

// reader decodes the messages of this package. The first error sticks; reads
// after it return zero values, so decoders check r.err once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errVarint)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a uvarint bounded by max (an element count), and also by the
// bytes left (each element takes at least one byte), so a hostile count
// cannot make the caller allocate.
func (r *reader) count(max int) int {
	v := r.uvarint()
	if v > uint64(max) || v > uint64(len(r.b)) {
		r.fail(errRange)
		return 0
	}
	return int(v)
}

func (r *reader) u32() uint32 {
	v := r.uvarint()
	if v > math.MaxUint32 {
		r.fail(errRange)
		return 0
	}
	return uint32(v)
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 1 {
		r.fail(errTruncated)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.fail(errTruncated)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// bytes reads a length-prefixed byte string of at most max bytes (aliasing
// the input).
func (r *reader) bytes(max int) []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(max) || n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// fixed reads exactly n bytes (aliasing the input).
func (r *reader) fixed(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.fail(errTruncated)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = errTrailing
	}
	return r.err
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}
