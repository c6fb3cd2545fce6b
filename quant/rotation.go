package quant

import (
	"fmt"
	"math"
)

// Rotation quantizes unit quaternions with the "smallest three" form: the
// component of largest magnitude is dropped (2 bits say which), the
// quaternion negated if that component is negative (q and -q are the same
// rotation, so this loses nothing), and the other three, which lie in
// [-1/sqrt2, 1/sqrt2], are quantized to 2^ComponentBits()-1 values each
// (an odd number, so 0 is exact: the all-ones code is unused); the
// receiver recomputes the dropped one as sqrt(1 - a^2 - b^2 - c^2). A code
// is 2 + 3*ComponentBits() bits (Gaffer on Games: 2 + 3*9 = 29). Make one
// with NewRotation. The component order is the caller's (x, y, z, w or w,
// x, y, z): the form does not depend on it.
//
// Error bound: with h = 1/(sqrt2 * (2^ComponentBits - 2)), each sent
// component is within h of the sign-normalised input's (3h when the two
// largest components nearly tie, see Code), the dropped one within 3h,
// and the decoded rotation within 7h radians of the input's (9 bits:
// h = 1.4e-3, 7h = 0.56 degrees; 15 bits: h = 2.2e-5; see
// TestRotationError). The input is normalised first; a zero, NaN or
// infinite quaternion is sent as [0, 0, 0, 1]. Decoded quaternions are
// unit length up to float rounding and have a non-negative largest
// component, so Quantize(q) == Quantize(-q).
//
// Arithmetic: float64 +, -, *, /, Abs, Round and Sqrt, each correctly
// rounded per IEEE 754, with explicit conversions between products and
// sums so none is fused: the same bits on every platform.
type Rotation struct {
	bits uint8
	m    float64 // 2^bits - 2, the largest code of a component (even, so 0 is on the grid)
}

// NewRotation returns the smallest-three quantizer of componentBits (2 to
// 16) bits per sent component.
func NewRotation(componentBits int) (Rotation, error) {
	if componentBits < 2 || componentBits > 16 {
		return Rotation{}, fmt.Errorf("%w: Rotation needs 2 to 16 bits per component, not %d", ErrParam, componentBits)
	}
	return Rotation{bits: uint8(componentBits), m: float64(uint64(1)<<componentBits - 2)}, nil
}

// Bits returns the width of a code.
func (q Rotation) Bits() int { return 2 + 3*int(q.bits) }

// ComponentBits returns the bits per sent component.
func (q Rotation) ComponentBits() int { return int(q.bits) }

// Code returns the code of the rotation v. When the two largest
// components nearly tie, the nearest code may decode to a quaternion whose
// dropped component is no longer the largest, which would re-encode
// differently; Code then moves the largest sent component one step
// toward zero until the code re-encodes to itself.
func (q Rotation) Code(v [4]float32) uint64 {
	c, margin := q.rawMargin([4]float64{float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])})
	if margin*q.m > 6 {
		// The largest component leads the others by over 8h: decoded, the
		// sent ones move at most h and the dropped one 3h (for widths
		// where margin can exceed 8h, h^2 is negligible), so it stays
		// the largest and the code re-encodes to itself.
		return c
	}
	for range 8 {
		if q.raw(q.quat(c)) == c {
			break
		}
		c = q.shrink(c)
	}
	return c
}

// shrink moves the sent component of largest magnitude one step toward
// zero.
func (q Rotation) shrink(c uint64) uint64 {
	mask := uint64(1)<<q.bits - 1
	m := uint64(q.m)
	best, bestDist := uint(0), uint64(0)
	for i := range uint(3) {
		s := 2 + i*uint(q.bits)
		k := c >> s & mask
		d := max(2*k, m) - min(2*k, m) // |2k - m|
		if d > bestDist {
			best, bestDist = s, d
		}
	}
	k := c >> best & mask
	switch {
	case 2*k > m:
		k--
	case 2*k < m:
		k++
	default:
		return c // already a smallest magnitude: nothing to shrink
	}
	return c&^(mask<<best) | k<<best
}

// Value returns the quaternion of code c, or ErrCode if c has more than
// Bits() bits or is not the code its quaternion encodes to.
func (q Rotation) Value(c uint64) ([4]float32, error) {
	if c>>q.Bits() != 0 {
		return [4]float32{}, ErrCode
	}
	mask := uint64(1)<<q.bits - 1
	for s := uint(2); s < uint(q.Bits()); s += uint(q.bits) {
		if c>>s&mask == mask {
			return [4]float32{}, ErrCode
		}
	}
	r := q.quat(c)
	if q.raw(r) != c {
		return [4]float32{}, ErrCode
	}
	return f32x4(r), nil
}

// Quantize returns the quaternion a receiver of v's code decodes.
func (q Rotation) Quantize(v [4]float32) [4]float32 { return f32x4(q.quat(q.Code(v))) }

func f32x4(r [4]float64) [4]float32 {
	return [4]float32{float32(r[0]), float32(r[1]), float32(r[2]), float32(r[3])}
}

const halfSqrt2 = math.Sqrt2 / 2

// raw maps a quaternion to its code, without settling ties.
func (q Rotation) raw(r [4]float64) uint64 {
	c, _ := q.rawMargin(r)
	return c
}

// rawMargin is raw, also returning by how much the largest normalised
// component's magnitude exceeds the others'.
func (q Rotation) rawMargin(r [4]float64) (uint64, float64) {
	n := math.Sqrt(float64(r[0]*r[0]) + float64(r[1]*r[1]) + float64(r[2]*r[2]) + float64(r[3]*r[3]))
	if !(n > 0) || n > math.MaxFloat64 {
		r, n = [4]float64{0, 0, 0, 1}, 1
	}
	big := 0
	for i := 1; i < 4; i++ {
		if math.Abs(r[i]) > math.Abs(r[big]) {
			big = i
		}
	}
	second := 0.0
	for i := range 4 {
		if i != big && math.Abs(r[i]) > second {
			second = math.Abs(r[i])
		}
	}
	margin := (math.Abs(r[big]) - second) / n
	if r[big] < 0 {
		n = -n
	}
	c, shift := uint64(big), uint(2)
	for i := range 4 {
		if i == big {
			continue
		}
		t := float64(float64(r[i]/n)+halfSqrt2) / math.Sqrt2 // in [0, 1]
		k := math.Round(float64(t * q.m))
		c |= uint64(clamp(k, q.m)) << shift
		shift += uint(q.bits)
	}
	return c, margin
}

// quat decodes a code (any Bits() bits) to a quaternion in float64.
func (q Rotation) quat(c uint64) [4]float64 {
	var r [4]float64
	big := int(c & 3)
	mask := uint64(1)<<q.bits - 1
	shift := uint(2)
	sum := 0.0
	for i := range 4 {
		if i == big {
			continue
		}
		k := float64(c >> shift & mask)
		shift += uint(q.bits)
		r[i] = float64(float64(k/q.m)*math.Sqrt2) - halfSqrt2
		sum += float64(r[i] * r[i])
	}
	r[big] = math.Sqrt(clamp(1-sum, 1))
	return r
}

// codeWidths: the index of the dropped component, then the three sent.
func (q Rotation) codeWidths() []int { b := int(q.bits); return []int{2, b, b, b} }
