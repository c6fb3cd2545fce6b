package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// angle returns the angle between a and b in radians.
func angle(a, b [3]float64) float64 {
	dot := a[0]*b[0] + a[1]*b[1] + a[2]*b[2]
	la := math.Sqrt(a[0]*a[0] + a[1]*a[1] + a[2]*a[2])
	lb := math.Sqrt(b[0]*b[0] + b[1]*b[1] + b[2]*b[2])
	cr := [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
	return math.Atan2(math.Sqrt(cr[0]*cr[0]+cr[1]*cr[1]+cr[2]*cr[2])/(la*lb), dot/(la*lb))
}

func f64x3(v [3]float32) [3]float64 { return [3]float64{float64(v[0]), float64(v[1]), float64(v[2])} }

// randomDir returns a uniformly distributed direction.
func randomDir(r *rand.Rand) [3]float32 {
	for {
		v := [3]float64{r.Float64()*2 - 1, r.Float64()*2 - 1, r.Float64()*2 - 1}
		if n := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2]); n > 0.1 && n <= 1 {
			return [3]float32{float32(v[0] / n), float32(v[1] / n), float32(v[2] / n)}
		}
	}
}

// TestUnitVecError checks the documented bound, 5/2^AxisBits radians,
// and that Quantize's value is a unit vector that re-encodes to its code.
func TestUnitVecError(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, b := range []int{4, 8, 12, 16} {
		u, err := NewUnitVec(b)
		if err != nil {
			t.Fatal(err)
		}
		bound := 5 / math.Ldexp(1, b)
		worst := 0.0
		for range 50000 {
			v := randomDir(r)
			q := u.Quantize(v)
			a := angle(f64x3(v), f64x3(q))
			worst = math.Max(worst, a)
			if a > bound {
				t.Fatalf("%d bits: %v -> %v, %v rad over %v", b, v, q, a, bound)
			}
			c := u.Code(v)
			if x, err := u.Value(c); err != nil || x != q {
				t.Fatalf("%d bits: %v: Value(Code) = %v, %v; Quantize %v", b, v, x, err, q)
			}
			if u.Code(q) != c {
				t.Fatalf("%d bits: %v: Quantize's value re-encodes to another code", b, v)
			}
			if l := math.Sqrt(float64(q[0])*float64(q[0]) + float64(q[1])*float64(q[1]) + float64(q[2])*float64(q[2])); math.Abs(l-1) > 1e-6 {
				t.Fatalf("length %v", l)
			}
		}
		t.Logf("%d bits per axis: worst %.3g rad (%.3g * 2^-bits)", b, worst, worst*math.Ldexp(1, b))
	}
}

// TestUnitVecCodes: for small widths, every code is either refused or
// re-encodes to itself, and Code never gives a refused one, seams and
// axes included.
func TestUnitVecCodes(t *testing.T) {
	for b := 2; b <= 7; b++ {
		u, _ := NewUnitVec(b)
		accepted := 0
		for c := range uint64(1) << u.Bits() {
			v, err := u.Value(c)
			if err != nil {
				continue
			}
			accepted++
			if u.Code(v) != c {
				t.Fatalf("%d bits: code %d -> %v -> %d", b, c, v, u.Code(v))
			}
		}
		for _, v := range [][3]float32{
			{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0},
			{0, 0, 0}, {float32(math.NaN()), 0, 0}, {float32(math.Inf(1)), 1, 0},
			{1, 1, -1e-30}, {-1e-30, 1, -1}, {1e-30, -1, -1}, {1, -1e-30, -1}, {-1, 1e-30, -1},
		} {
			if _, err := u.Value(u.Code(v)); err != nil {
				t.Fatalf("%d bits: Code(%v) = %d is refused", b, v, u.Code(v))
			}
		}
		t.Logf("%d bits per axis: %d of %d codes canonical", b, accepted, uint64(1)<<u.Bits())
	}
	u, _ := NewUnitVec(8)
	if q := u.Quantize([3]float32{}); q != [3]float32{0, 0, 1} {
		t.Fatalf("zero vector: %v", q)
	}
	if _, err := u.Value(1 << 16); err != ErrCode {
		t.Fatal("a code over 16 bits")
	}
	for _, b := range []int{1, 17} {
		if _, err := NewUnitVec(b); err == nil {
			t.Fatalf("NewUnitVec(%d)", b)
		}
	}
}

// FuzzUnitVec: accepted codes re-encode to themselves; Code's codes are
// accepted.
func FuzzUnitVec(f *testing.F) {
	f.Add(uint8(8), uint64(0x8080), float32(1), float32(-1), float32(-1e-30))
	f.Add(uint8(16), uint64(0xffff0000), float32(0), float32(0), float32(-1))
	f.Fuzz(func(t *testing.T, b uint8, c uint64, x, y, z float32) {
		u, err := NewUnitVec(int(b))
		if err != nil {
			return
		}
		if v, err := u.Value(c); err == nil && u.Code(v) != c {
			t.Fatalf("code %x -> %v -> %x", c, v, u.Code(v))
		}
		v := [3]float32{x, y, z}
		if _, err := u.Value(u.Code(v)); err != nil {
			t.Fatalf("Code(%v) = %x is refused", v, u.Code(v))
		}
	})
}
