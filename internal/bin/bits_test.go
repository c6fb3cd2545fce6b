package bin

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"testing"
)

// TestBitOrder pins the byte form: least significant bit first.
func TestBitOrder(t *testing.T) {
	w := NewBitWriter(nil)
	w.WriteBits(0b101, 3)
	w.WriteBool(true)
	w.WriteBits(0xabc, 12)
	w.WriteBits(0x3, 2)
	got := w.Finish()
	// bits: 101, 1, 0xabc (12), 11 -> 18 bits -> 3 bytes
	// byte0 = 1101 | (0xc<<4) -> 0xcd; byte1 = 0xab; byte2 = 0b11
	want := []byte{0xcd, 0xab, 0x03}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	r := NewBitReader(got)
	if a, b, c, d := r.ReadBits(3), r.ReadBool(), r.ReadBits(12), r.ReadBits(2); a != 5 || !b || c != 0xabc || d != 3 {
		t.Fatalf("read %d %v %x %d", a, b, c, d)
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	// A value on a byte boundary reads as little-endian.
	w.Reset(nil)
	w.WriteBits(0x0102030405060708, 64)
	if got := w.Finish(); binary.LittleEndian.Uint64(got) != 0x0102030405060708 {
		t.Fatalf("64-bit field: %x", got)
	}
}

func TestBitRoundTripWidths(t *testing.T) {
	vals := []uint64{0, 1, 2, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa, math.MaxUint64, 0x8000000000000001}
	for start := range 8 { // every alignment
		for n := 0; n <= 64; n++ {
			for _, v := range vals {
				w := NewBitWriter(nil)
				w.WriteBits(0, start)
				w.WriteBits(v, n)
				b := w.Finish()
				if len(b) != (start+n+7)/8 {
					t.Fatalf("start %d n %d: %d bytes", start, n, len(b))
				}
				r := NewBitReader(b)
				r.ReadBits(start)
				want := v
				if n < 64 {
					want &= 1<<uint(n) - 1
				}
				if got := r.ReadBits(n); got != want || r.End() != nil {
					t.Fatalf("start %d n %d: got %x want %x, %v", start, n, got, want, r.Err())
				}
			}
		}
	}
}

func TestBitReaderErrors(t *testing.T) {
	r := NewBitReader([]byte{0xff})
	r.ReadBits(7)
	if r.ReadBits(2) != 0 || r.Err() != ErrTruncated {
		t.Fatalf("past the end: %v", r.Err())
	}
	if r.ReadBits(1) != 0 || r.Remaining() != 0 || r.End() != ErrTruncated {
		t.Fatal("error not sticky")
	}
	r = NewBitReader([]byte{0x81})
	r.ReadBits(3)
	if err := r.End(); err != ErrPadding {
		t.Fatalf("non-zero padding: %v", err)
	}
	r = NewBitReader([]byte{0x01, 0x00})
	r.ReadBits(1)
	if err := r.End(); err != ErrTrailing {
		t.Fatalf("a whole byte after the fields: %v", err)
	}
	r = NewBitReader(nil)
	if r.ReadBits(0) != 0 || r.End() != nil {
		t.Fatal("zero bits of nothing")
	}
	r = NewBitReader(make([]byte, 7))
	if r.ReadBits(64); r.Err() != ErrTruncated {
		t.Fatal("64 bits of 7 bytes")
	}
}

func TestZigzag(t *testing.T) {
	for _, c := range []struct {
		v int64
		n int
	}{{0, 1}, {-1, 1}, {1, 2}, {-2, 2}, {math.MaxInt64, 64}, {math.MinInt64, 64}, {-300, 10}, {255, 9}} {
		w := NewBitWriter(nil)
		w.WriteZigzag(c.v, c.n)
		r := NewBitReader(w.Finish())
		if got := r.ReadZigzag(c.n); got != c.v || r.End() != nil {
			t.Errorf("%d in %d bits: got %d, %v", c.v, c.n, got, r.Err())
		}
	}
}

func TestExpGolomb(t *testing.T) {
	// Sizes of order 0: 1 bit for 0, 3 for 1-2, 5 for 3-6.
	for v, want := range []int{1, 3, 3, 5, 5, 5, 5, 7} {
		w := NewBitWriter(nil)
		w.WriteExpGolomb(uint64(v), 0)
		if w.Len() != want {
			t.Errorf("gap %d: %d bits, want %d", v, w.Len(), want)
		}
	}
	for k := uint(0); k < 64; k++ {
		for _, v := range []uint64{0, 1, 2, 3, 7, 8, 1000, 1 << 40, math.MaxUint64 - 1, math.MaxUint64} {
			w := NewBitWriter(nil)
			w.WriteExpGolomb(v, k)
			hi := v>>k + 1
			wantBits := 2*bits.Len64(hi) - 1 + int(k)
			if hi == 0 {
				wantBits = 129 + int(k)
			}
			if w.Len() != wantBits {
				t.Fatalf("k %d v %d: %d bits, want %d", k, v, w.Len(), wantBits)
			}
			r := NewBitReader(w.Finish())
			if got := r.ReadExpGolomb(k); got != v || r.End() != nil {
				t.Fatalf("k %d v %d: got %d, %v", k, v, got, r.Err())
			}
		}
	}
	// 65 zeros: no value has such a code word.
	r := NewBitReader(make([]byte, 20))
	if r.ReadExpGolomb(0); r.Err() != ErrOverflow {
		t.Fatalf("65 zeros: %v", r.Err())
	}
	// 64 zeros, a one and a non-zero tail: above MaxUint64.
	w := NewBitWriter(nil)
	w.WriteBits(0, 64)
	w.WriteBits(1, 1)
	w.WriteBits(1, 64)
	r = NewBitReader(w.Finish())
	if r.ReadExpGolomb(0); r.Err() != ErrOverflow {
		t.Fatalf("2^64+1: %v", r.Err())
	}
	// Order 1 with x of 64 bits: v>>1 fits, v does not.
	w.Reset(nil)
	w.WriteBits(0, 63)
	w.WriteBits(1, 1)
	w.WriteBits(math.MaxUint64, 63)
	w.WriteBits(0, 1)
	r = NewBitReader(w.Finish())
	if r.ReadExpGolomb(1); r.Err() != ErrOverflow {
		t.Fatalf("order 1 above MaxUint64: %v", r.Err())
	}
}

func TestBitWriterDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		w := NewBitWriter(buf[:0])
		for i := range 20 {
			w.WriteBits(uint64(i), 17)
		}
		w.WriteExpGolomb(5, 0)
		_ = w.Finish()
		r := NewBitReader(buf[:44])
		for range 20 {
			r.ReadBits(17)
		}
		_ = r.End()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}

