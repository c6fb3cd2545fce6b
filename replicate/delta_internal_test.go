package replicate

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

type deltaCube struct {
	Pos [3]float32
	Rot [4]float32
}

type deltaMixed struct {
	On   bool
	N    int16
	ID   uint64
	Heat float64
}

func mustPlain[T any](tb testing.TB) plainCodec[T] {
	tb.Helper()
	c, err := newPlainCodec[T]()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// A plain delta rebuilds exactly the value's encoding from the baseline's,
// costs one bit per unchanged field, and only the changed low bits of a
// float that moves a little.
func TestPlainDeltaRoundTrip(t *testing.T) {
	c := mustPlain[deltaCube](t)
	r := rand.New(rand.NewPCG(3, 4))
	base := deltaCube{Pos: [3]float32{10, 2, -7}, Rot: [4]float32{0, 0, 0, 1}}
	for i := range 1000 {
		v := base
		if i%3 != 0 {
			v.Pos[0] += 0.01 * float32(r.IntN(5))
			v.Pos[1] = float32(math.Sin(float64(i) / 20))
		}
		if i%5 == 0 {
			v.Rot[r.IntN(4)] = r.Float32()
		}
		benc := c.Append(nil, &base)
		d := c.AppendDelta(nil, benc, &v)
		got, err := c.ApplyDelta(nil, benc, d)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if want := c.Append(nil, &v); !bytes.Equal(got, want) {
			t.Fatalf("value %d: rebuilt %x, want %x", i, got, want)
		}
		base = v
	}
	same := c.AppendDelta(nil, c.Append(nil, &base), &base)
	if len(same) != 1 || same[0] != 0 {
		t.Fatalf("an unchanged 7-field value encodes as %x, want one zero byte", same)
	}
	moved := base
	moved.Pos[0] += 0.01
	if d := c.AppendDelta(nil, c.Append(nil, &base), &moved); len(d) > 4 {
		t.Fatalf("one float moved by 0.01 costs %d bytes (absolute: 28)", len(d))
	}
}

// A delta from the wrong baseline, truncated or padded bytes are refused.
func TestPlainDeltaRefusesMalformed(t *testing.T) {
	c := mustPlain[deltaMixed](t)
	a, b := deltaMixed{On: true, N: 3, ID: 1 << 40, Heat: 1.5}, deltaMixed{N: -3, ID: 7, Heat: -2}
	base := c.Append(nil, &a)
	d := c.AppendDelta(nil, base, &b)
	if _, err := c.ApplyDelta(nil, base[:3], d); err == nil {
		t.Fatal("a short baseline accepted")
	}
	if _, err := c.ApplyDelta(nil, base, d[:len(d)-1]); err == nil {
		t.Fatal("a truncated delta accepted")
	}
	if _, err := c.ApplyDelta(nil, base, append(d, 0)); err == nil {
		t.Fatal("a delta with a trailing byte accepted")
	}
}

// FuzzPlainDelta: no input panics; a delta ApplyDelta accepts whose result
// decodes re-encodes to exactly itself.
func FuzzPlainDelta(f *testing.F) {
	c := mustPlain[deltaMixed](f)
	a, b := deltaMixed{On: true, N: 3, ID: 1 << 40, Heat: 1.5}, deltaMixed{N: -3, ID: 7, Heat: -2}
	base := c.Append(nil, &a)
	f.Add(base, c.AppendDelta(nil, base, &b))
	f.Add(base, []byte{0})
	f.Add([]byte{1, 2}, []byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := c.ApplyDelta(nil, base, delta)
		if err != nil {
			return
		}
		var v deltaMixed
		if c.Decode(out, &v) != nil {
			return
		}
		if again := c.AppendDelta(nil, base, &v); !bytes.Equal(again, delta) {
			t.Fatalf("delta %x re-encodes as %x", delta, again)
		}
	})
}

func BenchmarkPlainDelta(b *testing.B) {
	c := mustPlain[deltaCube](b)
	base := deltaCube{Pos: [3]float32{10, 2, -7}, Rot: [4]float32{0, 0, 0, 1}}
	v := base
	v.Pos[0] += 0.01
	v.Rot[0] = 0.1
	benc := c.Append(nil, &base)
	buf := make([]byte, 0, 64)
	b.Run("delta", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			buf = c.AppendDelta(buf[:0], benc, &v)
			n = len(buf)
		}
		b.ReportMetric(float64(n), "bytes/value")
	})
	b.Run("absolute", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			buf = c.Append(buf[:0], &v)
			n = len(buf)
		}
		b.ReportMetric(float64(n), "bytes/value")
	})
}
