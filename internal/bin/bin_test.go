package bin

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// varintCases are encodings with what every decoder here must make of them.
var varintCases = []struct {
	hex  string
	v    uint64
	n    int
	err  error
	name string
}{
	{"00", 0, 1, nil, "zero"},
	{"7f", 127, 1, nil, "largest one-byte"},
	{"8001", 128, 2, nil, "smallest two-byte"},
	{"ac02", 300, 2, nil, "300"},
	{"ac02ff", 300, 2, nil, "followed by more bytes"},
	{"ffffffffffffffff7f", 1<<63 - 1, 9, nil, "MaxInt64"},
	{"ffffffffffffffffff01", math.MaxUint64, 10, nil, "MaxUint64"},
	{"80ffffffffffffffff01", math.MaxUint64 &^ 0x7f, 10, nil, "ten bytes, low group zero"},
	{"", 0, 0, ErrTruncated, "empty"},
	{"80", 0, 0, ErrTruncated, "continuation at the end"},
	{"ffff", 0, 0, ErrTruncated, "two continuations at the end"},
	{"8000", 0, 0, ErrNonMinimal, "zero in two bytes"},
	{"ff00", 0, 0, ErrNonMinimal, "127 in two bytes"},
	{"818000", 0, 0, ErrNonMinimal, "1 in three bytes"},
	{"80808080808080808000", 0, 0, ErrNonMinimal, "zero in ten bytes"},
	{"ffffffffffffffffff02", 0, 0, ErrOverflow, "65 bits"},
	{"ffffffffffffffffff7f", 0, 0, ErrOverflow, "71 bits"},
	{"ffffffffffffffffff8001", 0, 0, ErrOverflow, "eleven bytes"},
	{"ffffffffffffffffffff", 0, 0, ErrOverflow, "ten continuation bytes"},
}

// TestVarintRule pins the one varint rule: Uvarint, ReadUvarint and
// Reader.Uvarint accept exactly the minimal encodings (those
// binary.AppendUvarint writes) and agree on the value and the error.
func TestVarintRule(t *testing.T) {
	for _, c := range varintCases {
		b := unhex(t, c.hex)
		v, n, err := Uvarint(b)
		if v != c.v || n != c.n || err != c.err {
			t.Errorf("%s: Uvarint(%x) = %d, %d, %v; want %d, %d, %v", c.name, b, v, n, err, c.v, c.n, c.err)
		}
		if c.err == nil {
			if enc := binary.AppendUvarint(nil, c.v); !bytes.Equal(enc, b[:c.n]) {
				t.Errorf("%s: accepted %x, but the minimal encoding is %x", c.name, b[:c.n], enc)
			}
		}

		wantStream := c.err
		if c.err == ErrTruncated {
			wantStream = io.ErrUnexpectedEOF
			if len(b) == 0 {
				wantStream = io.EOF
			}
		}
		br := bytes.NewReader(b)
		v, err = ReadUvarint(br)
		if v != c.v || err != wantStream {
			t.Errorf("%s: ReadUvarint(%x) = %d, %v; want %d, %v", c.name, b, v, err, c.v, wantStream)
		}
		if c.err == nil && br.Len() != len(b)-c.n {
			t.Errorf("%s: ReadUvarint read %d bytes, want %d", c.name, len(b)-br.Len(), c.n)
		}

		r := NewReader(b)
		v = r.Uvarint()
		if v != c.v || r.Err() != c.err {
			t.Errorf("%s: Reader.Uvarint(%x) = %d, %v; want %d, %v", c.name, b, v, r.Err(), c.v, c.err)
		}
		if c.err == nil && r.Len() != len(b)-c.n {
			t.Errorf("%s: Reader.Uvarint left %d bytes, want %d", c.name, r.Len(), len(b)-c.n)
		}
	}
}

// TestUvarintRoundTrip: every encoding binary.AppendUvarint and
// binary.AppendVarint write decodes back, around each length boundary.
func TestUvarintRoundTrip(t *testing.T) {
	for s := range 64 {
		for _, v := range []uint64{1<<s - 1, 1 << s, 1<<s + 1, math.MaxUint64 >> s} {
			b := binary.AppendUvarint(nil, v)
			got, n, err := Uvarint(b)
			if got != v || n != len(b) || err != nil {
				t.Fatalf("Uvarint(%x) = %d, %d, %v; want %d", b, got, n, err, v)
			}
			sv := int64(v)
			b = binary.AppendVarint(nil, sv)
			r := NewReader(b)
			if got := r.Varint(); got != sv || r.End() != nil {
				t.Fatalf("Varint(%x) = %d, %v; want %d", b, got, r.End(), sv)
			}
		}
	}
}

