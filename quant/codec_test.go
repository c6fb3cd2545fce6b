package quant

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// cube is Gaffer on Games' cube with a health and a facing direction.
type cube struct {
	Pos    [3]float32
	Rot    [4]float32
	Vel    [3]float32
	Rest   bool
	Health int16
	Facing [3]float32
}

func cubeCodec(t testing.TB) *Codec[cube] {
	pos := Must(NewFloat[float32](-256, 256, 1.0/512))
	vel := Must(NewFloat[float32](-32, 31, 1.0/32))
	return NewCodec(
		Vec3Field(pos, func(c *cube) *[3]float32 { return &c.Pos }),
		RotationField(Must(NewRotation(9)), func(c *cube) *[4]float32 { return &c.Rot }),
		AtRest(func(c *cube) *bool { return &c.Rest }, Vec3Field(vel, func(c *cube) *[3]float32 { return &c.Vel })),
		IntField(Must(NewInt(0, 100)), func(c *cube) *int16 { return &c.Health }),
		UnitVecField(Must(NewUnitVec(8)), func(c *cube) *[3]float32 { return &c.Facing }),
	)
}

func randomCube(r *rand.Rand) cube {
	f := func(s float64) float32 { return float32((r.Float64()*2 - 1) * s) }
	return cube{
		Pos:    [3]float32{f(300), f(300), f(300)},
		Rot:    randomRot(r),
		Vel:    [3]float32{f(40), f(40), f(40)},
		Rest:   r.IntN(4) == 0,
		Health: int16(r.IntN(300) - 100),
		Facing: randomDir(r),
	}
}

func TestCodecRoundTrip(t *testing.T) {
	c := cubeCodec(t)
	// 3*19 + 29 + (1 + 3*11) + 7 + 16 = 143 bits: 18 bytes; at rest 110 bits, 14 bytes.
	if c.Bits() != 143 || c.MaxSize() != 18 || c.FixedSize() != 0 {
		t.Fatalf("%d bits, %d bytes", c.Bits(), c.MaxSize())
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		v := randomCube(r)
		q := v
		c.Quantize(&q)
		enc := c.Append(nil, &v)
		if want := 18; v.Rest {
			want = 14
			if len(enc) != want {
				t.Fatalf("at rest: %d bytes", len(enc))
			}
		} else if len(enc) != want {
			t.Fatalf("%d bytes", len(enc))
		}
		if !bytes.Equal(c.Append(nil, &q), enc) {
			t.Fatalf("the quantized value encodes differently: %+v", v)
		}
		got := randomCube(r) // Decode sets all of it
		if err := c.Decode(enc, &got); err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		if got != q {
			t.Fatalf("sent %+v\nquantized %+v\nreceived  %+v", v, q, got)
		}
		if v.Rest && got.Vel != [3]float32{} {
			t.Fatalf("at rest with velocity %v", got.Vel)
		}
	}
}

