package fixed

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// A Fixed is a signed Q32.32 fixed-point number: the int64 value v
// represents v / 2^32.
type Fixed int64

// Useful values. Pi, TwoPi and HalfPi are rounded to the nearest Fixed.
const (
	One     Fixed = 1 << 32
	Half    Fixed = 1 << 31
	Epsilon Fixed = 1 // the smallest positive value, 2^-32
	Max     Fixed = math.MaxInt64
	Min     Fixed = math.MinInt64
	Pi      Fixed = 13493037705 // round(π * 2^32)
	TwoPi   Fixed = 26986075409 // round(2π * 2^32)
	HalfPi  Fixed = 6746518852  // round(π/2 * 2^32)
)

// FromInt returns n as a Fixed, saturated to [Min, Max] if n is outside
// [-2^31, 2^31).
func FromInt(n int64) Fixed {
	switch {
	case n > math.MaxInt32:
		return Max
	case n < math.MinInt32:
		return Min
	}
	return Fixed(n << 32)
}

// FromFraction returns num/den rounded to the nearest Fixed, ties away from
// zero, with the same saturation and division-by-zero results as [Fixed.Div].
func FromFraction(num, den int64) Fixed { return Fixed(num).Div(Fixed(den)) }

// FromFloat returns f rounded to the nearest Fixed, saturated to [Min, Max];
// NaN gives 0. It is for setting up and testing only: simulation code must not
// depend on float arithmetic.
func FromFloat(f float64) Fixed {
	switch {
	case f != f:
		return 0
	case f >= 0x1p31:
		return Max
	case f <= -0x1p31:
		return Min
	}
	return Fixed(math.Round(f * 0x1p32))
}

// Float64 returns a as a float64, rounded if a needs more than 53 bits. It is
// for rendering and display only.
func (a Fixed) Float64() float64 { return float64(a) * 0x1p-32 }

// mag returns |a| as a uint64, which holds |Min| = 2^63.
func mag(a Fixed) uint64 {
	if a < 0 {
		return -uint64(a)
	}
	return uint64(a)
}

// fromMag returns m with the sign neg, saturated.
func fromMag(m uint64, neg bool) Fixed {
	if neg {
		if m >= 1<<63 {
			return Min
		}
		return -Fixed(m)
	}
	if m > math.MaxInt64 {
		return Max
	}
	return Fixed(m)
}

// Add returns a+b, saturated.
func (a Fixed) Add(b Fixed) Fixed {
	s := a + b
	if (a^s)&(b^s) < 0 { // a and b have the same sign and s the other one
		return fromMag(math.MaxUint64, a < 0)
	}
	return s
}

// Sub returns a-b, saturated.
func (a Fixed) Sub(b Fixed) Fixed {
	d := a - b
	if (a^b)&(a^d) < 0 { // a and b have different signs and d has b's
		return fromMag(math.MaxUint64, a < 0)
	}
	return d
}

// Neg returns -a; the negation of Min saturates to Max.
func (a Fixed) Neg() Fixed {
	if a == Min {
		return Max
	}
	return -a
}

// Abs returns |a|; the absolute value of Min saturates to Max.
func (a Fixed) Abs() Fixed {
	if a < 0 {
		return a.Neg()
	}
	return a
}

// Mul returns a*b, rounded to the nearest Fixed with ties away from zero, and
// saturated. The full 128-bit product is formed, so no precision is lost
// before the rounding.
func (a Fixed) Mul(b Fixed) Fixed {
	hi, lo := bits.Mul64(mag(a), mag(b))
	lo, c := bits.Add64(lo, 1<<31, 0)
	hi += c
	if hi >= 1<<32 {
		return fromMag(math.MaxUint64, (a < 0) != (b < 0))
	}
	return fromMag(hi<<32|lo>>32, (a < 0) != (b < 0))
}

// Div returns a/b, rounded to the nearest Fixed with ties away from zero, and
// saturated. Division by zero returns Max if a > 0, Min if a < 0 and 0 if a
// is 0.
func (a Fixed) Div(b Fixed) Fixed {
	if b == 0 {
		switch {
		case a > 0:
			return Max
		case a < 0:
			return Min
		}
		return 0
	}
	neg := (a < 0) != (b < 0)
	n, d := mag(a), mag(b)
	if n>>32 >= d {
		return fromMag(math.MaxUint64, neg)
	}
	q, r := bits.Div64(n>>32, n<<32, d)
	if r >= d-r && q != math.MaxUint64 { // 2r >= d: round up
		q++
	}
	return fromMag(q, neg)
}

// Floor returns the greatest integer value less than or equal to a.
func (a Fixed) Floor() Fixed { return a &^ (One - 1) }

// Ceil returns the least integer value greater than or equal to a. If that is
// 2^31, which is out of range, Ceil returns Max.
func (a Fixed) Ceil() Fixed {
	if a > Max-(One-1) {
		return Max
	}
	return (a + One - 1).Floor()
}

// Round returns the nearest integer value to a, rounding ties away from zero.
// If that is 2^31, which is out of range, Round returns Max.
func (a Fixed) Round() Fixed {
	if a < 0 {
		return a.Sub(Half).Ceil()
	}
	if a > Max-Half {
		return Max
	}
	return (a + Half).Floor()
}

// Int returns the integer part of a, rounded toward negative infinity:
// a == FromInt(a.Int()) + a.Frac() for every a.
func (a Fixed) Int() int64 { return int64(a >> 32) }

