package fixed

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// f returns x as a Fixed for test tables; x must be exact in binary.
func f(x float64) Fixed { return FromFloat(x) }

func TestConstants(t *testing.T) {
	tests := []struct {
		name string
		got  Fixed
		want float64
	}{
		{"One", One, 1},
		{"Half", Half, 0.5},
		{"Epsilon", Epsilon, 0x1p-32},
		{"Max", Max, 0x1p31 - 0x1p-32},
		{"Min", Min, -0x1p31},
	}
	for _, tt := range tests {
		if got := tt.got.Float64(); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAddSub(t *testing.T) {
	tests := []struct{ a, b, sum, diff Fixed }{
		{One, One, 2 * One, 0},
		{f(1.5), f(-2.25), f(-0.75), f(3.75)},
		{Max, Epsilon, Max, Max - 1},
		{Max, Max, Max, 0},
		{Min, -Epsilon, Min, Min + 1},
		{Min, Min, Min, 0},
		{Max, Min, -1, Max},
		{Min, Max, -1, Min},
		{-One, Max, Max - One, Min},
		{0, Min, Min, Max},
	}
	for _, tt := range tests {
		if got := tt.a.Add(tt.b); got != tt.sum {
			t.Errorf("%v.Add(%v) = %v, want %v", tt.a, tt.b, got, tt.sum)
		}
		if got := tt.b.Add(tt.a); got != tt.sum {
			t.Errorf("%v.Add(%v) = %v, want %v", tt.b, tt.a, got, tt.sum)
		}
		if got := tt.a.Sub(tt.b); got != tt.diff {
			t.Errorf("%v.Sub(%v) = %v, want %v", tt.a, tt.b, got, tt.diff)
		}
	}
}

func TestNegAbs(t *testing.T) {
	tests := []struct{ a, neg, abs Fixed }{
		{0, 0, 0},
		{One, -One, One},
		{-Half, Half, Half},
		{Max, -Max, Max},
		{Min, Max, Max},
		{Min + 1, Max, Max},
	}
	for _, tt := range tests {
		if got := tt.a.Neg(); got != tt.neg {
			t.Errorf("%v.Neg() = %v, want %v", tt.a, got, tt.neg)
		}
		if got := tt.a.Abs(); got != tt.abs {
			t.Errorf("%v.Abs() = %v, want %v", tt.a, got, tt.abs)
		}
	}
}

func TestMul(t *testing.T) {
	tests := []struct{ a, b, want Fixed }{
		{One, One, One},
		{f(1.5), f(2), f(3)},
		{f(-1.5), f(2), f(-3)},
		{f(-1.5), f(-2.5), f(3.75)},
		{Half, Half, f(0.25)},
		{Epsilon, Half, Epsilon},   // 0.5 ulp rounds away from zero
		{-Epsilon, Half, -Epsilon}, // symmetrically
		{Epsilon, Half - 1, 0},     // below 0.5 ulp rounds to zero
		{Epsilon, Epsilon, 0},      // 2^-64
		{3, Half, 2},               // 1.5 ulp -> 2
		{f(0.75), 3, 2},            // 2.25 ulp -> 2
		{FromInt(65536), FromInt(32767), FromInt(65536 * 32767)},
		{FromInt(65536), FromInt(32768), Max},
		{FromInt(-65536), FromInt(32768), Min},
		{FromInt(65536), FromInt(-32768), Min},
		{Max, Max, Max},
		{Min, Min, Max},
		{Min, Max, Min},
		{Min, One, Min},
		{Max, -One, -Max},
		{Min, -One, Max},
		{0, Min, 0},
	}
	for _, tt := range tests {
		if got := tt.a.Mul(tt.b); got != tt.want {
			t.Errorf("%v.Mul(%v) = %v (%d), want %v (%d)", tt.a, tt.b, got, got, tt.want, tt.want)
		}
		if got := tt.b.Mul(tt.a); got != tt.want {
			t.Errorf("%v.Mul(%v) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestDiv(t *testing.T) {
	tests := []struct{ a, b, want Fixed }{
		{One, One, One},
		{f(3), f(2), f(1.5)},
		{f(-3), f(2), f(-1.5)},
		{f(-3), f(-0.5), f(6)},
		{One, FromInt(3), 1431655765},        // 0.333..., rounded down
		{FromInt(2), FromInt(3), 2863311531}, // 0.666..., rounded up
		{-One, FromInt(3), -1431655765},
		{Epsilon, 2 * One, Epsilon}, // 0.5 ulp rounds away from zero
		{-Epsilon, 2 * One, -Epsilon},
		{Epsilon, 3 * One, 0},
		{One, 0, Max},
		{-One, 0, Min},
		{0, 0, 0},
		{Max, Epsilon, Max},
		{Min, Epsilon, Min},
		{Min, -Epsilon, Max},
		{Max, Half, Max},
		{FromInt(1 << 30), Half, Max},
		{FromInt(-1 << 30), Half, Min},
		{FromInt(-1 << 30), -Half, Max},
		{Min, -One, Max},
		{Min, One, Min},
		{Max, Max, One},
		{Min, Min, One},
		{0, Min, 0},
	}
	for _, tt := range tests {
		if got := tt.a.Div(tt.b); got != tt.want {
			t.Errorf("%v.Div(%v) = %v (%d), want %v (%d)", tt.a, tt.b, got, got, tt.want, tt.want)
		}
	}
}

// TestMulDivExact checks Mul and Div against exact rational arithmetic:
// round to nearest, ties away from zero, then saturate.
func TestMulDivExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	one := new(big.Int).Lsh(big.NewInt(1), 32)
	for i := range 20000 {
		a, b := randFixed(r), randFixed(r)
		if i%4 == 0 {
			b = Fixed(r.Int64N(1<<40) - 1<<39)
		}
		prod := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(a)), big.NewInt(int64(b))), one)
		if got, want := a.Mul(b), roundRat(prod); got != want {
			t.Fatalf("%d.Mul(%d) = %d, want %d", a, b, got, want)
		}
		if b == 0 {
			continue
		}
		quot := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(a)), one), big.NewInt(int64(b)))
		if got, want := a.Div(b), roundRat(quot); got != want {
			t.Fatalf("%d.Div(%d) = %d, want %d", a, b, got, want)
		}
	}
}

