package fixed

import "math/bits"

// Fixed-point formats used inside this file: Q2.62 is an int64 counting units
// of 2^-62 (range [-2, 2)); a phase is a uint64 counting units of 2^-64 turn.
const (
	q62          = 1 << 62
	halfPiQ62    = 7244019458077122842 // round(π/2 * 2^62)
	quarterPiQ62 = 3622009729038561421 // round(π/4 * 2^62)
	halfPiQ63    = 0xc90fdaa22168c235  // round(π/2 * 2^63)
	invTwoPiQ64  = 0x28be60db9391054a  // round(2^64 / 2π)
	tanPi8Q62    = 1910222894239003202 // round(tan(π/8) * 2^62)
)

// Sin returns the sine of a radians, within 1e-9 of the exact value.
func (a Fixed) Sin() Fixed {
	s, _ := sinCos(a)
	return s
}

// Cos returns the cosine of a radians, within 1e-9 of the exact value.
func (a Fixed) Cos() Fixed {
	_, c := sinCos(a)
	return c
}

// SinCos returns a.Sin() and a.Cos(), computed together.
func (a Fixed) SinCos() (sin, cos Fixed) { return sinCos(a) }

// sinCos reduces a to an angle θ in [0, π/4] and an octant, evaluates the
// series for θ, and maps the results back.
func sinCos(a Fixed) (sin, cos Fixed) {
	// The angle in turns: |a| * (1/2π) is a Q32.96 number of turns whose
	// fraction, rounded to 64 bits, is the phase. The reduction is exact up
	// to the rounding of 1/2π, which costs less than 2^-34 turn at the ends
	// of the range and proportionally less for smaller angles.
	hi, lo := bits.Mul64(mag(a), invTwoPiQ64)
	p := (hi<<32 | lo>>32) + (lo >> 31 & 1) // rounded
	if a < 0 {
		p = -p
	}
	quadrant := p >> 62
	r := p & (q62 - 1) // angle within the quadrant, in 2^-62 quarter turns
	swap := r > q62/2
	if swap {
		r = q62 - r
	}
	hi, lo = bits.Mul64(r, halfPiQ63)
	theta := int64(hi<<1 | lo>>63) // r quarter turns in radians, Q2.62
	// Taylor series; truncating them here leaves an error below 1e-13, far
	// below the resolution of Fixed.
	z := mulQ62(theta, theta)
	s := mulQ62(theta, horner(z, q62, -q62/6, q62/120, -q62/5040, q62/362880,
		-q62/39916800, q62/6227020800))
	c := horner(z, q62, -q62/2, q62/24, -q62/720, q62/40320, -q62/3628800,
		q62/479001600, -q62/87178291200)
	if swap {
		s, c = c, s
	}
	sin, cos = q62ToFixed(s), q62ToFixed(c)
	switch quadrant {
	case 1:
		sin, cos = cos, -sin
	case 2:
		sin, cos = -sin, -cos
	case 3:
		sin, cos = -cos, sin
	}
	return sin, cos
}

// Atan2 returns the angle of the point (x, y) from the positive x axis, in
// radians in [-π, π], within 1e-9 of the exact value. Like [math.Atan2], it
// returns π for y = 0 and x < 0, and 0 for x = y = 0.
func Atan2(y, x Fixed) Fixed {
	if x == 0 && y == 0 {
		return 0
	}
	ax, ay := mag(x), mag(y)
	var a int64 // the angle in the first quadrant, Q2.62
	if ay <= ax {
		a = atanQ62(ratioQ62(ay, ax))
	} else {
		a = halfPiQ62 - atanQ62(ratioQ62(ax, ay))
	}
	r := q62ToFixed(a)
	if x < 0 {
		r = Pi - r
	}
	if y < 0 {
		r = -r
	}
	return r
}

// atanQ62 returns atan(t) for t in [0, 1], both in Q2.62.
func atanQ62(t int64) int64 {
	var base int64
	if t > tanPi8Q62 {
		// atan(t) = π/4 + atan((t-1)/(t+1)), and |(t-1)/(t+1)| <= tan(π/8).
		base = quarterPiQ62
		t = -ratioQ62(uint64(q62-t), uint64(q62)+uint64(t))
	}
	// The Taylor series of atan, truncated after t^29: the error is below
	// tan(π/8)^31 / 31 < 1e-13.
	return base + mulQ62(t, horner(mulQ62(t, t), q62, -q62/3, q62/5, -q62/7,
		q62/9, -q62/11, q62/13, -q62/15, q62/17, -q62/19, q62/21, -q62/23,
		q62/25, -q62/27, q62/29))
}

// horner returns the polynomial with the coefficients c (constant term first)
// at z, all in Q2.62.
func horner(z int64, c ...int64) int64 {
	acc := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		acc = c[i] + mulQ62(z, acc)
	}
	return acc
}

// mulQ62 returns a*b in Q2.62, rounded to nearest; |a*b| must be below 2.
func mulQ62(a, b int64) int64 {
	hi, lo := bits.Mul64(mag(Fixed(a)), mag(Fixed(b)))
	lo, c := bits.Add64(lo, 1<<61, 0)
	m := int64((hi+c)<<2 | lo>>62)
	if (a < 0) != (b < 0) {
		return -m
	}
	return m
}

// ratioQ62 returns n/d in Q2.62, truncated; it requires n <= d and d > 0.
func ratioQ62(n, d uint64) int64 {
	q, _ := bits.Div64(n>>2, n<<62, d)
	return int64(q)
}

// q62ToFixed converts v from Q2.62 to Q32.32, rounding to nearest.
func q62ToFixed(v int64) Fixed { return Fixed((v + 1<<29) >> 30) }