// Frac returns the fractional part of a, a - a.Floor(), which lies in [0, 1).
func (a Fixed) Frac() Fixed { return a & (One - 1) }

// Clamp returns a limited to [lo, hi]: lo if a < lo, hi if a > hi. If lo > hi,
// Clamp returns hi.
func (a Fixed) Clamp(lo, hi Fixed) Fixed { return min(max(a, lo), hi) }

// Lerp returns the linear interpolation a + (b-a)*t, saturated: a at t = 0
// and b at t = One. t is not clamped. If b-a overflows, the result saturates
// as [Fixed.Sub] does.
func Lerp(a, b, t Fixed) Fixed { return a.Add(b.Sub(a).Mul(t)) }

// Sqrt returns the square root of a, correctly rounded: the Fixed nearest to
// the exact root. The square root of a negative number is 0.
func (a Fixed) Sqrt() Fixed {
	if a <= 0 {
		return 0
	}
	// sqrt(a / 2^32) * 2^32 = sqrt(a * 2^32).
	return Fixed(sqrt128(uint64(a)>>32, uint64(a)<<32))
}

// sqrt128 returns the square root of hi<<64 | lo rounded to the nearest
// integer. It requires hi <= 1<<63.
func sqrt128(hi, lo uint64) uint64 {
	n := bits.Len64(lo)
	if hi != 0 {
		n = 64 + bits.Len64(hi)
	}
	if n == 0 {
		return 0
	}
	// Newton's method from above converges to floor(sqrt). Every iterate is
	// at least floor(sqrt(hi:lo)) > hi, so the division cannot overflow.
	x := uint64(math.MaxUint64)
	if s := (n + 1) / 2; s < 64 {
		x = 1 << s
	}
	for {
		q, _ := bits.Div64(hi, lo, x)
		y := x>>1 + q>>1 + x&q&1 // (x+q)/2 without overflow
		if y >= x {
			break
		}
		x = y
	}
	// Round up if hi:lo - x² > x, that is if the root is above x + 1/2.
	sh, sl := bits.Mul64(x, x)
	rl, b := bits.Sub64(lo, sl, 0)
	rh, _ := bits.Sub64(hi, sh, b)
	if rh != 0 || rl > x {
		x++
	}
	return x
}

// String returns a in decimal, with the fewest fractional digits (at most 10)
// that [Parse] turns back into a: "1.5", "-2", "0.1".
func (a Fixed) String() string {
	m := mag(a)
	b := make([]byte, 0, 24)
	if a < 0 {
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, m>>32, 10)
	f := m & (1<<32 - 1)
	if f == 0 {
		return string(b)
	}
	b = append(b, '.')
	for d, p := 1, uint64(10); ; d, p = d+1, p*10 {
		// dec = round(f * 10^d / 2^32): f as d decimal digits.
		hi, lo := bits.Mul64(f, p)
		lo, c := bits.Add64(lo, 1<<31, 0)
		dec := (hi+c)<<32 | lo>>32
		// back = round(dec * 2^32 / 10^d), which is how Parse reads it.
		lo, c = bits.Add64(dec<<32, p/2, 0)
		if back, _ := bits.Div64(dec>>32+c, lo, p); back == f {
			// p+dec is "1" followed by dec padded to d digits.
			b = strconv.AppendUint(b, p+dec, 10)
			return string(append(b[:len(b)-d-1], b[len(b)-d:]...))
		}
	}
}

// Parse returns the Fixed nearest to the decimal number s, rounding ties away
// from zero. s is an optional sign followed by decimal digits with an optional
// decimal point, such as "12", "-0.25", "+.5" or "3."; any number of
// fractional digits is read exactly. If s is not of that form, Parse returns
// an error wrapping [ErrSyntax]; if its value lies outside the range of
// Fixed, an error wrapping [ErrRange].
func Parse(s string) (Fixed, error) {
	num := s
	neg := false
	if num != "" && (num[0] == '+' || num[0] == '-') {
		neg = num[0] == '-'
		num = num[1:]
	}
	ipart, fpart, _ := strings.Cut(num, ".")
	if ipart == "" && fpart == "" || !allDigits(ipart) || !allDigits(fpart) {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	var ip uint64
	for i := range len(ipart) {
		ip = ip*10 + uint64(ipart[i]-'0')
		if ip > 1<<31 {
			return 0, fmt.Errorf("%w: %q", ErrRange, s)
		}
	}
	// Only the first 33 fractional digits can change the result: with A
	// those digits as an integer, the fraction times 2^33 lies within less
	// than 5^-33 above A/5^33, and no integer lies in between.
	var hi, lo uint64
	for i := range 33 {
		var d uint64
		if i < len(fpart) {
			d = uint64(fpart[i] - '0')
		}
		h, l := bits.Mul64(lo, 10)
		hi = hi*10 + h
		var c uint64
		lo, c = bits.Add64(l, d, 0)
		hi += c
	}
	const pow5to27 = 7450580596923828125 // 5^27: 5^33 = 5^27 * 5^6
	q, _ := bits.Div64(hi, lo, pow5to27)
	f := (q/15625 + 1) >> 1 // round(fraction * 2^32) from floor(fraction * 2^33)
	m := ip<<32 + f
	if m > 1<<63 || m == 1<<63 && !neg {
		return 0, fmt.Errorf("%w: %q", ErrRange, s)
	}
	return fromMag(m, neg), nil
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