// randFixed returns a value whose magnitude is spread over all scales.
func randFixed(r *rand.Rand) Fixed {
	v := Fixed(r.Uint64() >> r.IntN(64))
	if r.IntN(2) == 0 {
		return -v
	}
	return v
}

// exact returns a with its low bits cleared so that a.Float64() is exact,
// for comparisons with the math package.
func exact(a Fixed) Fixed {
	if n := bits.Len64(mag(a)); n > 53 {
		return a &^ (1<<(n-53) - 1)
	}
	return a
}

// roundRat returns x (in units of 2^-32) rounded half away from zero and
// saturated to [Min, Max].
func roundRat(x *big.Rat) Fixed {
	num, den := new(big.Int).Abs(x.Num()), x.Denom()
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if rem.Lsh(rem, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if x.Sign() < 0 {
		q.Neg(q)
	}
	switch {
	case q.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return Max
	case q.Cmp(big.NewInt(math.MinInt64)) < 0:
		return Min
	}
	return Fixed(q.Int64())
}

func TestFromInt(t *testing.T) {
	tests := []struct {
		n    int64
		want Fixed
	}{
		{0, 0},
		{1, One},
		{-1, -One},
		{math.MaxInt32, Max - (One - 1)},
		{math.MinInt32, Min},
		{math.MaxInt32 + 1, Max},
		{math.MinInt32 - 1, Min},
		{math.MaxInt64, Max},
		{math.MinInt64, Min},
	}
	for _, tt := range tests {
		if got := FromInt(tt.n); got != tt.want {
			t.Errorf("FromInt(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestFromFraction(t *testing.T) {
	tests := []struct {
		num, den int64
		want     Fixed
	}{
		{1, 2, Half},
		{-3, 4, f(-0.75)},
		{1, 3, 1431655765},
		{1, 10, 429496730},
		{7, 1, FromInt(7)},
		{math.MaxInt32, 1, FromInt(math.MaxInt32)},
		{1 << 31, 1, Max},
		{-1 << 31, 1, Min},
		{math.MaxInt64, math.MaxInt64, One},
		{math.MinInt64, math.MaxInt64, -One},
		{1, math.MaxInt64, 0},
		{1, 0, Max},
		{-1, 0, Min},
		{0, 0, 0},
	}
	for _, tt := range tests {
		if got := FromFraction(tt.num, tt.den); got != tt.want {
			t.Errorf("FromFraction(%d, %d) = %d, want %d", tt.num, tt.den, got, tt.want)
		}
	}
}

func TestFromFloat(t *testing.T) {
	tests := []struct {
		f    float64
		want Fixed
	}{
		{0, 0},
		{1.5, One + Half},
		{-0.25, -One / 4},
		{0x1p-33, 1}, // a tie: away from zero
		{-0x1p-33, -1},
		{0x1p-34, 0},
		{math.NaN(), 0},
		{math.Inf(1), Max},
		{math.Inf(-1), Min},
		{0x1p31, Max},
		{-0x1p31, Min},
		{1e300, Max},
		{0x1p31 - 0x1p-21, Max - (1<<11 - 1)},
	}
	for _, tt := range tests {
		if got := FromFloat(tt.f); got != tt.want {
			t.Errorf("FromFloat(%v) = %d, want %d", tt.f, got, tt.want)
		}
	}
}

func TestRounding(t *testing.T) {
	tests := []struct {
		a                  Fixed
		floor, ceil, round Fixed
		int                int64
		frac               Fixed
	}{
		{0, 0, 0, 0, 0, 0},
		{f(2.5), f(2), f(3), f(3), 2, Half},
		{f(2.25), f(2), f(3), f(2), 2, f(0.25)},
		{f(2.75), f(2), f(3), f(3), 2, f(0.75)},
		{f(-2.5), f(-3), f(-2), f(-3), -3, Half},
		{f(-2.25), f(-3), f(-2), f(-2), -3, f(0.75)},
		{f(-2.75), f(-3), f(-2), f(-3), -3, f(0.25)},
		{f(4), f(4), f(4), f(4), 4, 0},
		{f(-4), f(-4), f(-4), f(-4), -4, 0},
		{Epsilon, 0, One, 0, 0, Epsilon},
		{-Epsilon, -One, 0, 0, -1, One - Epsilon},
		{Half - 1, 0, One, 0, 0, Half - 1},
		{-Half, -One, 0, -One, -1, Half},
		{Max, Max - (One - 1), Max, Max, math.MaxInt32, One - 1},
		{Max - Half, Max - (One - 1), Max, Max - (One - 1), math.MaxInt32, Half - 1},
		{Min, Min, Min, Min, math.MinInt32, 0},
		{Min + 1, Min, Min + One, Min, math.MinInt32, 1},
		{Min + Half, Min, Min + One, Min, math.MinInt32, Half},
	}
	for _, tt := range tests {
		if got := tt.a.Floor(); got != tt.floor {
			t.Errorf("%v.Floor() = %v, want %v", tt.a, got, tt.floor)
		}
		if got := tt.a.Ceil(); got != tt.ceil {
			t.Errorf("%v.Ceil() = %v, want %v", tt.a, got, tt.ceil)
		}
		if got := tt.a.Round(); got != tt.round {
			t.Errorf("%v.Round() = %v, want %v", tt.a, got, tt.round)
		}
		if got := tt.a.Int(); got != tt.int {
			t.Errorf("%v.Int() = %v, want %v", tt.a, got, tt.int)
		}
		if got := tt.a.Frac(); got != tt.frac {
			t.Errorf("%v.Frac() = %v, want %v", tt.a, got, tt.frac)
		}
		if got := FromInt(tt.a.Int()) + tt.a.Frac(); got != tt.a {
			t.Errorf("FromInt(%v.Int()) + Frac() = %v", tt.a, got)
		}
	}
}

func TestClampLerp(t *testing.T) {
	clamps := []struct{ a, lo, hi, want Fixed }{
		{f(5), 0, One, One},
		{f(-5), 0, One, 0},
		{Half, 0, One, Half},
		{Half, One, 0, 0}, // lo > hi: hi
	}
	for _, tt := range clamps {
		if got := tt.a.Clamp(tt.lo, tt.hi); got != tt.want {
			t.Errorf("%v.Clamp(%v, %v) = %v, want %v", tt.a, tt.lo, tt.hi, got, tt.want)
		}
	}
	lerps := []struct{ a, b, t, want Fixed }{
		{f(2), f(4), 0, f(2)},
		{f(2), f(4), One, f(4)},
		{f(2), f(4), Half, f(3)},
		{f(2), f(4), f(0.25), f(2.5)},
		{f(4), f(2), f(0.25), f(3.5)},
		{f(2), f(4), f(2), f(6)}, // extrapolation
		{f(-1), f(1), Half, 0},
	}
	for _, tt := range lerps {
		if got := Lerp(tt.a, tt.b, tt.t); got != tt.want {
			t.Errorf("Lerp(%v, %v, %v) = %v, want %v", tt.a, tt.b, tt.t, got, tt.want)
		}
	}
}

func TestSqrt(t *testing.T) {
	tests := []struct{ a, want Fixed }{
		{0, 0},
		{-One, 0},
		{Min, 0},
		{One, One},
		{FromInt(4), FromInt(2)},
		{f(0.25), Half},
		{FromInt(1 << 30), FromInt(1 << 15)},
		{Epsilon, 1 << 16},
		{2, 92682},            // sqrt(2) * 2^16 = 92681.9
		{Max, 0xb504f333f9de}, // sqrt(2^63 - 1) rounded
	}
	for _, tt := range tests {
		if got := tt.a.Sqrt(); got != tt.want {
			t.Errorf("%v.Sqrt() = %d, want %d", tt.a, got, tt.want)
		}
	}
}

// TestSqrtCorrectlyRounded checks Sqrt exactly with big integers, and against
// math.Sqrt within one unit of Fixed.
func TestSqrtCorrectlyRounded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		a := Fixed(r.Uint64() >> r.IntN(64) >> 1)
		s := a.Sqrt()
		// (2s-1)^2 <= 4*a*2^32 <= (2s+1)^2
		n := new(big.Int).Lsh(big.NewInt(int64(a)), 34)
		lo := big.NewInt(max(2*int64(s)-1, 0))
		hi := big.NewInt(2*int64(s) + 1)
		if lo.Mul(lo, lo).Cmp(n) > 0 || hi.Mul(hi, hi).Cmp(n) < 0 {
			t.Fatalf("%d.Sqrt() = %d, not correctly rounded", a, s)
		}
		if want := math.Sqrt(a.Float64()); math.Abs(s.Float64()-want) > Epsilon.Float64() {
			t.Fatalf("%v.Sqrt() = %v, math.Sqrt gives %v", a, s, want)
		}
	}
}

func TestSinCos(t *testing.T) {
	const tol = 1e-9
	check := func(a Fixed) {
		t.Helper()
		x := a.Float64()
		s, c := a.SinCos()
		if d := math.Abs(s.Float64() - math.Sin(x)); d > tol {
			t.Fatalf("Sin(%v) = %v, want %v (error %.3g)", x, s.Float64(), math.Sin(x), d)
		}
		if d := math.Abs(c.Float64() - math.Cos(x)); d > tol {
			t.Fatalf("Cos(%v) = %v, want %v (error %.3g)", x, c.Float64(), math.Cos(x), d)
		}
		if a.Sin() != s || a.Cos() != c {
			t.Fatalf("SinCos(%v) differs from Sin, Cos", x)
		}
	}
	// A fine grid over a few turns, and the special angles.
	for a := -4 * TwoPi; a <= 4*TwoPi; a += One / 512 {
		check(a)
	}
	for k := int64(-16); k <= 16; k++ {
		check(Fixed(k * int64(Pi) / 4))
	}
	// Large angles.
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		check(exact(randFixed(r)))
	}
	check(exact(Max))
	check(Min)
}

func TestTrigExactValues(t *testing.T) {
	tests := []struct {
		name      string
		got, want Fixed
	}{
		{"Sin(0)", Fixed(0).Sin(), 0},
		{"Cos(0)", Fixed(0).Cos(), One},
		{"Sin(Pi/2)", HalfPi.Sin(), One},
		{"Cos(Pi)", Pi.Cos(), -One},
		{"Sin(-Pi/2)", (-HalfPi).Sin(), -One},
		{"Cos(2Pi)", TwoPi.Cos(), One},
		{"Atan2(0, 0)", Atan2(0, 0), 0},
		{"Atan2(0, 1)", Atan2(0, One), 0},
		{"Atan2(1, 0)", Atan2(One, 0), HalfPi},
		{"Atan2(-1, 0)", Atan2(-One, 0), -HalfPi},
		{"Atan2(0, -1)", Atan2(0, -One), Pi},
		{"Atan2(1, 1)", Atan2(One, One), (Pi + 2) / 4},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

func TestAtan2(t *testing.T) {
	const tol = 1e-9
	check := func(y, x Fixed) {
		t.Helper()
		want := math.Atan2(y.Float64(), x.Float64())
		if got := Atan2(y, x); math.Abs(got.Float64()-want) > tol {
			t.Fatalf("Atan2(%v, %v) = %v, want %v", y, x, got.Float64(), want)
		}
	}
	for y := FromInt(-3); y <= FromInt(3); y += One / 64 {
		for x := FromInt(-3); x <= FromInt(3); x += One / 16 {
			check(y, x)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		check(exact(randFixed(r)), exact(randFixed(r)))
	}
	for _, v := range []Fixed{exact(Max), Min, Epsilon, -Epsilon, 0} {
		for _, w := range []Fixed{exact(Max), Min, Epsilon, -Epsilon, One} {
			check(v, w)
			check(w, v)
		}
	}
	// The angle of a rotated vector comes back.
	for a := -Pi + 1; a < Pi; a += One / 64 {
		s, c := a.SinCos()
		if got := Atan2(s, c); math.Abs((got - a).Float64()) > 2e-9 {
			t.Fatalf("Atan2(Sin(%v), Cos(%v)) = %v", a, a, got)
		}
	}
}

// TestGolden pins results so that any change to the algorithms, which would
// break replays and cross-version play, is noticed.
func TestGolden(t *testing.T) {
	tests := []struct {
		name      string
		got, want Fixed
	}{
		{"Sin(One)", One.Sin(), 3614090360},
		{"Cos(One)", One.Cos(), 2320580734},
		{"Sin(1000)", FromInt(1000).Sin(), 3551420584},
		{"Cos(-0.1)", FromFraction(-1, 10).Cos(), 4273510349},
		{"Sqrt(2)", FromInt(2).Sqrt(), 6074001000},
		{"Sqrt(0.1)", FromFraction(1, 10).Sqrt(), 1358187914},
		{"Atan2(1, 2)", Atan2(One, FromInt(2)), 1991351318},
		{"Atan2(-3, -0.5)", Atan2(FromInt(-3), -Half), -7455827021},
		{"1/3 * 3", FromFraction(1, 3).Mul(FromInt(3)), 4294967295},
		{"Length(3, 4)", Vec2{FromInt(3), FromInt(4)}.Length(), FromInt(5)},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		a    Fixed
		want string
	}{
		{0, "0"},
		{One, "1"},
		{-One, "-1"},
		{f(1.5), "1.5"},
		{f(-1.5), "-1.5"},
		{f(-0.25), "-0.25"},
		{FromFraction(1, 10), "0.1"},
		{FromFraction(-1, 3), "-0.3333333333"},
		{FromFraction(2, 3), "0.6666666667"},
		{FromFraction(1, 100), "0.01"},
		{Epsilon, "0.0000000002"},
		{-Epsilon, "-0.0000000002"},
		{2 * Epsilon, "0.0000000005"},
		{One - Epsilon, "0.9999999998"},
		{Pi, "3.1415926537"},
		{Max, "2147483647.9999999998"},
		{Min, "-2147483648"},
		{Min + 1, "-2147483647.9999999998"},
	}
	for _, tt := range tests {
		if got := tt.a.String(); got != tt.want {
			t.Errorf("Fixed(%d).String() = %q, want %q", tt.a, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		s    string
		want Fixed
		err  error
	}{
		{"0", 0, nil},
		{"-0", 0, nil},
		{"1", One, nil},
		{"+1.5", f(1.5), nil},
		{"-1.5", f(-1.5), nil},
		{".5", Half, nil},
		{"-.5", -Half, nil},
		{"2.", FromInt(2), nil},
		{"007.250", f(7.25), nil},
		{"0.1", 429496730, nil},
		{"0.00000000011641532182693481445312", 0, nil},  // just below half an ulp
		{"0.00000000011641532182693481445313", 1, nil},  // just above
		{"0.000000000116415321826934814453125", 1, nil}, // exactly half an ulp: away from zero
		{"-0.000000000116415321826934814453125", -1, nil},
		{"0.0000000001164153218269348144531249999999999999999999999", 0, nil},
		{"0.9999999999", 4294967296 - 0, nil},
		{"2147483647.9999999998", Max, nil},
		{"2147483647.99999999988358467817306518554687", Max, nil},
		{"-2147483648", Min, nil},
		{"-2147483648.0000000001", Min, nil},
		{"2147483648", 0, ErrRange},
		{"2147483647.9999999999", 0, ErrRange},
		{"-2147483648.0000000002", 0, ErrRange},
		{"99999999999999999999999999", 0, ErrRange},
		{"", 0, ErrSyntax},
		{"-", 0, ErrSyntax},
		{".", 0, ErrSyntax},
		{"+.", 0, ErrSyntax},
		{"1.2.3", 0, ErrSyntax},
		{"1e3", 0, ErrSyntax},
		{" 1", 0, ErrSyntax},
		{"0x10", 0, ErrSyntax},
		{"--1", 0, ErrSyntax},
		{"1_000", 0, ErrSyntax},
		{"½", 0, ErrSyntax},
	}
	for _, tt := range tests {
		got, err := Parse(tt.s)
		if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("Parse(%q) error = %v, want %v", tt.s, err, tt.err)
			continue
		}
		if got != tt.want {
			t.Errorf("Parse(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

// TestParseExact compares Parse with exact rational rounding on random
// decimal strings, and checks that String round-trips through Parse.
func TestParseExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	one := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 32))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	for range 20000 {
		s := digits(r.IntN(11)) + "." + digits(r.IntN(45))
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		if s == "." || s == "-." {
			continue
		}
		got, err := Parse(s)
		x, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot parse %q", s)
		}
		want := roundRat(x.Mul(x, one))
		if err != nil {
			if !errors.Is(err, ErrRange) || (want != Max && want != Min) {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			continue
		}
		if got != want {
			t.Fatalf("Parse(%q) = %d, want %d", s, got, want)
		}
	}
	for range 20000 {
		a := randFixed(r)
		s := a.String()
		if back, err := Parse(s); err != nil || back != a {
			t.Fatalf("Parse(%d.String() = %q) = %d, %v", a, s, back, err)
		}
	}
}

// TestInternalConstants checks the hard-coded constants against π computed
// with math/big from its decimal expansion.
func TestInternalConstants(t *testing.T) {
	const prec = 256
	pi, _, err := big.ParseFloat("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798", 10, prec, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	scaled := func(x *big.Float, shift int) *big.Int {
		y := new(big.Float).SetPrec(prec).SetMantExp(x, shift)
		y.Add(y, big.NewFloat(0.5))
		i, _ := y.Int(nil)
		return i
	}
	frac := func(num *big.Float, den int64) *big.Float {
		return new(big.Float).SetPrec(prec).Quo(num, new(big.Float).SetInt64(den))
	}
	twoPi := new(big.Float).SetPrec(prec).Mul(pi, big.NewFloat(2))
	sqrt2 := new(big.Float).SetPrec(prec).Sqrt(big.NewFloat(2))
	tanPi8 := sqrt2.Sub(sqrt2, big.NewFloat(1))
	invTwoPi := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), twoPi)
	tests := []struct {
		name string
		got  uint64
		want *big.Int
	}{
		{"Pi", uint64(Pi), scaled(pi, 32)},
		{"TwoPi", uint64(TwoPi), scaled(twoPi, 32)},
		{"HalfPi", uint64(HalfPi), scaled(frac(pi, 2), 32)},
		{"halfPiQ62", halfPiQ62, scaled(frac(pi, 2), 62)},
		{"quarterPiQ62", quarterPiQ62, scaled(frac(pi, 4), 62)},
		{"halfPiQ63", halfPiQ63, scaled(frac(pi, 2), 63)},
		{"invTwoPiQ64", invTwoPiQ64, scaled(invTwoPi, 64)},
		{"tanPi8Q62", tanPi8Q62, scaled(tanPi8, 62)},
	}
	for _, tt := range tests {
		if new(big.Int).SetUint64(tt.got).Cmp(tt.want) != 0 {
			t.Errorf("%s = %d, want %v", tt.name, tt.got, tt.want)
		}
	}
}

var sink Fixed

func BenchmarkMul(b *testing.B) {
	b.ReportAllocs()
	x, y := FromFraction(12345, 678), FromFraction(-9876, 5432)
	for b.Loop() {
		x = x.Mul(y).Add(One)
	}
	sink = x
}

func BenchmarkDiv(b *testing.B) {
	b.ReportAllocs()
	x, y := FromFraction(12345, 678), FromFraction(-9876, 5432)
	for b.Loop() {
		x = y.Div(x.Add(One))
	}
	sink = x
}

func BenchmarkSqrt(b *testing.B) {
	b.ReportAllocs()
	x := FromFraction(12345, 678)
	for b.Loop() {
		x = x.Sqrt().Add(FromInt(100))
	}
	sink = x
}

func BenchmarkSin(b *testing.B) {
	b.ReportAllocs()
	x := FromFraction(12345, 678)
	for b.Loop() {
		x = x.Sin().Add(FromInt(3))
	}
	sink = x
}

func BenchmarkAtan2(b *testing.B) {
	b.ReportAllocs()
	x := FromFraction(12345, 678)
	for b.Loop() {
		x = Atan2(x, FromInt(3)).Add(One)
	}
	sink = x
}
