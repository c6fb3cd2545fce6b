package fixed

import "math/bits"

// A Vec2 is a 2D vector of Fixed components. Its methods saturate like those
// of Fixed.
type Vec2 struct {
	X, Y Fixed
}

// Add returns v+w.
func (v Vec2) Add(w Vec2) Vec2 { return Vec2{v.X.Add(w.X), v.Y.Add(w.Y)} }

// Sub returns v-w.
func (v Vec2) Sub(w Vec2) Vec2 { return Vec2{v.X.Sub(w.X), v.Y.Sub(w.Y)} }

// Neg returns -v.
func (v Vec2) Neg() Vec2 { return Vec2{v.X.Neg(), v.Y.Neg()} }

// Scale returns v*s.
func (v Vec2) Scale(s Fixed) Vec2 { return Vec2{v.X.Mul(s), v.Y.Mul(s)} }

// Dot returns the dot product of v and w, each product rounded as by
// [Fixed.Mul].
func (v Vec2) Dot(w Vec2) Fixed { return v.X.Mul(w.X).Add(v.Y.Mul(w.Y)) }

// LengthSquared returns v.Dot(v). It saturates for vectors longer than about
// 46340; [Vec2.Length] does not.
func (v Vec2) LengthSquared() Fixed { return v.Dot(v) }

// Length returns the length of v, correctly rounded. It is computed from
// the exact 128-bit sum of squares, so it does not overflow unless the length
// itself exceeds Max.
func (v Vec2) Length() Fixed {
	xh, xl := bits.Mul64(mag(v.X), mag(v.X))
	yh, yl := bits.Mul64(mag(v.Y), mag(v.Y))
	lo, c := bits.Add64(xl, yl, 0)
	hi := xh + yh + c // at most 2^63: both squares are at most 2^126
	return fromMag(sqrt128(hi, lo), false)
}

// Normalize returns v scaled to length One, or the zero vector if v is zero.
func (v Vec2) Normalize() Vec2 {
	l := v.Length()
	if l == 0 {
		return Vec2{}
	}
	return Vec2{v.X.Div(l), v.Y.Div(l)}
}

// Rotate returns v rotated counterclockwise by angle radians.
func (v Vec2) Rotate(angle Fixed) Vec2 {
	s, c := angle.SinCos()
	return Vec2{
		v.X.Mul(c).Sub(v.Y.Mul(s)),
		v.X.Mul(s).Add(v.Y.Mul(c)),
	}
}

// String returns v as "(x, y)".
func (v Vec2) String() string { return "(" + v.X.String() + ", " + v.Y.String() + ")" }
