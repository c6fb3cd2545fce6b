package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUnitVec2Error checks the documented bound, 4/2^Bits radians, and
// that every code of small widths re-encodes to itself.
func TestUnitVec2Error(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for _, b := range []int{4, 8, 12, 16, 24} {
		u := Must(NewUnitVec2(b))
		bound := 4 / math.Ldexp(1, b)
		worst := 0.0
		for range 50000 {
			a := r.Float64() * 2 * math.Pi
			v := [2]float32{float32(math.Cos(a)), float32(math.Sin(a))}
			q := u.Quantize(v)
			e := math.Abs(math.Remainder(math.Atan2(float64(q[1]), float64(q[0]))-math.Atan2(float64(v[1]), float64(v[0])), 2*math.Pi))
			worst = math.Max(worst, e)
			if e > bound+1e-7 { // float32 inputs: 1e-7 rad of their own
				t.Fatalf("%d bits: %v -> %v: %v rad over %v", b, v, q, e, bound)
			}
			if x, err := u.Value(u.Code(v)); err != nil || x != q {
				t.Fatalf("%d bits: Value(Code(%v)) = %v, %v; Quantize %v", b, v, x, err, q)
			}
		}
		t.Logf("%d bits: worst %.3g rad (%.3g * 2^-bits)", b, worst, worst*math.Ldexp(1, b))
	}
	for b := 2; b <= 16; b++ {
		u := Must(NewUnitVec2(b))
		for c := range uint64(1) << b {
			if v, err := u.Value(c); err != nil || u.Code(v) != c {
				t.Fatalf("%d bits: code %d -> %v (%v) -> %d", b, c, v, err, u.Code(v))
			}
		}
	}
	u := Must(NewUnitVec2(8))
	for _, c := range []struct{ in, want [2]float32 }{
		{[2]float32{0, 0}, [2]float32{1, 0}}, {[2]float32{float32(math.NaN()), 1}, [2]float32{1, 0}},
		{[2]float32{0, 5}, [2]float32{0, 1}}, {[2]float32{-3, 0}, [2]float32{-1, 0}}, {[2]float32{0, -1e-30}, [2]float32{0, -1}},
	} {
		if got := u.Quantize(c.in); got != c.want {
			t.Errorf("Quantize(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if _, err := u.Value(256); err != ErrCode {
		t.Fatal("a code over 8 bits")
	}
}

// FuzzUnitVec2: accepted codes re-encode to themselves; Code's codes are
// accepted.
func FuzzUnitVec2(f *testing.F) {
	f.Add(uint8(12), uint64(1000), float32(1), float32(-1e-30))
	f.Fuzz(func(t *testing.T, b uint8, c uint64, x, y float32) {
		u, err := NewUnitVec2(int(b))
		if err != nil {
			return
		}
		if v, err := u.Value(c); err == nil && u.Code(v) != c {
			t.Fatalf("code %x -> %v -> %x", c, v, u.Code(v))
		}
		v := [2]float32{x, y}
		if _, err := u.Value(u.Code(v)); err != nil {
			t.Fatalf("Code(%v) = %x is refused", v, u.Code(v))
		}
	})
}
