package fixed

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestVec2Arithmetic(t *testing.T) {
	v, w := Vec2{f(1.5), f(-2)}, Vec2{f(0.5), f(4)}
	tests := []struct {
		name      string
		got, want Vec2
	}{
		{"Add", v.Add(w), Vec2{f(2), f(2)}},
		{"Sub", v.Sub(w), Vec2{f(1), f(-6)}},
		{"Neg", v.Neg(), Vec2{f(-1.5), f(2)}},
		{"Scale", v.Scale(f(-2)), Vec2{f(-3), f(4)}},
		{"Add saturates", Vec2{Max, Min}.Add(Vec2{One, -One}), Vec2{Max, Min}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if got, want := v.Dot(w), f(-7.25); got != want {
		t.Errorf("Dot = %v, want %v", got, want)
	}
	if got, want := v.LengthSquared(), f(6.25); got != want {
		t.Errorf("LengthSquared = %v, want %v", got, want)
	}
	if got, want := (Vec2{FromInt(1 << 20), 0}).LengthSquared(), Max; got != want {
		t.Errorf("LengthSquared of a long vector = %v, want %v", got, want)
	}
}

func TestVec2Length(t *testing.T) {
	tests := []struct {
		v    Vec2
		want Fixed
	}{
		{Vec2{}, 0},
		{Vec2{FromInt(3), FromInt(-4)}, FromInt(5)},
		{Vec2{FromInt(-5), FromInt(12)}, FromInt(13)},
		{Vec2{Epsilon, 0}, Epsilon},
		{Vec2{Epsilon, Epsilon}, Epsilon},                               // sqrt(2) ulp rounds to 1
		{Vec2{FromInt(1 << 30), FromInt(1 << 30)}, 6521908912666391106}, // 2^62 * sqrt(2), rounded down
		{Vec2{Min, 0}, Min.Abs()},
		{Vec2{Max, Max}, Max},
		{Vec2{Min, Min}, Max},
	}
	for _, tt := range tests {
		if got := tt.v.Length(); got != tt.want {
			t.Errorf("%v.Length() = %d, want %d", tt.v, got, tt.want)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 10000 {
		v := Vec2{Fixed(r.Int64N(1<<52) - 1<<51), Fixed(r.Int64N(1<<52) - 1<<51)}
		want := math.Hypot(v.X.Float64(), v.Y.Float64())
		if got := v.Length(); math.Abs(got.Float64()-want) > Epsilon.Float64() {
			t.Fatalf("%v.Length() = %v, want %v", v, got, want)
		}
	}
}

func TestVec2Normalize(t *testing.T) {
	if got := (Vec2{}).Normalize(); got != (Vec2{}) {
		t.Errorf("zero.Normalize() = %v, want zero", got)
	}
	tests := []struct{ v, want Vec2 }{
		{Vec2{FromInt(3), FromInt(4)}, Vec2{FromFraction(3, 5), FromFraction(4, 5)}},
		{Vec2{FromInt(-7), 0}, Vec2{-One, 0}},
		{Vec2{0, Epsilon}, Vec2{0, One}},
		{Vec2{Min, 0}, Vec2{-One, 0}},
	}
	for _, tt := range tests {
		if got := tt.v.Normalize(); got != tt.want {
			t.Errorf("%v.Normalize() = %v, want %v", tt.v, got, tt.want)
		}
	}
	r := rand.New(rand.NewPCG(13, 14))
	for range 10000 {
		v := Vec2{Fixed(r.Int64N(1<<50) - 1<<49), Fixed(r.Int64N(1<<50) - 1<<49)}
		if v == (Vec2{}) {
			continue
		}
		if l := v.Normalize().Length(); (l - One).Abs() > 4 {
			t.Fatalf("%v.Normalize() has length %v", v, l)
		}
	}
}

func TestVec2Rotate(t *testing.T) {
	tests := []struct {
		v     Vec2
		angle Fixed
		want  Vec2
	}{
		{Vec2{One, 0}, HalfPi, Vec2{0, One}},
		{Vec2{One, 0}, Pi, Vec2{-One, 0}},
		{Vec2{One, 0}, -HalfPi, Vec2{0, -One}},
		{Vec2{FromInt(2), FromInt(3)}, 0, Vec2{FromInt(2), FromInt(3)}},
		{Vec2{FromInt(2), FromInt(3)}, HalfPi, Vec2{FromInt(-3), FromInt(2)}},
	}
	for _, tt := range tests {
		if got := tt.v.Rotate(tt.angle); got != tt.want {
			t.Errorf("%v.Rotate(%v) = %v, want %v", tt.v, tt.angle, got, tt.want)
		}
	}
	v := Vec2{FromInt(3), FromInt(4)}
	for a := -Pi; a <= Pi; a += One / 32 {
		w := v.Rotate(a)
		if d := (w.Length() - FromInt(5)).Abs(); d > 8 {
			t.Fatalf("Rotate(%v) changed the length by %d ulp", a, d)
		}
		if d := (Atan2(w.Y, w.X) - Atan2(v.Y, v.X) - a).Abs(); d > 16 && (d-TwoPi).Abs() > 16 {
			t.Fatalf("Rotate(%v) rotated by %v", a, Atan2(w.Y, w.X)-Atan2(v.Y, v.X))
		}
	}
}

func TestVec2String(t *testing.T) {
	if got, want := (Vec2{f(1.5), f(-2)}).String(), "(1.5, -2)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func BenchmarkVec2Normalize(b *testing.B) {
	b.ReportAllocs()
	v := Vec2{FromInt(3), FromInt(4)}
	for b.Loop() {
		v = v.Normalize().Scale(FromInt(7)).Add(Vec2{One, Half})
	}
	sink = v.X
}