// FuzzBits decodes fields of the widths in ops from in and checks that
// accepted bytes re-encode to themselves.
func FuzzBits(f *testing.F) {
	f.Add([]byte{3, 1, 12, 2}, []byte{0xcd, 0xab, 0x03})
	f.Add([]byte{64, 64}, bytes.Repeat([]byte{0xff}, 16))
	f.Add([]byte{0x80, 0x81, 0xc2, 5}, []byte{0x11, 0x22, 0x33, 0x44})
	f.Fuzz(func(t *testing.T, ops, in []byte) {
		if len(ops) > 64 {
			return
		}
		r := NewBitReader(in)
		type field struct {
			kind byte
			n    int
			v    uint64
		}
		var fields []field
		for _, op := range ops {
			kind, n := op>>6, int(op&63)+1
			var v uint64
			switch kind {
			case 0, 1:
				v = r.ReadBits(n)
			case 2:
				v = uint64(r.ReadZigzag(n))
			case 3:
				n = int(op & 7)
				v = r.ReadExpGolomb(uint(n))
			}
			if r.Err() != nil && v != 0 {
				t.Fatalf("value %d after error %v", v, r.Err())
			}
			fields = append(fields, field{kind, n, v})
		}
		if r.End() != nil {
			return
		}
		w := NewBitWriter(nil)
		for _, f := range fields {
			switch f.kind {
			case 0, 1:
				w.WriteBits(f.v, f.n)
			case 2:
				w.WriteZigzag(int64(f.v), f.n)
			case 3:
				w.WriteExpGolomb(f.v, uint(f.n))
			}
		}
		if out := w.Finish(); !bytes.Equal(out, in) {
			t.Fatalf("accepted %x, re-encoded %x", in, out)
		}
	})
}