// TestStreamStopsAtVarintEnd: ReadUvarint reads no byte past the varint,
// and none past the point where the encoding is known to be bad, so a
// stream decoder never consumes the next frame's bytes.
func TestStreamStopsAtVarintEnd(t *testing.T) {
	for _, c := range []struct {
		hex  string
		read int
	}{
		{"ac02ff", 2},
		{"8000ff", 2},
		{"ffffffffffffffffff02ff", 10},
	} {
		br := bytes.NewReader(unhex(t, c.hex))
		ReadUvarint(br)
		if got := int(br.Size()) - br.Len(); got != c.read {
			t.Errorf("%s: read %d bytes, want %d", c.hex, got, c.read)
		}
	}
}

func TestReaderFields(t *testing.T) {
	var b []byte
	b = append(b, 7)
	b = binary.LittleEndian.AppendUint16(b, 0xbeef)
	b = binary.LittleEndian.AppendUint32(b, 0xdeadbeef)
	b = binary.LittleEndian.AppendUint64(b, 0x0123456789abcdef)
	b = binary.AppendVarint(b, -300)
	b = binary.AppendUvarint(b, math.MaxUint32)
	b = AppendBytes(b, []byte("name"))
	b = binary.AppendUvarint(b, 2)
	b = append(b, 'x', 'y')

	r := NewReader(b)
	if v := r.Byte(); v != 7 {
		t.Errorf("Byte = %d", v)
	}
	if v := r.Uint16(); v != 0xbeef {
		t.Errorf("Uint16 = %#x", v)
	}
	if v := r.Uint32(); v != 0xdeadbeef {
		t.Errorf("Uint32 = %#x", v)
	}
	if v := r.Uint64(); v != 0x0123456789abcdef {
		t.Errorf("Uint64 = %#x", v)
	}
	if v := r.Varint(); v != -300 {
		t.Errorf("Varint = %d", v)
	}
	if v := r.Uvarint32(); v != math.MaxUint32 {
		t.Errorf("Uvarint32 = %d", v)
	}
	if v := r.LenBytes(4); string(v) != "name" || cap(v) != 4 {
		t.Errorf("LenBytes = %q (cap %d)", v, cap(v))
	}
	if n := r.Count(2); n != 2 {
		t.Errorf("Count = %d", n)
	}
	if r.Len() != 2 {
		t.Errorf("Len = %d, want 2", r.Len())
	}
	rest := r.Rest()
	if string(rest) != "xy" || cap(rest) != 2 {
		t.Errorf("Rest = %q (cap %d)", rest, cap(rest))
	}
	if err := r.End(); err != nil {
		t.Errorf("End = %v", err)
	}
}

