package tick

import (
	"math"
	"testing"
)

func TestTickCompare(t *testing.T) {
	tests := []struct {
		t, u Tick
		sub  int32
	}{
		{0, 0, 0},
		{1, 0, 1},
		{0, 1, -1},
		{0, math.MaxUint32, 1},
		{math.MaxUint32, 0, -1},
		{5, math.MaxUint32 - 4, 10},
		{math.MaxUint32 - 4, 5, -10},
		{1 << 31, 0, math.MinInt32},
		{1<<31 - 1, 0, math.MaxInt32},
		{0, 1<<31 - 1, -math.MaxInt32},
		{100, 40, 60},
	}
	for _, tt := range tests {
		if got := tt.t.Sub(tt.u); got != tt.sub {
			t.Errorf("%v.Sub(%v) = %d, want %d", tt.t, tt.u, got, tt.sub)
		}
		if got, want := tt.t.Before(tt.u), tt.sub < 0; got != want {
			t.Errorf("%v.Before(%v) = %v, want %v", tt.t, tt.u, got, want)
		}
		if got, want := tt.t.After(tt.u), tt.sub > 0; got != want {
			t.Errorf("%v.After(%v) = %v, want %v", tt.t, tt.u, got, want)
		}
		if got, want := tt.t.AtOrBefore(tt.u), tt.sub <= 0; got != want {
			t.Errorf("%v.AtOrBefore(%v) = %v, want %v", tt.t, tt.u, got, want)
		}
		if got, want := tt.t.AtOrAfter(tt.u), tt.sub >= 0; got != want {
			t.Errorf("%v.AtOrAfter(%v) = %v, want %v", tt.t, tt.u, got, want)
		}
		if tt.sub != math.MinInt32 {
			if got := tt.u.Add(tt.sub); got != tt.t {
				t.Errorf("%v.Add(%d) = %v, want %v", tt.u, tt.sub, got, tt.t)
			}
		}
	}
}

func TestTickAddNext(t *testing.T) {
	tests := []struct {
		t    Tick
		n    int32
		want Tick
	}{
		{0, 1, 1},
		{math.MaxUint32, 1, 0},
		{math.MaxUint32 - 1, 3, 1},
		{0, -1, math.MaxUint32},
		{2, -5, math.MaxUint32 - 2},
		{7, 0, 7},
		{0, math.MinInt32, 1 << 31},
	}
	for _, tt := range tests {
		if got := tt.t.Add(tt.n); got != tt.want {
			t.Errorf("%v.Add(%d) = %v, want %v", tt.t, tt.n, got, tt.want)
		}
	}
	if got := Tick(math.MaxUint32).Next(); got != 0 {
		t.Errorf("MaxUint32.Next() = %v, want 0", got)
	}
	if got := Tick(41).Next(); got != 42 {
		t.Errorf("41.Next() = %v, want 42", got)
	}
}

func TestMinMax(t *testing.T) {
	tests := []struct{ a, b, min, max Tick }{
		{1, 2, 1, 2},
		{2, 1, 1, 2},
		{3, 3, 3, 3},
		{math.MaxUint32, 0, math.MaxUint32, 0},
		{0, math.MaxUint32, math.MaxUint32, 0},
		{math.MaxUint32 - 10, 10, math.MaxUint32 - 10, 10},
	}
	for _, tt := range tests {
		if got := Min(tt.a, tt.b); got != tt.min {
			t.Errorf("Min(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.min)
		}
		if got := Max(tt.a, tt.b); got != tt.max {
			t.Errorf("Max(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.max)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		t    Tick
		want string
	}{
		{0, "0"},
		{42, "42"},
		{math.MaxUint32, "4294967295"},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("Tick(%d).String() = %q, want %q", uint32(tt.t), got, tt.want)
		}
	}
}

func TestExpand16(t *testing.T) {
	tests := []struct {
		low  uint16
		near Tick
		want Tick
	}{
		{0x1234, 0x00051234, 0x00051234},
		{0x1235, 0x00051234, 0x00051235},
		{0x1233, 0x00051234, 0x00051233},
		{0xFFFF, 0x00010000, 0x0000FFFF},
		{0x0000, 0x0000FFFF, 0x00010000},
		{0x0002, 0xFFFFFFFE, 0x00000002}, // forward across the 2^32 wrap
		{0xFFFE, 0x00000002, 0xFFFFFFFE}, // backward across the 2^32 wrap
		{0x8000, 0x00000000, 0xFFFF8000}, // exactly 2^15 away: the earlier one
		{0x7FFF, 0x00000000, 0x00007FFF}, // 2^15-1 ahead
		{0x9000, 0x00011000, 0x00009000}, // 2^15 behind
		{0x0000, 0xFFFF8000, 0xFFFF0000}, // 2^15 behind, not 2^15 ahead
		{0x1000, 0x7FFFF000, 0x80001000}, // across 2^31
		{0xABCD, 0x12347000, 0x1234ABCD},
		{0xABCD, 0x12342000, 0x1233ABCD},
	}
	for _, tt := range tests {
		if got := Expand16(tt.low, tt.near); got != tt.want {
			t.Errorf("Expand16(%#x, %#x) = %#x, want %#x", tt.low, uint32(tt.near), uint32(got), uint32(tt.want))
		}
	}
	for _, near := range []Tick{0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 1 << 31, math.MaxUint32 - 0x7FFF, math.MaxUint32} {
		for d := int32(-1 << 15); d < 1<<15; d++ {
			want := near.Add(d)
			if got := Expand16(uint16(want), near); got != want {
				t.Fatalf("Expand16(%#x, %#x) = %#x, want %#x", uint16(want), uint32(near), uint32(got), uint32(want))
			}
		}
	}
}

func TestExpand8(t *testing.T) {
	tests := []struct {
		low  uint8
		near Tick
		want Tick
	}{
		{0x34, 0x1234, 0x1234},
		{0x02, 0xFFFFFFFE, 0x00000002},
		{0xFE, 0x00000002, 0xFFFFFFFE},
		{0x80, 0x00000000, 0xFFFFFF80},
		{0x7F, 0x00000000, 0x0000007F},
	}
	for _, tt := range tests {
		if got := Expand8(tt.low, tt.near); got != tt.want {
			t.Errorf("Expand8(%#x, %#x) = %#x, want %#x", tt.low, uint32(tt.near), uint32(got), uint32(tt.want))
		}
	}
	for _, near := range []Tick{0, 0x80, 0xFF, 1 << 31, math.MaxUint32} {
		for d := int32(-128); d < 128; d++ {
			want := near.Add(d)
			if got := Expand8(uint8(want), near); got != want {
				t.Fatalf("Expand8(%#x, %#x) = %#x, want %#x", uint8(want), uint32(near), uint32(got), uint32(want))
			}
		}
	}
}
