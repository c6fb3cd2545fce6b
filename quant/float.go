package quant

import (
	"fmt"
	"math"
	"math/bits"
)

// Float quantizes values of a floating-point type F (float32 or float64,
// or a type defined on one) to the grid min + i*step, i = 0 ... Steps(),
// in Bits() bits. Make one with NewFloat; the zero value is not usable.
//
// Error bound: a value in [Min(), Max()] comes back within step/2 of
// itself, plus the rounding of the arithmetic: under 2 ulps of F at the
// range's largest magnitude, which NewFloat requires to be at most step/4.
// With step a power of two and min a multiple of it (Gaffer on Games'
// "[-32, 31] with 5 fractional bits") the grid is exact in F and the
// bound is exactly step/2. Values out of range are clamped to Min() or
// Max() first; NaN is sent as Min().
//
// Arithmetic: all in float64 (a float32 converts to float64 exactly):
// code = Round((v-min)/step) clamped to [0, Steps()], value =
// min + code*step rounded once to F. Each operation is one IEEE 754
// operation correctly rounded (-, /, *, + and math.Round, which is exact),
// and an explicit conversion separates the * from the + so no compiler
// may fuse them into an FMA: every platform computes the same bits, so a
// server that simulates on Quantize's result and a client that decodes
// the code hold the same value.
type Float[F ~float32 | ~float64] struct {
	min, step float64
	n         uint64 // the largest code
	bits      uint8
}

// NewFloat returns the quantizer of [min, max] in steps of step. The
// number of steps is Round((max-min)/step), at least 1; Max() is min plus
// that many steps, which differs from max when step does not divide the
// range. All three must be finite, and step at least 4 ulps of F at the
// larger of |min| and |Max()| (so that every grid value re-encodes to its
// own code); ErrParam otherwise.
func NewFloat[F ~float32 | ~float64](min, max, step F) (Float[F], error) {
	lo, hi, st := float64(min), float64(max), float64(step)
	if math.IsNaN(lo+hi+st) || math.IsInf(lo+hi+st, 0) {
		return Float[F]{}, fmt.Errorf("%w: Float bounds and step must be finite (%v, %v, %v)", ErrParam, min, max, step)
	}
	if !(st > 0) || !(hi > lo) {
		return Float[F]{}, fmt.Errorf("%w: Float needs min < max and step > 0 (%v, %v, %v)", ErrParam, min, max, step)
	}
	steps := math.Round((hi - lo) / st)
	if steps < 1 || steps > 1<<52 {
		return Float[F]{}, fmt.Errorf("%w: Float of [%v, %v] in steps of %v has %v steps", ErrParam, min, max, step, steps)
	}
	f := Float[F]{min: lo, step: st, n: uint64(steps), bits: uint8(bits.Len64(uint64(steps)))}
	top := float64(f.value(f.n))
	if math.IsInf(top, 0) {
		return Float[F]{}, fmt.Errorf("%w: Float's largest value %v overflows %T", ErrParam, min+F(steps)*step, step)
	}
	mag := math.Max(math.Abs(lo), math.Abs(top))
	if st < 4*ulp[F](mag) {
		return Float[F]{}, fmt.Errorf("%w: Float step %v is finer than 4 ulps of the values near %v", ErrParam, step, mag)
	}
	return f, nil
}

// ulp returns the spacing of F's values just above |x|.
func ulp[F ~float32 | ~float64](x float64) float64 {
	var one, tiny F = 1, 0x1p-30
	if one+tiny == one { // F is float32
		a := float32(math.Abs(x))
		return float64(math.Nextafter32(a, float32(math.Inf(1))) - a)
	}
	a := math.Abs(x)
	return math.Nextafter(a, math.Inf(1)) - a
}

// Bits returns the width of a code.
func (f Float[F]) Bits() int { return int(f.bits) }

// Steps returns the largest code: the grid has Steps()+1 values.
func (f Float[F]) Steps() uint64 { return f.n }

// Min returns the smallest value of the grid.
func (f Float[F]) Min() F { return F(f.min) }

// Max returns the largest value of the grid.
func (f Float[F]) Max() F { return f.value(f.n) }

// Step returns the spacing of the grid.
func (f Float[F]) Step() F { return F(f.step) }

// Code returns the code of the grid value nearest v (ties away from min),
// clamping v to [Min(), Max()]; NaN is code 0.
func (f Float[F]) Code(v F) uint64 {
	x := float64(v)
	if !(x > f.min) {
		return 0
	}
	c := math.Round(float64(x-f.min) / f.step)
	if !(c < float64(f.n)) {
		return f.n
	}
	return uint64(c)
}

// Value returns the value of code c, or ErrCode if c is over Steps().
func (f Float[F]) Value(c uint64) (F, error) {
	if c > f.n {
		return 0, ErrCode
	}
	return f.value(c), nil
}

func (f Float[F]) value(c uint64) F { return F(f.min + float64(float64(c)*f.step)) }

// Quantize returns the value a receiver of v's code decodes: v within the
// error bound of the type's documentation, clamped to the range.
func (f Float[F]) Quantize(v F) F { return f.value(f.Code(v)) }
