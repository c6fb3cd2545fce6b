package quant

import (
	"fmt"
	"math"
)

// UnitVec quantizes 3D unit vectors (directions, normals) with the
// octahedral mapping: the vector is scaled to |x|+|y|+|z| = 1, the lower
// half of that octahedron folded over the upper one, and the resulting
// square [-1, 1]^2 quantized to 2^AxisBits()-1 values per axis (an odd
// number, so that the axes and the centre are exact: the all-ones code of
// an axis is unused), 2*AxisBits() bits in all. Make one with NewUnitVec.
//
// Error bound: the decoded vector is within 5/2^AxisBits radians of the
// input direction (the worst of 50,000 random directions: 4 bits per axis
// 0.29 rad, 8 bits 0.016, 12 bits 1.0e-3, 16 bits 6.4e-5, about
// 4.2/2^AxisBits; see TestUnitVecError). The input need not be unit length; a zero, NaN or
// infinite vector is sent as +Z. Decoded vectors are unit length up to
// float rounding.
//
// Arithmetic: float64 +, -, *, /, Abs, Round and Sqrt, each correctly
// rounded per IEEE 754, with explicit conversions between products and
// sums so none is fused: the same bits on every platform.
type UnitVec struct {
	bits uint8
	m    float64 // 2^bits - 2, the largest code of an axis (even, so 0 is on the grid)
}

// NewUnitVec returns the octahedral quantizer of axisBits (2 to 16) bits
// per axis.
func NewUnitVec(axisBits int) (UnitVec, error) {
	if axisBits < 2 || axisBits > 16 {
		return UnitVec{}, fmt.Errorf("%w: UnitVec needs 2 to 16 bits per axis, not %d", ErrParam, axisBits)
	}
	return UnitVec{bits: uint8(axisBits), m: float64(uint64(1)<<axisBits - 2)}, nil
}

// Bits returns the width of a code: two axes.
func (u UnitVec) Bits() int { return 2 * int(u.bits) }

// AxisBits returns the bits per axis.
func (u UnitVec) AxisBits() int { return int(u.bits) }

// Code returns the code of the direction of v. Codes that decode to the
// same vector (the fold's seams) have one canonical code, the one Code
// gives.
func (u UnitVec) Code(v [3]float32) uint64 {
	c := u.raw(float64(v[0]), float64(v[1]), float64(v[2]))
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
// Bits() bits or is not canonical.
func (u UnitVec) Value(c uint64) ([3]float32, error) {
	mask := uint64(1)<<u.bits - 1
	if c>>u.Bits() != 0 || c&mask == mask || c>>u.bits == mask {
		return [3]float32{}, ErrCode
	}
	x, y, z := u.vec(c)
	if u.raw(x, y, z) != c {
		return [3]float32{}, ErrCode
	}
	return [3]float32{float32(x), float32(y), float32(z)}, nil
}

// Quantize returns the vector a receiver of v's code decodes.
func (u UnitVec) Quantize(v [3]float32) [3]float32 {
	x, y, z := u.vec(u.Code(v))
	return [3]float32{float32(x), float32(y), float32(z)}
}

// sign returns 1 for x >= 0 (-0 included), else -1.
func sign(x float64) float64 {
	if x >= 0 {
		return 1
	}
	return -1
}

// raw maps a vector to its code, without settling seams.
func (u UnitVec) raw(x, y, z float64) uint64 {
	s := math.Abs(x) + math.Abs(y) + math.Abs(z)
	if !(s > 0) || s > math.MaxFloat64 {
		x, y, z, s = 0, 0, 1, 1
	}
	px, py := x/s, y/s
	if z < 0 {
		px, py = (1-math.Abs(py))*sign(px), (1-math.Abs(px))*sign(py)
	}
	return u.axis(px) | u.axis(py)<<u.bits
}

// axis quantizes p in [-1, 1] to [0, m].
func (u UnitVec) axis(p float64) uint64 {
	c := math.Round(float64((p+1)*0.5) * u.m)
	return uint64(clamp(c, u.m))
}

// clamp returns x limited to [0, hi] (x is not NaN). Plain comparisons:
// math.Min and math.Max, which handle NaN and signed zeros, cost a call.
func clamp(x, hi float64) float64 {
	if x < 0 {
		return 0
	}
	if x > hi {
		return hi
	}
	return x
}

// vec decodes a code (any 2*bits bits) to a unit vector in float64.
func (u UnitVec) vec(c uint64) (x, y, z float64) {
	mask := uint64(1)<<u.bits - 1
	px := float64(2*(c&mask))/u.m - 1
	py := float64(2*(c>>u.bits&mask))/u.m - 1
	pz := 1 - math.Abs(px) - math.Abs(py)
	if pz < 0 {
		px, py = (1-math.Abs(py))*sign(px), (1-math.Abs(px))*sign(py)
	}
	n := math.Sqrt(float64(px*px) + float64(py*py) + float64(pz*pz))
	return px / n, py / n, pz / n
}

// codeWidths: the two axes of the octahedral square.
func (u UnitVec) codeWidths() []int { return []int{int(u.bits), int(u.bits)} }
