package quant

// The fields of a codec: each a quantizer and an accessor.

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/rewindgo/rewind/internal/bin"
)

// Field is one quantized field of a T, for NewCodec: a quantizer and an
// accessor that returns a pointer to the field in a T. Make one with
// FloatField, Vec3Field, IntField, BoolField, UnitVec2Field,
// UnitVecField, RotationField or AtRest; the constructors panic on a nil
// accessor or a zero-value quantizer, as a codec is built once at setup.
type Field[T any] struct {
	bits  int   // the most bits it writes
	vary  bool  // it may write fewer (AtRest)
	codes []int // the widths of the codes it writes, in order (not vary)
	put   func(w bin.BitWriter, v *T) bin.BitWriter
	get   func(r bin.BitReader, v *T) bin.BitReader // a bad code: r.Fail(ErrCode)
	snap  func(v *T)                                // quantize in place
	zero  func(v *T)                                // set to the zero value
	ptrs  func(v *T) []span                         // the memory it covers, for NewCodec's check
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
		bits:  q.Bits(),
		codes: []int{q.Bits()},
		put:   func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBits(q.Code(*get(v)), int(q.bits)); return w },
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
		bits:  3 * q.Bits(),
		codes: []int{q.Bits(), q.Bits(), q.Bits()}, // one 3b-bit field is the same bits
		put: func(w bin.BitWriter, v *T) bin.BitWriter {
			p, b := get(v), uint(q.bits)
			if 3*b <= 64 { // one field of three codes
				w.WriteBits(q.Code(p[0])|q.Code(p[1])<<b|q.Code(p[2])<<(2*b), int(3*b))
				return w
			}
			for i := range p {
				w.WriteBits(q.Code(p[i]), int(b))
			}
			return w
		},
		get: func(r bin.BitReader, v *T) bin.BitReader {
			p, b := get(v), uint(q.bits)
			var codes [3]uint64
			if 3*b <= 64 {
				all, mask := r.ReadBits(int(3*b)), uint64(1)<<b-1
				codes = [3]uint64{all & mask, all >> b & mask, all >> (2 * b) & mask}
			} else {
				codes = [3]uint64{r.ReadBits(int(b)), r.ReadBits(int(b)), r.ReadBits(int(b))}
			}
			for i, c := range codes {
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
		bits:  q.Bits(),
		codes: []int{q.Bits()},
		put:   func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBits(q.Code(toInt(*get(v))), int(q.bits)); return w },
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
		bits:  1,
		codes: []int{1},
		put:   func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBool(*get(v)); return w },
		get:   func(r bin.BitReader, v *T) bin.BitReader { *get(v) = r.ReadBool(); return r },
		snap:  func(*T) {},
		zero:  func(v *T) { *get(v) = false },
		ptrs:  func(v *T) []span { return spanOf(get(v)) },
	}
}

// UnitVecField is a direction quantized by q (its error bound is q's).
func UnitVecField[T any](q UnitVec, get func(*T) *[3]float32) Field[T] {
	mustAccessor(get, "UnitVecField")
	if q.bits == 0 {
		panic("quant: UnitVecField with a UnitVec not made by NewUnitVec")
	}
	return vecField(q, get)
}

// RotationField is a quaternion quantized by q (its error bound is q's).
func RotationField[T any](q Rotation, get func(*T) *[4]float32) Field[T] {
	mustAccessor(get, "RotationField")
	if q.bits == 0 {
		panic("quant: RotationField with a Rotation not made by NewRotation")
	}
	return vecField(q, get)
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
		vary: n > 1,
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

// UnitVec2Field is a 2D direction quantized by q (its error bound is q's).
func UnitVec2Field[T any](q UnitVec2, get func(*T) *[2]float32) Field[T] {
	mustAccessor(get, "UnitVec2Field")
	if q.bits == 0 {
		panic("quant: UnitVec2Field with a UnitVec2 not made by NewUnitVec2")
	}
	return vecField(q, get)
}

// vecQuantizer is what vecField needs of UnitVec2, UnitVec and Rotation:
// a fixed number of bits for a value of A.
type vecQuantizer[A any] interface {
	Bits() int
	codeWidths() []int // the codes within Bits, in write order
	Code(A) uint64
	Value(uint64) (A, error)
	Quantize(A) A
}

// vecField is the field of a vector quantizer q, read and written through
// get.
func vecField[T, A any](q vecQuantizer[A], get func(*T) *A) Field[T] {
	n := q.Bits()
	return Field[T]{
		bits:  n,
		codes: q.codeWidths(),
		put:   func(w bin.BitWriter, v *T) bin.BitWriter { w.WriteBits(q.Code(*get(v)), n); return w },
		get: func(r bin.BitReader, v *T) bin.BitReader {
			x, err := q.Value(r.ReadBits(n))
			if err != nil {
				r.Fail(ErrCode)
			}
			*get(v) = x
			return r
		},
		snap: func(v *T) { p := get(v); *p = q.Quantize(*p) },
		zero: func(v *T) { var zero A; *get(v) = zero },
		ptrs: func(v *T) []span { return spanOf(get(v)) },
	}
}

// Must returns q, or panics if err is not nil: for quantizers built from
// constants at setup, as in NewCodec(FloatField(Must(NewFloat(...)), ...)).
func Must[Q any](q Q, err error) Q {
	if err != nil {
		panic(err.Error())
	}
	return q
}
