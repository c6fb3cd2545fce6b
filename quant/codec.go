package quant

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/bin"
)

// Field is one quantized field of a T, for NewCodec: a quantizer and an
// accessor that returns a pointer to the field in a T. Make one with
// FloatField, Vec3Field, IntField, BoolField, UnitVecField, RotationField
// or AtRest; the constructors panic on a nil accessor or a zero-value
// quantizer, as a codec is built once at setup.
type Field[T any] struct {
	bits int // the most bits it writes
	put  func(w bin.BitWriter, v *T) bin.BitWriter
	get  func(r bin.BitReader, v *T) bin.BitReader // a bad code: r.Fail(ErrCode)
	snap func(v *T)                                // quantize in place
	zero func(v *T)                                // set to the zero value
	ptrs func(v *T) []span                         // the memory it covers, for NewCodec's check
}

// span is a byte range of a T a field covers.
type span struct {
	p unsafe.Pointer
	n uintptr
}

func spanOf[X any](p *X) []span { return []span{{unsafe.Pointer(p), unsafe.Sizeof(*p)}} }

func mustAccessor[T, X any](get func(*T) *X, what string) {
	if get == nil {
		panic("quant: " + what + " with a nil accessor")
	}
}

// FloatField is a float32 or float64 field quantized by q (its error
// bound is q's).
func FloatField[T any, F ~float32 | ~float64](q Float[F], get func(*T) *F) Field[T] {
	mustAccessor(get, "FloatField")
	if q.step == 0 {
		panic("quant: FloatField with a Float not made by NewFloat")
	}
	return Field[T]{
		bits: q.Bits(),
		put:  func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBits(q.Code(*get(v)), int(q.bits)); return w },
		get: func(r bin.BitReader, v *T) bin.BitReader {
			c := r.ReadBits(int(q.bits))
			f, err := q.Value(c)
			if err != nil || q.Code(f) != c {
				r.Fail(ErrCode)
			}
			*get(v) = f
			return r
		},
		snap: func(v *T) { p := get(v); *p = q.Quantize(*p) },
		zero: func(v *T) { *get(v) = 0 },
		ptrs: func(v *T) []span { return spanOf(get(v)) },
	}
}

// Vec3Field is a vector of three floats, each quantized by q (Gaffer on
// Games' positions: 512 values per metre; the error bound is q's, per
// component).
func Vec3Field[T any, F ~float32 | ~float64](q Float[F], get func(*T) *[3]F) Field[T] {
	mustAccessor(get, "Vec3Field")
	if q.step == 0 {
		panic("quant: Vec3Field with a Float not made by NewFloat")
	}
	return Field[T]{
		bits: 3 * q.Bits(),
		put: func(w bin.BitWriter, v *T) bin.BitWriter {
			p := get(v)
			for i := range p {
				w.WriteBits(q.Code(p[i]), int(q.bits))
			}
			return w
		},
		get: func(r bin.BitReader, v *T) bin.BitReader {
			p := get(v)
			for i := range p {
				c := r.ReadBits(int(q.bits))
				f, err := q.Value(c)
				if err != nil || q.Code(f) != c {
					r.Fail(ErrCode)
				}
				p[i] = f
			}
			return r
		},
		snap: func(v *T) {
			p := get(v)
			for i := range p {
				p[i] = q.Quantize(p[i])
			}
		},
		zero: func(v *T) { *get(v) = [3]F{} },
		ptrs: func(v *T) []span { return spanOf(get(v)) },
	}
}

// Integer is the integer types IntField accepts.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// IntField is an integer field quantized by q, exact in range and clamped
// out of it. It panics if q's range does not fit I.
func IntField[T any, I Integer](q Int, get func(*T) *I) Field[T] {
	mustAccessor(get, "IntField")
	if int64(I(q.Min())) != q.Min() || int64(I(q.Max())) != q.Max() || (I(q.Min()) < 0) != (q.Min() < 0) || (I(q.Max()) < 0) != (q.Max() < 0) {
		panic(fmt.Sprintf("quant: IntField range [%d, %d] does not fit %T", q.Min(), q.Max(), I(0)))
	}
	var zero I
	unsigned := zero-1 > 0
	toInt := func(x I) int64 {
		if unsigned && uint64(x) > math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(x)
	}
	return Field[T]{
		bits: q.Bits(),
		put:  func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBits(q.Code(toInt(*get(v))), int(q.bits)); return w },
		get: func(r bin.BitReader, v *T) bin.BitReader {
			x, err := q.Value(r.ReadBits(int(q.bits)))
			if err != nil {
				r.Fail(ErrCode)
			}
			*get(v) = I(x)
			return r
		},
		snap: func(v *T) { p := get(v); *p = I(q.Quantize(toInt(*p))) },
		zero: func(v *T) { *get(v) = 0 },
		ptrs: func(v *T) []span { return spanOf(get(v)) },
	}
}

