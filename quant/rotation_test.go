package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomRot returns a uniformly distributed unit quaternion.
func randomRot(r *rand.Rand) [4]float32 {
	for {
		var q [4]float64
		n := 0.0
		for i := range q {
			q[i] = r.NormFloat64()
			n += q[i] * q[i]
		}
		if n > 1e-6 {
			n = math.Sqrt(n)
			return [4]float32{float32(q[0] / n), float32(q[1] / n), float32(q[2] / n), float32(q[3] / n)}
		}
	}
}

// rotAngle returns the angle of the rotation between unit quaternions a
// and b: twice the angle between a and the nearer of b and -b, that angle
// being 2 atan2(|a-b|, |a+b|) (accurate for small angles, unlike acos).
func rotAngle(a, b [4]float32) float64 {
	d, s := 0.0, 0.0
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	sign := 1.0
	if d < 0 {
		sign = -1
	}
	d = 0
	for i := range a {
		x, y := float64(a[i]), sign*float64(b[i])
		d += (x - y) * (x - y)
		s += (x + y) * (x + y)
	}
	return 4 * math.Atan2(math.Sqrt(d), math.Sqrt(s))
}

// TestRotationError checks the documented bounds: sent components within
// h, the dropped one within 3h, the rotation within 7h radians.
func TestRotationError(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, b := range []int{9, 12, 15} {
		q, err := NewRotation(b)
		if err != nil {
			t.Fatal(err)
		}
		h := 1 / (math.Sqrt2 * (math.Ldexp(1, b) - 2))
		worstAngle, worstComp, shrunk := 0.0, 0.0, 0
		for range 50000 {
			v := randomRot(r)
			x := q.Quantize(v)
			if q.Quantize([4]float32{-v[0], -v[1], -v[2], -v[3]}) != x {
				t.Fatalf("q and -q quantize differently: %v", v)
			}
			// Sign-normalise v as the form does, then compare components.
			big := 0
			for i := 1; i < 4; i++ {
				if math.Abs(float64(v[i])) > math.Abs(float64(v[big])) {
					big = i
				}
			}
			s := 1.0
			if v[big] < 0 {
				s = -1
			}
			for i := range v {
				e := math.Abs(float64(x[i]) - s*float64(v[i]))
				lim := 3 * h // sent components: h, 3h near a tie
				if i != big {
					worstComp = math.Max(worstComp, e/h)
					if e > h*1.0001 {
						shrunk++
					}
				}
				if e > lim {
					t.Fatalf("%d bits: %v -> %v: component %d off by %v (h %v)", b, v, x, i, e, h)
				}
			}
			a := rotAngle(v, x)
			worstAngle = math.Max(worstAngle, a/h)
			if a > 7*h {
				t.Fatalf("%d bits: %v -> %v: %v rad over 7h = %v", b, v, x, a, 7*h)
			}
			c := q.Code(v)
			if y, err := q.Value(c); err != nil || y != x {
				t.Fatalf("%d bits: Value(Code(%v)) = %v, %v; Quantize %v", b, v, y, err, x)
			}
		}
		t.Logf("%d bits: h = %.3g; worst sent component %.3g h (%d of 50000 over h), rotation %.3g h", b, h, worstComp, shrunk, worstAngle)
	}
}

// TestRotationCodes: ties and degenerate inputs get accepted codes; for a
// small width every code is refused or re-encodes to itself.
func TestRotationCodes(t *testing.T) {
	q, _ := NewRotation(4)
	accepted := 0
	for c := range uint64(1) << q.Bits() {
		v, err := q.Value(c)
		if err != nil {
			continue
		}
		accepted++
		if q.Code(v) != c {
			t.Fatalf("code %x -> %v -> %x", c, v, q.Code(v))
		}
	}
	t.Logf("4 bits: %d of %d codes canonical", accepted, uint64(1)<<q.Bits())
	h := float32(math.Sqrt(0.5))
	for _, b := range []int{2, 4, 9, 16} {
		q, _ := NewRotation(b)
		for _, v := range [][4]float32{
			{0, 0, 0, 1}, {0, 0, 0, -1}, {1, 0, 0, 0}, {0.5, 0.5, 0.5, 0.5}, {-0.5, 0.5, -0.5, 0.5},
			{h, h, 0, 0}, {0, -h, h, 0}, {0, 0, 0, 0}, {float32(math.NaN()), 0, 0, 1}, {float32(math.Inf(-1)), 0, 0, 0},
			{0.6, 0.6, 0.4, 0.3464}, {0.6, -0.6000001, 0.4, 0.3464},
		} {
			if _, err := q.Value(q.Code(v)); err != nil {
				t.Fatalf("%d bits: Code(%v) = %x is refused", b, v, q.Code(v))
			}
		}
	}
	// Every width: random rotations and near-ties get accepted codes
	// (Code skips its re-encoding check when one component leads by 8h).
	r := rand.New(rand.NewPCG(14, 15))
	for b := 2; b <= 16; b++ {
		q := Must(NewRotation(b))
		for i := range 20000 {
			v := randomRot(r)
			if i%2 == 1 { // make the two largest nearly tie
				big, second := 0, 1
				for j := range v {
					if math.Abs(float64(v[j])) > math.Abs(float64(v[big])) {
						big = j
					}
				}
				if big == second {
					second = 0
				}
				for j := range v {
					if j != big && math.Abs(float64(v[j])) > math.Abs(float64(v[second])) {
						second = j
					}
				}
				v[second] = float32(math.Copysign(math.Abs(float64(v[big]))*(1-r.Float64()*1e-2), float64(v[second])))
			}
			if _, err := q.Value(q.Code(v)); err != nil {
				t.Fatalf("%d bits: Code(%v) = %x is refused", b, v, q.Code(v))
			}
		}
	}
	if x := q.Quantize([4]float32{}); x != [4]float32{0, 0, 0, 1} {
		t.Fatalf("zero quaternion: %v", x)
	}
	if _, err := q.Value(1 << q.Bits()); err != ErrCode {
		t.Fatal("a code over Bits")
	}
}

// FuzzRotation: accepted codes re-encode to themselves; Code's codes are
// accepted.
func FuzzRotation(f *testing.F) {
	f.Add(uint8(9), uint64(0x1234567), float32(0.6), float32(0.6), float32(0.4), float32(0.3464))
	f.Add(uint8(16), uint64(0x3ffffffffffff), float32(0), float32(0), float32(0), float32(-1))
	f.Fuzz(func(t *testing.T, b uint8, c uint64, x, y, z, w float32) {
		q, err := NewRotation(int(b))
		if err != nil {
			return
		}
		if v, err := q.Value(c); err == nil && q.Code(v) != c {
			t.Fatalf("code %x -> %v -> %x", c, v, q.Code(v))
		}
		v := [4]float32{x, y, z, w}
		if _, err := q.Value(q.Code(v)); err != nil {
			t.Fatalf("Code(%v) = %x is refused", v, q.Code(v))
		}
	})
}
