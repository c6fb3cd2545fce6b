package quant

import (
	"errors"
	"math"
	"testing"
)

func TestInt(t *testing.T) {
	if _, err := NewInt(1, 0); !errors.Is(err, ErrParam) {
		t.Fatal(err)
	}
	q, _ := NewInt(-100, 100)
	if q.Bits() != 8 || q.Min() != -100 || q.Max() != 100 {
		t.Fatalf("%d bits, [%d, %d]", q.Bits(), q.Min(), q.Max())
	}
	for _, c := range []struct{ in, want int64 }{{-101, -100}, {-100, -100}, {0, 0}, {100, 100}, {math.MaxInt64, 100}, {math.MinInt64, -100}} {
		if got := q.Quantize(c.in); got != c.want {
			t.Errorf("Quantize(%d) = %d", c.in, got)
		}
		if v, err := q.Value(q.Code(c.in)); v != c.want || err != nil {
			t.Errorf("Value(Code(%d)) = %d, %v", c.in, v, err)
		}
	}
	if _, err := q.Value(201); err != ErrCode {
		t.Fatal(err)
	}
	full, _ := NewInt(math.MinInt64, math.MaxInt64)
	if full.Bits() != 64 || full.Quantize(math.MinInt64) != math.MinInt64 || full.Quantize(-1) != -1 {
		t.Fatal("the full range")
	}
	one, _ := NewInt(7, 7)
	if one.Bits() != 0 || one.Quantize(3) != 7 {
		t.Fatal("a constant")
	}
}

// FuzzInt: accepted codes re-encode to themselves; Quantize is clamping.
func FuzzInt(f *testing.F) {
	f.Add(int64(-100), int64(100), uint64(5), int64(1000))
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), uint64(math.MaxUint64), int64(-1))
	f.Fuzz(func(t *testing.T, lo, hi int64, c uint64, v int64) {
		q, err := NewInt(lo, hi)
		if err != nil {
			return
		}
		if x, err := q.Value(c); err == nil && q.Code(x) != c {
			t.Fatalf("code %d -> %d -> %d", c, x, q.Code(x))
		}
		if x := q.Quantize(v); x != min(max(v, lo), hi) {
			t.Fatalf("[%d, %d]: Quantize(%d) = %d", lo, hi, v, x)
		}
	})
}
