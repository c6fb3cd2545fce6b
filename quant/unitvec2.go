package quant

import (
	"fmt"
	"math"
)

// UnitVec2 quantizes 2D unit vectors (headings, aim directions) to
// Bits() bits without trigonometry: the vector is scaled to
// |x|+|y| = 1, a point on a diamond whose perimeter is cut into 2^Bits()
// equal steps, four quadrants of 2^Bits()/4 steps each, so the axes are
// exact. Make one with NewUnitVec2.
//
// Error bound: the decoded vector is within 4/2^Bits() radians of the
// input direction, plus the float32 rounding of the result (under 1e-7
// rad): a step of the diamond turns the direction by at most twice the
// step, at 45 degrees (12 bits: 9.8e-4 rad; see TestUnitVec2Error). An angle code of the same width would be within
// pi/2^Bits() but needs sin and cos, which are not correctly rounded and
// may differ between platforms. The input need not be unit length; a
// zero, NaN or infinite vector is sent as +X.
//
// Arithmetic: float64 +, -, *, /, Abs, Round and Sqrt, each correctly
// rounded per IEEE 754, with explicit conversions between products and
// sums so none is fused: the same bits on every platform.
type UnitVec2 struct {
	bits uint8
	q    float64 // 2^bits / 4, the steps of a quadrant
}

// NewUnitVec2 returns the diamond quantizer of bits (2 to 24) bits.
func NewUnitVec2(bits int) (UnitVec2, error) {
	if bits < 2 || bits > 24 {
		return UnitVec2{}, fmt.Errorf("%w: UnitVec2 needs 2 to 24 bits, not %d", ErrParam, bits)
	}
	return UnitVec2{bits: uint8(bits), q: float64(uint64(1) << (bits - 2))}, nil
}

// Bits returns the width of a code.
func (u UnitVec2) Bits() int { return int(u.bits) }

// Code returns the code of the direction of v.
func (u UnitVec2) Code(v [2]float32) uint64 {
	c := u.raw(float64(v[0]), float64(v[1]))
	for range 4 { // settle on the code that re-encodes to itself
		d := u.raw(u.vec(c))
		if d == c {
			break
		}
		c = d
	}
	return c
}

// Value returns the unit vector of code c, or ErrCode if c has more than
// Bits() bits or does not re-encode to itself.
func (u UnitVec2) Value(c uint64) ([2]float32, error) {
	if c>>u.bits != 0 {
		return [2]float32{}, ErrCode
	}
	x, y := u.vec(c)
	if u.raw(x, y) != c {
		return [2]float32{}, ErrCode
	}
	return [2]float32{float32(x), float32(y)}, nil
}

// Quantize returns the vector a receiver of v's code decodes.
func (u UnitVec2) Quantize(v [2]float32) [2]float32 {
	x, y := u.vec(u.Code(v))
	return [2]float32{float32(x), float32(y)}
}

// raw maps a vector to its code, without settling.
func (u UnitVec2) raw(x, y float64) uint64 {
	s := math.Abs(x) + math.Abs(y)
	if !(s > 0) || s > math.MaxFloat64 {
		x, y, s = 1, 0, 1
	}
	a, b := x/s, y/s
	var quad, f float64
	switch {
	case a > 0 && b >= 0:
		quad, f = 0, b
	case a <= 0 && b > 0:
		quad, f = 1, -a
	case a < 0 && b <= 0:
		quad, f = 2, -b
	default:
		quad, f = 3, a
	}
	k := math.Round(float64(quad+f) * u.q)     // quad+f is exact: f <= 1
	return uint64(k) & (uint64(1)<<u.bits - 1) // 4 quadrants wrap to 0
}

// vec decodes a code (any Bits() bits) to a unit vector in float64.
func (u UnitVec2) vec(c uint64) (x, y float64) {
	n := uint64(u.q)
	f := float64(c%n) / u.q // exact: u.q is a power of two
	switch c / n {
	case 0:
		x, y = 1-f, f
	case 1:
		x, y = -f, 1-f
	case 2:
		x, y = f-1, -f
	default:
		x, y = f, f-1
	}
	l := math.Sqrt(float64(x*x) + float64(y*y))
	return x / l, y / l
}

// codeWidths: one position on the diamond.
func (u UnitVec2) codeWidths() []int { return []int{int(u.bits)} }