// TestReaderErrors: each bound is checked, and the first error sticks:
// later reads return zero values and consume nothing.
func TestReaderErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		read func(*Reader) any
		want error
	}{
		{"Byte past the end", "", func(r *Reader) any { return r.Byte() }, ErrTruncated},
		{"Uint16 short", "01", func(r *Reader) any { return r.Uint16() }, ErrTruncated},
		{"Uint32 short", "010203", func(r *Reader) any { return r.Uint32() }, ErrTruncated},
		{"Uint64 short", "01020304050607", func(r *Reader) any { return r.Uint64() }, ErrTruncated},
		{"Bytes short", "0102", func(r *Reader) any { return r.Bytes(3) }, ErrTruncated},
		{"Bytes negative", "0102", func(r *Reader) any { return r.Bytes(-1) }, ErrTruncated},
		{"Uvarint32 over", "8080808010", func(r *Reader) any { return r.Uvarint32() }, ErrRange},
		{"Count over max", "03616263", func(r *Reader) any { return r.Count(2) }, ErrRange},
		{"Count over bytes left", "036162", func(r *Reader) any { return r.Count(10) }, ErrRange},
		{"LenBytes over max", "03616263", func(r *Reader) any { return r.LenBytes(2) }, ErrRange},
		{"LenBytes short", "036162", func(r *Reader) any { return r.LenBytes(10) }, ErrTruncated},
		{"Varint non-minimal", "8000", func(r *Reader) any { return r.Varint() }, ErrNonMinimal},
		{"End with bytes left", "01", func(r *Reader) any { return nil }, ErrTrailing},
	}
	for _, c := range cases {
		in := unhex(t, c.in)
		r := NewReader(in)
		c.read(&r)
		if err := r.End(); err != c.want {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
		// Sticky: nothing reads after the error.
		if r.Byte() != 0 || r.Uvarint() != 0 || r.Uint64() != 0 || r.Bytes(0) != nil ||
			r.LenBytes(10) != nil || r.Count(10) != 0 || r.Rest() != nil || r.Len() != 0 {
			t.Errorf("%s: a read after the error returned a value", c.name)
		}
		if r.Err() != c.want {
			t.Errorf("%s: error changed to %v", c.name, r.Err())
		}
	}

	custom := errors.New("custom")
	r := NewReader([]byte{1, 2})
	r.Fail(custom)
	r.Fail(ErrRange)
	if r.Byte() != 0 || r.End() != custom {
		t.Errorf("after Fail: End = %v, want the first error", r.End())
	}
	r.Reset([]byte{5})
	if r.Byte() != 5 || r.End() != nil {
		t.Errorf("after Reset: End = %v", r.End())
	}
}

// TestUvarintDecoderReuse: a decoder fed byte by byte after Reset decodes
// consecutive varints of a stream.
func TestUvarintDecoderReuse(t *testing.T) {
	var stream []byte
	want := []uint64{0, 300, math.MaxUint64, 1}
	for _, v := range want {
		stream = binary.AppendUvarint(stream, v)
	}
	var d UvarintDecoder
	var got []uint64
	for _, c := range stream {
		done, err := d.Feed(c)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			got = append(got, d.Value())
			d.Reset()
		}
	}
	if !slicesEqual(got, want) || d.Len() != 0 {
		t.Fatalf("decoded %v (%d bytes pending), want %v", got, d.Len(), want)
	}
}

func slicesEqual(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderDoesNotAllocate(t *testing.T) {
	b := []byte{0x80, 0x00}
	good := binary.AppendUvarint(nil, 1<<40)
	allocs := testing.AllocsPerRun(100, func() {
		r := NewReader(b)
		r.Uvarint()
		_ = r.End()
		r = NewReader(good)
		r.Uvarint()
		_ = r.End()
		_, _ = ReadUvarint(bytes.NewReader(b))
	})
	// bytes.NewReader escapes into the io.ByteReader: that is the only one.
	if allocs > 1 {
		t.Fatalf("%v allocations per run, want at most 1 (the bytes.Reader)", allocs)
	}
}

// FuzzUvarint: the three varint decoders agree on every input, and what
// they accept is the minimal encoding.
func FuzzUvarint(f *testing.F) {
	for _, c := range varintCases {
		f.Add(unhex(f, c.hex))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := Uvarint(b)
		sv, serr := ReadUvarint(bytes.NewReader(b))
		r := NewReader(b)
		rv := r.Uvarint()
		if err != r.Err() || v != rv {
			t.Fatalf("Uvarint = %d, %v; Reader.Uvarint = %d, %v", v, err, rv, r.Err())
		}
		switch err {
		case nil:
			if serr != nil || sv != v {
				t.Fatalf("Uvarint = %d; ReadUvarint = %d, %v", v, sv, serr)
			}
			if enc := binary.AppendUvarint(nil, v); !bytes.Equal(enc, b[:n]) {
				t.Fatalf("accepted %x for %d, whose minimal encoding is %x", b[:n], v, enc)
			}
		case ErrTruncated:
			if serr != io.EOF && serr != io.ErrUnexpectedEOF {
				t.Fatalf("Uvarint: truncated; ReadUvarint: %v", serr)
			}
		default:
			if serr != err {
				t.Fatalf("Uvarint: %v; ReadUvarint: %v", err, serr)
			}
			if w, m := binary.Uvarint(b); m > 0 && bytes.Equal(binary.AppendUvarint(nil, w), b[:m]) {
				t.Fatalf("refused %x (%v), the minimal encoding of %d", b[:m], err, w)
			}
		}
	})
}

