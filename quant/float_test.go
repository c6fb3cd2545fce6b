package quant

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestFloatParams(t *testing.T) {
	bad := [][3]float64{
		{0, 1, 0}, {0, 1, -1}, {1, 0, 0.1}, {1, 1, 0.1}, {math.NaN(), 1, 0.1},
		{0, math.Inf(1), 0.1}, {0, 1, 3}, {0, 1e20, 1e-20}, {1e15, 1e15 + 1, 1e-3},
	}
	for _, b := range bad {
		if _, err := NewFloat(b[0], b[1], b[2]); !errors.Is(err, ErrParam) {
			t.Errorf("NewFloat%v: %v, want ErrParam", b, err)
		}
	}
	// float32 needs a coarser step than float64 at the same magnitude.
	if _, err := NewFloat[float64](1000, 1001, 1e-9); err != nil {
		t.Error(err)
	}
	if _, err := NewFloat[float32](1000, 1001, 1e-6); !errors.Is(err, ErrParam) {
		t.Errorf("float32 step below 4 ulps: %v", err)
	}
	f, err := NewFloat[float32](-32, 31, 1.0/32)
	if err != nil {
		t.Fatal(err)
	}
	if f.Bits() != 11 || f.Steps() != 63*32 || f.Min() != -32 || f.Max() != 31 || f.Step() != 1.0/32 {
		t.Fatalf("Gaffer's velocity: %d bits, %d steps, [%v, %v] by %v", f.Bits(), f.Steps(), f.Min(), f.Max(), f.Step())
	}
	// A step that does not divide the range: Max is on the grid.
	g, _ := NewFloat(0.0, 1.0, 0.3)
	if g.Steps() != 3 || math.Abs(g.Max()-0.9) > 1e-15 {
		t.Fatalf("steps %d max %v", g.Steps(), g.Max())
	}
}

// floatConfigs are ranges of the tests: Gaffer's velocity and position
// (exact grids), a decimal step (inexact grid) and a far-off range.
func floatConfigs(t testing.TB) []Float[float32] {
	var fs []Float[float32]
	for _, c := range [][3]float32{{-32, 31, 1.0 / 32}, {-256, 256, 1.0 / 512}, {-10, 10, 0.01}, {9000, 9100, 0.05}, {-1, 1, 0.1}} {
		f, err := NewFloat(c[0], c[1], c[2])
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	return fs
}

// TestFloatErrorBound checks the documented bound: step/2 plus under 2
// ulps at the range's largest magnitude, exactly step/2 on exact grids.
func TestFloatErrorBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i, f := range floatConfigs(t) {
		lo, hi, step := float64(f.Min()), float64(f.Max()), float64(f.Step())
		slack := 2 * ulp[float32](math.Max(math.Abs(lo), math.Abs(hi)))
		if i < 2 {
			slack = 0 // power-of-two step, min a multiple of it
		}
		worst := 0.0
		for range 100000 {
			v := float32(lo + r.Float64()*(hi-lo))
			q := f.Quantize(v)
			e := math.Abs(float64(q) - float64(v))
			worst = math.Max(worst, e)
			if e > step/2+slack {
				t.Fatalf("[%v, %v] by %v: %v -> %v, error %v", lo, hi, step, v, q, e)
			}
			if c := f.Code(v); f.Code(q) != c {
				t.Fatalf("%v: Quantize's value %v re-encodes to %d, not %d", v, q, f.Code(q), c)
			}
		}
		if worst < step/2*0.99 {
			t.Errorf("[%v, %v] by %v: worst error %v, the bound is loose", lo, hi, step, worst)
		}
	}
}

func TestFloatClamp(t *testing.T) {
	f, _ := NewFloat(-1.0, 1.0, 0.25)
	for _, c := range []struct{ in, want float64 }{
		{-5, -1}, {5, 1}, {math.Inf(1), 1}, {math.Inf(-1), -1}, {math.NaN(), -1},
		{0.125, 0.25}, {-0.125, -0}, {0.1, 0}, {math.MaxFloat64, 1}, {-math.MaxFloat64, -1},
	} {
		if got := f.Quantize(c.in); got != c.want {
			t.Errorf("Quantize(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if _, err := f.Value(f.Steps() + 1); err != ErrCode {
		t.Errorf("code over Steps: %v", err)
	}
}

// TestFloatCodesCanonical: every code's value encodes back to the code.
func TestFloatCodesCanonical(t *testing.T) {
	for _, f := range floatConfigs(t) {
		for c := range f.Steps() + 1 {
			v, err := f.Value(c)
			if err != nil || f.Code(v) != c {
				t.Fatalf("[%v, %v] by %v: code %d -> %v -> %d (%v)", f.Min(), f.Max(), f.Step(), c, v, f.Code(v), err)
			}
		}
	}
}

// FuzzFloat: for any quantizer NewFloat accepts, an accepted code's value
// re-encodes to the code, and Quantize's value is a fixed point.
func FuzzFloat(f *testing.F) {
	f.Add(-32.0, 31.0, 1.0/32, uint64(7), 3.3, false)
	f.Add(9000.0, 9100.0, 0.05, uint64(2000), 9050.02, true)
	f.Add(-1e6, 1e6, 0.125, uint64(1<<20), -3.0, true)
	f.Fuzz(func(t *testing.T, lo, hi, step float64, c uint64, v float64, single bool) {
		if single {
			checkFloat(t, float32(lo), float32(hi), float32(step), c, float32(v))
		} else {
			checkFloat(t, lo, hi, step, c, v)
		}
	})
}

func checkFloat[F ~float32 | ~float64](t *testing.T, lo, hi, step F, c uint64, v F) {
	q, err := NewFloat(lo, hi, step)
	if err != nil {
		return
	}
	if x, err := q.Value(c); err == nil {
		if q.Code(x) != c {
			t.Fatalf("[%v, %v] by %v: code %d -> %v -> %d", lo, hi, step, c, x, q.Code(x))
		}
	} else if c <= q.Steps() {
		t.Fatalf("code %d of %d refused", c, q.Steps())
	}
	x := q.Quantize(v)
	if q.Quantize(x) != x || x < q.Min() || x > q.Max() {
		t.Fatalf("[%v, %v] by %v: Quantize(%v) = %v, then %v", lo, hi, step, v, x, q.Quantize(x))
	}
}