// BenchmarkBitWriter packs three 18-bit fields and a bit (55 bits, 7
// bytes) per value; BenchmarkByteAppendFloor appends the same values as
// three whole uint32s and a byte (13 bytes), the unpacked floor.
func BenchmarkBitWriter(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for i := range b.N {
		w := NewBitWriter(buf[:0])
		v := uint64(i)
		w.WriteBits(v, 18)
		w.WriteBits(v>>1, 18)
		w.WriteBits(v>>2, 18)
		w.WriteBool(v&1 == 1)
		buf = w.Finish()
	}
	b.ReportMetric(float64(len(buf)), "bytes/value")
}

func BenchmarkBitReader(b *testing.B) {
	b.ReportAllocs()
	w := NewBitWriter(nil)
	w.WriteBits(12345, 18)
	w.WriteBits(23456, 18)
	w.WriteBits(34567, 18)
	w.WriteBool(true)
	in := w.Finish()
	var sink uint64
	for range b.N {
		r := NewBitReader(in)
		sink += r.ReadBits(18) + r.ReadBits(18) + r.ReadBits(18)
		if r.ReadBool() && r.End() != nil {
			b.Fatal(r.Err())
		}
	}
	_ = sink
}

func BenchmarkByteAppendFloor(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for i := range b.N {
		v := uint32(i)
		buf = binary.LittleEndian.AppendUint32(buf[:0], v)
		buf = binary.LittleEndian.AppendUint32(buf, v>>1)
		buf = binary.LittleEndian.AppendUint32(buf, v>>2)
		buf = append(buf, byte(v&1))
	}
	b.ReportMetric(float64(len(buf)), "bytes/value")
}

func TestBitWriterLen(t *testing.T) {
	w := NewBitWriter([]byte{0xaa}) // one byte already in dst
	w.WriteBits(1, 3)
	if w.Len() != 11 || w.Pending() != 3 {
		t.Fatalf("Len %d Pending %d", w.Len(), w.Pending())
	}
	w.WriteBits(0, 40)
	if w.Len() != 51 || w.Pending() != 3 {
		t.Fatalf("Len %d Pending %d", w.Len(), w.Pending())
	}
	if b := w.Finish(); len(b) != 7 || b[0] != 0xaa || w.Len() != 56 || w.Pending() != 0 {
		t.Fatalf("Finish %x, Len %d", b, w.Len())
	}
	r := NewBitReader([]byte{1, 2, 3})
	r.ReadBits(5)
	if r.Remaining() != 19 {
		t.Fatalf("Remaining %d", r.Remaining())
	}
}

// WriteBitsFrom copies a bit string laid out before into any bit
// position, and AppendBytes reads whole bytes from any bit position: both
// agree with writing and reading the same fields one by one.
func TestBitStringsAtAnyOffset(t *testing.T) {
	src := NewBitWriter(nil)
	for i := range 37 {
		src.WriteBits(uint64(i*2654435761), i%13+1)
	}
	nbits := src.Len()
	str := src.Finish()
	for lead := range 17 {
		w := NewBitWriter(nil)
		w.WriteBits(0x1ffff, lead)
		w.WriteBitsFrom(str, nbits)
		w.WriteBits(0xab, 8)
		w.WriteBits(0xcd, 8)
		out := w.Finish()
		r := NewBitReader(out)
		if got := r.ReadBits(lead); got != 0x1ffff&(1<<lead-1) {
			t.Fatalf("lead %d: %x", lead, got)
		}
		for i := range 37 {
			n := i%13 + 1
			if got, want := r.ReadBits(n), uint64(i*2654435761)&(1<<n-1); got != want {
				t.Fatalf("lead %d field %d: %x, want %x", lead, i, got, want)
			}
		}
		if got := r.AppendBytes(nil, 2); string(got) != "\xab\xcd" {
			t.Fatalf("lead %d: AppendBytes %x", lead, got)
		}
		if err := r.End(); err != nil {
			t.Fatalf("lead %d: %v", lead, err)
		}
	}
	r := NewBitReader([]byte{1, 2})
	r.ReadBits(3)
	if got := r.AppendBytes(nil, 2); len(got) != 0 || r.Err() != ErrTruncated {
		t.Fatalf("AppendBytes past the end: %x, %v", got, r.Err())
	}
}