// BoolField is a bool in one bit.
func BoolField[T any](get func(*T) *bool) Field[T] {
	mustAccessor(get, "BoolField")
	return Field[T]{
		bits: 1,
		put:  func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBool(*get(v)); return w },
		get:  func(r bin.BitReader, v *T) bin.BitReader { *get(v) = r.ReadBool(); return r },
		snap: func(*T) {},
		zero: func(v *T) { *get(v) = false },
		ptrs: func(v *T) []span { return spanOf(get(v)) },
	}
}

// UnitVecField is a direction quantized by q (its error bound is q's).
func UnitVecField[T any](q UnitVec, get func(*T) *[3]float32) Field[T] {
	mustAccessor(get, "UnitVecField")
	if q.bits == 0 {
		panic("quant: UnitVecField with a UnitVec not made by NewUnitVec")
	}
	return Field[T]{
		bits: q.Bits(),
		put:  func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBits(q.Code(*get(v)), q.Bits()); return w },
		get: func(r bin.BitReader, v *T) bin.BitReader {
			x, err := q.Value(r.ReadBits(q.Bits()))
			if err != nil {
				r.Fail(ErrCode)
			}
			*get(v) = x
			return r
		},
		snap: func(v *T) { p := get(v); *p = q.Quantize(*p) },
		zero: func(v *T) { *get(v) = [3]float32{} },
		ptrs: func(v *T) []span { return spanOf(get(v)) },
	}
}

// RotationField is a quaternion quantized by q (its error bound is q's).
func RotationField[T any](q Rotation, get func(*T) *[4]float32) Field[T] {
	mustAccessor(get, "RotationField")
	if q.bits == 0 {
		panic("quant: RotationField with a Rotation not made by NewRotation")
	}
	return Field[T]{
		bits: q.Bits(),
		put:  func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBits(q.Code(*get(v)), q.Bits()); return w },
		get: func(r bin.BitReader, v *T) bin.BitReader {
			x, err := q.Value(r.ReadBits(q.Bits()))
			if err != nil {
				r.Fail(ErrCode)
			}
			*get(v) = x
			return r
		},
		snap: func(v *T) { p := get(v); *p = q.Quantize(*p) },
		zero: func(v *T) { *get(v) = [4]float32{} },
		ptrs: func(v *T) []span { return spanOf(get(v)) },
	}
}

// AtRest is the at-rest pattern: when *rest(v) is true, one 1 bit and
// nothing of fields, which the receiver (and Quantize) sets to their zero
// values; when false, a 0 bit and then fields. Gaffer on Games sends a
// cube's velocity only when the cube is not at rest, so a resting cube's
// velocity costs one bit.
func AtRest[T any](rest func(*T) *bool, fields ...Field[T]) Field[T] {
	mustAccessor(rest, "AtRest")
	fs := append([]Field[T](nil), fields...)
	n := 1
	for _, f := range fs {
		mustField(f)
		n += f.bits
	}
	return Field[T]{
		bits: n,
		put: func(w bin.BitWriter, v *T) bin.BitWriter {
			if *rest(v) {
				w.WriteBool(true)
				return w
			}
			w.WriteBool(false)
			for _, f := range fs {
				w = f.put(w, v)
			}
			return w
		},
		get: func(r bin.BitReader, v *T) bin.BitReader {
			at := r.ReadBool()
			*rest(v) = at
			for _, f := range fs {
				if at {
					f.zero(v)
				} else {
					r = f.get(r, v)
				}
			}
			return r
		},
		snap: func(v *T) {
			at := *rest(v)
			for _, f := range fs {
				if at {
					f.zero(v)
				} else {
					f.snap(v)
				}
			}
		},
		zero: func(v *T) {
			*rest(v) = false
			for _, f := range fs {
				f.zero(v)
			}
		},
		ptrs: func(v *T) []span {
			s := spanOf(rest(v))
			for _, f := range fs {
				s = append(s, f.ptrs(v)...)
			}
			return s
		},
	}
}

func mustField[T any](f Field[T]) {
	if f.put == nil {
		panic("quant: a zero Field (make fields with FloatField, IntField, ...)")
	}
}

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
}

// NewCodec returns the codec of fields, in that order. Every byte of T
// that holds data (not padding) must belong to exactly one field, so that
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