func TestCodecRefuses(t *testing.T) {
	c := cubeCodec(t)
	v := cube{Rot: [4]float32{0, 0, 0, 1}, Facing: [3]float32{0, 0, 1}, Health: 50}
	enc := c.Append(nil, &v) // 143 bits: 1 bit of padding
	var got cube
	cases := []struct {
		name string
		in   []byte
		err  error
	}{
		{"empty", nil, ErrSize},
		{"truncated", enc[:len(enc)-1], ErrSize},
		{"a byte more", append(bytes.Clone(enc), 0), ErrSize},
		{"padding bit", func() []byte { b := bytes.Clone(enc); b[len(b)-1] |= 0x80; return b }(), ErrPadding},
		{"health over 100", func() []byte {
			b := bytes.Clone(enc)
			// health is bits 120..126: set them all (127).
			for i := 120; i < 127; i++ {
				b[i/8] |= 1 << (i % 8)
			}
			return b
		}(), ErrCode},
		{"rotation component all ones", func() []byte {
			b := bytes.Clone(enc)
			for i := 57 + 2; i < 57+11; i++ {
				b[i/8] |= 1 << (i % 8)
			}
			return b
		}(), ErrCode},
	}
	for _, tc := range cases {
		if err := c.Decode(tc.in, &got); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	if err := c.Decode(enc, &got); err != nil || got != v {
		t.Fatalf("the original: %v, %+v", err, got)
	}
}

func TestNewCodecCoverage(t *testing.T) {
	type two struct {
		A float32
		B struct{ X, Y int8 }
	}
	f := Must(NewFloat[float32](0, 1, 0.5))
	i := Must(NewInt(0, 3))
	a := FloatField(f, func(v *two) *float32 { return &v.A })
	x := IntField(i, func(v *two) *int8 { return &v.B.X })
	y := IntField(i, func(v *two) *int8 { return &v.B.Y })
	NewCodec(a, x, y) // covers all
	panics := func(name, want string, fn func()) {
		t.Helper()
		defer func() {
			r := recover()
			if s, _ := r.(string); !strings.Contains(s, want) {
				t.Errorf("%s: panic %v, want %q", name, r, want)
			}
		}()
		fn()
	}
	panics("uncovered", "covers B.Y", func() { NewCodec(a, x) })
	panics("twice", "two fields", func() { NewCodec(a, x, y, x) })
	var outside float32
	panics("outside", "outside its argument", func() {
		NewCodec(a, x, y, FloatField(f, func(*two) *float32 { return &outside }))
	})
	panics("zero Field", "zero Field", func() { NewCodec(a, x, y, Field[two]{}) })
	panics("zero Float", "not made by NewFloat", func() { FloatField(Float[float32]{}, func(v *two) *float32 { return &v.A }) })
	panics("nil accessor", "nil accessor", func() { BoolField[two](nil) })
	panics("range", "does not fit", func() { IntField(Must(NewInt(-1, 300)), func(v *two) *int8 { return &v.B.X }) })
	panics("Must", "invalid parameters", func() { Must(NewInt(1, 0)) })
}

func TestCodecDoesNotAllocate(t *testing.T) {
	c := cubeCodec(t)
	v := randomCube(rand.New(rand.NewPCG(1, 1)))
	v.Rest = false
	buf := make([]byte, 0, 64)
	var got cube
	allocs := testing.AllocsPerRun(100, func() {
		buf = c.Append(buf[:0], &v)
		if err := c.Decode(buf, &got); err != nil {
			t.Fatal(err)
		}
		c.Quantize(&v)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}

// FuzzCodec: Decode never panics, and bytes it accepts are exactly the
// encoding of the value it decoded.
func FuzzCodec(f *testing.F) {
	c := cubeCodec(f)
	r := rand.New(rand.NewPCG(9, 9))
	for range 4 {
		v := randomCube(r)
		f.Add(c.Append(nil, &v))
	}
	f.Add(bytes.Repeat([]byte{0xff}, 18))
	f.Fuzz(func(t *testing.T, in []byte) {
		var v cube
		if err := c.Decode(in, &v); err != nil {
			return
		}
		if out := c.Append(nil, &v); !bytes.Equal(out, in) {
			t.Fatalf("accepted %x as %+v, which encodes to %x", in, v, out)
		}
		q := v
		c.Quantize(&q)
		if q != v {
			t.Fatalf("a decoded value is not quantized: %+v -> %+v", v, q)
		}
	})
}

// ship uses the field kinds the cube does not.
type ship struct {
	Heading  [2]float32
	Boost    bool
	Fuel     float64
	Ammo     uint8
	Shield   float32
	Thruster [3]float64
}

func shipCodec() *Codec[ship] {
	return NewCodec(
		UnitVec2Field(Must(NewUnitVec2(10)), func(s *ship) *[2]float32 { return &s.Heading }),
		BoolField(func(s *ship) *bool { return &s.Boost }),
		FloatField(Must(NewFloat(0.0, 100, 0.1)), func(s *ship) *float64 { return &s.Fuel }),
		IntField(Must(NewInt(0, 200)), func(s *ship) *uint8 { return &s.Ammo }),
		FloatField(Must(NewFloat[float32](0, 1, 1.0/64)), func(s *ship) *float32 { return &s.Shield }),
		Vec3Field(Must(NewFloat(-1.0, 1, 0.01)), func(s *ship) *[3]float64 { return &s.Thruster }),
	)
}

func TestCodecShip(t *testing.T) {
	c := shipCodec()
	// 10 + 1 + 10 + 8 + 7 + 3*8 = 60 bits: 8 bytes.
	if c.Bits() != 60 || c.MaxSize() != 8 || c.FixedSize() != 8 {
		t.Fatalf("%d bits", c.Bits())
	}
	r := rand.New(rand.NewPCG(12, 13))
	for range 10000 {
		a := r.Float64() * 7
		v := ship{
			Heading: [2]float32{float32(a - 3), float32(2 - a)}, Boost: r.IntN(2) == 0,
			Fuel: r.Float64()*120 - 10, Ammo: uint8(r.IntN(256)), Shield: float32(r.Float64()),
			Thruster: [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()},
		}
		q := v
		c.Quantize(&q)
		enc := c.Append(nil, &v)
		var got ship
		if err := c.Decode(enc, &got); err != nil || got != q {
			t.Fatalf("sent %+v\nquantized %+v\nreceived  %+v (%v)", v, q, got, err)
		}
	}
}

// FuzzCodecShip: as FuzzCodec, for the other field kinds.
func FuzzCodecShip(f *testing.F) {
	c := shipCodec()
	v := ship{Heading: [2]float32{0, 1}, Fuel: 50, Ammo: 3, Shield: 0.5}
	f.Add(c.Append(nil, &v))
	f.Fuzz(func(t *testing.T, in []byte) {
		var v ship
		if err := c.Decode(in, &v); err != nil {
			return
		}
		if out := c.Append(nil, &v); !bytes.Equal(out, in) {
			t.Fatalf("accepted %x as %+v, which encodes to %x", in, v, out)
		}
	})
}

// FieldBits lists the codes of an encoding in order, adding up to Bits;
// a codec whose sizes vary has none.
func TestFieldBits(t *testing.T) {
	type body struct {
		Pos  [3]float32
		Rot  [4]float32
		Dir  [2]float32
		HP   int32
		Live bool
	}
	pos := Must(NewFloat[float32](-64, 64, 1.0/512))
	c := NewCodec(
		Vec3Field(pos, func(b *body) *[3]float32 { return &b.Pos }),
		RotationField(Must(NewRotation(9)), func(b *body) *[4]float32 { return &b.Rot }),
		UnitVec2Field(Must(NewUnitVec2(10)), func(b *body) *[2]float32 { return &b.Dir }),
		IntField(Must(NewInt(0, 100)), func(b *body) *int32 { return &b.HP }),
		BoolField(func(b *body) *bool { return &b.Live }),
	)
	got := c.FieldBits()
	want := []int{pos.Bits(), pos.Bits(), pos.Bits(), 2, 9, 9, 9, 10, 7, 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("FieldBits %v, want %v", got, want)
	}
	sum := 0
	for _, w := range got {
		sum += w
	}
	if sum != c.Bits() {
		t.Fatalf("codes add up to %d bits, Bits is %d", sum, c.Bits())
	}
	type moving struct {
		Rest bool
		V    float32
	}
	v := NewCodec(AtRest(func(m *moving) *bool { return &m.Rest }, FloatField(pos, func(m *moving) *float32 { return &m.V })))
	if v.FieldBits() != nil {
		t.Fatalf("a codec of varying size has FieldBits %v", v.FieldBits())
	}
}