// FuzzReader drives a Reader with a program (ops) over input bytes (in):
// no read panics, a failed read returns a zero value, the bytes read plus
// the bytes left are the input, the first error sticks, and what was read
// re-encodes (binary.Append*, AppendBytes) to exactly the bytes consumed:
// every field has one encoding.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, unhex(f, "01 0200 03000000 0400000000000000 ac02 03 04 02 6869 05 aa bb"))
	f.Add([]byte{7, 8, 9, 10}, unhex(f, "8000 ff"))
	f.Fuzz(func(t *testing.T, ops, in []byte) {
		r := NewReader(in)
		var first error
		consumed := 0
		var again []byte
		for _, op := range ops {
			before := r.Len()
			var zero bool
			var enc []byte
			switch op % 11 {
			case 0:
				v := r.Byte()
				zero, enc = v == 0, []byte{v}
			case 1:
				v := r.Uint16()
				zero, enc = v == 0, binary.LittleEndian.AppendUint16(nil, v)
			case 2:
				v := r.Uint32()
				zero, enc = v == 0, binary.LittleEndian.AppendUint32(nil, v)
			case 3:
				v := r.Uint64()
				zero, enc = v == 0, binary.LittleEndian.AppendUint64(nil, v)
			case 4:
				v := r.Uvarint()
				zero, enc = v == 0, binary.AppendUvarint(nil, v)
			case 5:
				v := r.Varint()
				zero, enc = v == 0, binary.AppendVarint(nil, v)
			case 6:
				v := r.Uvarint32()
				zero, enc = v == 0, binary.AppendUvarint(nil, uint64(v))
			case 7:
				v := r.Count(int(op >> 4))
				zero, enc = v == 0, binary.AppendUvarint(nil, uint64(v))
			case 8:
				v := r.LenBytes(int(op >> 4))
				zero, enc = len(v) == 0, AppendBytes(nil, v)
			case 9:
				v := r.Bytes(int(op >> 4))
				zero, enc = len(v) == 0, v
			case 10:
				v := r.Rest()
				zero, enc = len(v) == 0, v
			}
			if r.Err() != nil {
				if first == nil {
					first = r.Err()
				}
				if r.Err() != first {
					t.Fatalf("error changed from %v to %v", first, r.Err())
				}
				if !zero {
					t.Fatalf("op %d failed (%v) but returned a value", op%11, r.Err())
				}
				continue
			}
			consumed += before - r.Len()
			again = append(again, enc...)
			if !bytes.Equal(again, in[:consumed]) {
				t.Fatalf("op %d: read %x, re-encoded %x", op%11, in[:consumed], again)
			}
		}
		if r.Err() == nil && consumed+r.Len() != len(in) {
			t.Fatalf("read %d + left %d != %d bytes", consumed, r.Len(), len(in))
		}
	})
}

// TestReaderUvarintFastPaths: the Reader's fast paths for varints of two
// and three bytes read exactly what Uvarint reads, and refuse what it
// refuses (non-minimal forms, truncation), over every input of one and
// two bytes and every three bytes followed by another (the fast paths)
// or not (a sample). Offset moves by the bytes read.
func TestReaderUvarintFastPaths(t *testing.T) {
	check := func(b []byte) {
		r := NewReader(b)
		got := r.Uvarint()
		want, n, err := Uvarint(b)
		if (r.Err() != nil) != (err != nil) || err == nil && (got != want || r.Offset() != n || r.Len() != len(b)-n) {
			t.Fatalf("% x: read %d (%d bytes, %v), Uvarint %d (%d bytes, %v)", b, got, r.Offset(), r.Err(), want, n, err)
		}
	}
	for x := range 1 << 16 {
		check([]byte{byte(x), byte(x >> 8)})
		check([]byte{byte(x)})
	}
	step := 1
	if testing.Short() {
		step = 7
	}
	for x := 0; x < 1<<24; x += step {
		check([]byte{byte(x), byte(x >> 8), byte(x >> 16), 0x01})
		if x%251 == 0 {
			check([]byte{byte(x), byte(x >> 8), byte(x >> 16)})
		}
	}
}
