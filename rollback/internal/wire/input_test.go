package wire

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func encodeRecords(base []byte, records [][]byte) []byte {
	var e InputEncoder
	e.Reset(base)
	for _, r := range records {
		e.Add(r)
	}
	return e.AppendTo(nil)
}

// decodeRecords decodes n records, copying each, and returns the first error.
func decodeRecords(d *InputDecoder, payload, base []byte, n, maxRecord int) ([][]byte, error) {
	if err := d.Reset(payload, base, n, maxRecord); err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		r, ok, err := d.Next()
		if err != nil {
			return out, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, append([]byte{}, r...))
	}
}

func equalRecords(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func repeat(r []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// goldenSequence: 2-byte records over 10 frames, changing at frames 3 and 7.
func goldenSequence() [][]byte {
	var out [][]byte
	for f := range 10 {
		r := []byte{0x01, 0x00}
		if f >= 3 {
			r[0] = 0x03
		}
		if f >= 7 {
			r[1] = 0x80
		}
		out = append(out, r)
	}
	return out
}

func TestInputGolden(t *testing.T) {
	cases := []struct {
		name    string
		base    []byte
		records [][]byte
		hex     string
	}{
		// 8 x (00 00 00) = a run of 24 zeros.
		{"unchanged", []byte{1, 2}, repeat([]byte{1, 2}, 8), "30"},
		// 02 01 02, then 21 zeros.
		{"unchanged, empty base", nil, repeat([]byte{1, 2}, 8), "07 020102 2a"},
		// delta 02 01 | 00 x8 | 02 | 00 x12 | 80 | 00 x6
		{"changes at 3 and 7", nil, goldenSequence(), "05 0201 10 03 02 18 03 80 0c"},
		// delta 01 00 00 | 02 | 04 ffffffff | 00 00 00 00 00
		{"length changes", []byte{1, 2, 3},
			[][]byte{{1, 2}, {}, {0xff, 0xff, 0xff, 0xff}, {0xff, 0xff, 0xff, 0xff}},
			"03 01 04 0d 02 04 ffffffff 0a"},
		// A single zero stays in the literal: 00 01 | 03 01 01
		{"single zeros", []byte{0}, [][]byte{{1}, {0, 1}}, "0b 00 01 03 01 01"},
		{"no records", []byte{1, 2}, nil, ""},
		{"one empty record, empty base", nil, [][]byte{{}}, "03 00"},
	}
	var d InputDecoder
	for _, c := range cases {
		want := unhex(t, c.hex)
		got := encodeRecords(c.base, c.records)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoded %x, want %x", c.name, got, want)
		}
		dec, err := decodeRecords(&d, want, c.base, len(c.records), 8)
		if err != nil || !equalRecords(dec, c.records) {
			t.Errorf("%s: decoded %x, %v; want %x", c.name, dec, err, c.records)
		}
	}
}

func TestInputEncoderReuse(t *testing.T) {
	var e InputEncoder
	e.Reset([]byte{9, 9, 9})
	e.Add([]byte{1})
	base := []byte{1, 2}
	e.Reset(base)
	base[0] = 7 // Reset copied base
	rec := []byte{1, 2}
	e.Add(rec)
	rec[1] = 5 // Add copied the record
	e.Add([]byte{1, 5})
	if e.Frames() != 2 {
		t.Errorf("Frames = %d", e.Frames())
	}
	got := e.AppendTo([]byte{0xaa})
	// delta 00 00 00 | 00 00 07
	if want := unhex(t, "aa 0a 03 07"); !bytes.Equal(got, want) {
		t.Errorf("AppendTo = %x, want %x", got, want)
	}
	if again := e.AppendTo(nil); !bytes.Equal(again, got[1:]) {
		t.Errorf("second AppendTo = %x", again)
	}
}

// randomRecords makes n records of at most maxRecord bytes that mostly repeat
// their predecessor, with occasional changes, length changes, empty records
// and all-0xff records.
func randomRecords(r *rand.Rand, prev []byte, n, maxRecord int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		var rec []byte
		switch k := r.IntN(10); {
		case k < 5:
			rec = append([]byte{}, prev...)
		case k < 7:
			rec = append([]byte{}, prev...)
			if len(rec) > 0 {
				rec[r.IntN(len(rec))] ^= byte(1 + r.IntN(255))
			}
		case k < 8:
			rec = make([]byte, r.IntN(maxRecord+1))
			for j := range rec {
				rec[j] = byte(r.Uint32())
			}
		case k < 9:
			rec = bytes.Repeat([]byte{0xff}, r.IntN(maxRecord+1))
		default:
			rec = []byte{}
		}
		if len(rec) > maxRecord {
			rec = rec[:maxRecord]
		}
		out[i] = rec
		prev = rec
	}
	return out
}

func TestInputRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var e InputEncoder
	var d InputDecoder
	for trial := range 3000 {
		maxRecord := r.IntN(20)
		if trial%10 == 0 {
			maxRecord = 300 // record lengths needing 2-byte headers
		}
		base := randomRecords(r, nil, 1, maxRecord)[0]
		if r.IntN(4) == 0 {
			base = nil
		}
		n := r.IntN(MaxFrames + 1)
		records := randomRecords(r, base, n, maxRecord)
		e.Reset(base)
		for _, rec := range records {
			e.Add(rec)
		}
		if e.Frames() != n {
			t.Fatalf("Frames = %d, want %d", e.Frames(), n)
		}
		payload := e.AppendTo(nil)
		if (n == 0) != (len(payload) == 0) {
			t.Fatalf("%d records gave %d bytes", n, len(payload))
		}
		got, err := decodeRecords(&d, payload, base, n, maxRecord)
		if err != nil || !equalRecords(got, records) {
			t.Fatalf("trial %d: decoded %x, %v; want %x", trial, got, err, records)
		}
		// The decoder reads nothing past the records, so another n fails.
		if n > 0 {
			if _, err := decodeRecords(&d, payload, base, n-1, maxRecord); !errors.Is(err, ErrMalformed) {
				t.Fatalf("trial %d: n-1 records: err = %v", trial, err)
			}
		}
		if _, err := decodeRecords(&d, payload, base, n+1, maxRecord); !errors.Is(err, ErrMalformed) {
			t.Fatalf("trial %d: n+1 records: err = %v", trial, err)
		}
	}
}

func TestInputDecoderErrors(t *testing.T) {
	records := [][]byte{{1, 2}, {1, 2}, {0xff, 0xff, 0xff}, {}, {0, 0, 7}}
	payload := encodeRecords([]byte{1}, records)
	var d InputDecoder
	for l := range len(payload) {
		if _, err := decodeRecords(&d, payload[:l], []byte{1}, len(records), 3); !errors.Is(err, ErrMalformed) {
			t.Errorf("payload truncated to %d bytes: err = %v", l, err)
		}
	}
	if _, err := decodeRecords(&d, payload, []byte{1}, len(records), 2); !errors.Is(err, ErrMalformed) {
		t.Errorf("record over maxRecord: err = %v", err)
	}
	if got, err := decodeRecords(&d, payload, []byte{1}, len(records), 3); err != nil || !equalRecords(got, records) {
		t.Errorf("records at maxRecord: %x, %v", got, err)
	}

	cases := []struct {
		name         string
		hex          string
		base         []byte
		n, maxRecord int
	}{
		{"empty run", "00", nil, 1, 4},
		{"empty literal", "01 00", nil, 1, 4},
		{"non-minimal token", "8000 00", nil, 1, 4},
		{"overlong token", "ffffffffffffffffffff01", nil, 1, 4},
		{"truncated token", "ff", nil, 1, 4},
		{"literal past the end", "09 00 00 00", nil, 1, 4},
		{"run past the budget", "8001", nil, 1, 4}, // 64 zeros > 1*(4+10)
		{"huge run", "feffffffffffffffff01", nil, 128, 1 << 20},
		{"literal past the budget", "8101" + "00", nil, 1, 4},
		{"record too long", "03 0a 0a", nil, 1, 4},
		{"length header non-minimal", "05 8000", nil, 1, 4},
		{"length header overlong", "15 ffffffffffffffffff01", nil, 1, 4},
		{"run left over", "06", []byte{1}, 1, 4},
		{"literal left over", "05 0001", nil, 1, 4},
		{"token left over", "03 00 03 00", nil, 1, 4},
		{"zero records, payload", "03 00", nil, 0, 4},
		{"negative n", "", nil, -1, 4},
		{"negative maxRecord", "", nil, 0, -1},
		{"empty payload", "", nil, 1, 4},
	}
	for _, c := range cases {
		got, err := decodeRecords(&d, unhex(t, c.hex), c.base, c.n, c.maxRecord)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: decoded %x, err = %v; want ErrMalformed", c.name, got, err)
		}
	}
	// Huge limits do not overflow the budget: a run of 2^63-1 zeros fits
	// the budget of n = MaxInt records, and is left over after 1 record.
	huge := unhex(t, "feffffffffffffffff01")
	if err := d.Reset(huge, nil, math.MaxInt, math.MaxInt); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := d.Next(); len(r) != 0 || !ok || err != nil {
		t.Errorf("huge run with huge limits: %x, %v, %v", r, ok, err)
	}
	if _, err := decodeRecords(&d, huge, nil, 1, math.MaxInt); !errors.Is(err, ErrMalformed) {
		t.Errorf("huge run left over: err = %v", err)
	}
}

func TestInputDecoderStates(t *testing.T) {
	var d InputDecoder
	if _, ok, err := d.Next(); ok || err != nil {
		t.Errorf("zero decoder Next = %v, %v", ok, err)
	}
	if err := d.Reset(unhex(t, "30"), []byte{4, 5}, 8, 2); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		r, ok, err := d.Next()
		if !ok || err != nil || !bytes.Equal(r, []byte{4, 5}) {
			t.Fatalf("record %d = %x, %v, %v", i, r, ok, err)
		}
	}
	for range 2 {
		if r, ok, err := d.Next(); r != nil || ok || err != nil {
			t.Errorf("after the last record: %x, %v, %v", r, ok, err)
		}
	}
	// Errors are sticky until Reset.
	if err := d.Reset(unhex(t, "00"), nil, 2, 2); err != nil {
		t.Fatal(err)
	}
	_, _, err1 := d.Next()
	_, _, err2 := d.Next()
	if err1 == nil || err2 != err1 {
		t.Errorf("errors %v, %v; want the same error twice", err1, err2)
	}
	// The base is copied.
	base := []byte{1, 2}
	if err := d.Reset(unhex(t, "06"), base, 1, 2); err != nil {
		t.Fatal(err)
	}
	base[0] = 9
	if r, _, _ := d.Next(); !bytes.Equal(r, []byte{1, 2}) {
		t.Errorf("record = %x, want 0102", r)
	}
}

func TestInputAllocs(t *testing.T) {
	base := []byte{0x10, 0}
	records := [][]byte{{0x10, 0}, {0x10, 0}, {0x11, 0}, {0x11, 0}, {0x11, 1}, {0x11, 1}, {0x11, 1}, {0x11, 1}}
	var e InputEncoder
	buf := make([]byte, 0, 64)
	enc := func() {
		e.Reset(base)
		for _, r := range records {
			e.Add(r)
		}
		buf = e.AppendTo(buf[:0])
	}
	enc()
	if n := testing.AllocsPerRun(100, enc); n != 0 {
		t.Errorf("encoding allocates %v times", n)
	}
	var d InputDecoder
	dec := func() {
		if err := d.Reset(buf, base, len(records), 4); err != nil {
			t.Fatal(err)
		}
		for {
			_, ok, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
		}
	}
	dec()
	if n := testing.AllocsPerRun(100, dec); n != 0 {
		t.Errorf("decoding allocates %v times", n)
	}
}

// The decoder accepts the encoder's token form only: the same records
// written with other tokens (which an older decoder read) are refused, so
// that accepted bytes re-encode to themselves.
func TestInputsNonCanonicalRefused(t *testing.T) {
	cases := []struct {
		records   [][]byte
		canonical string
		others    []string
	}{
		// delta stream 00: a single zero goes in a literal.
		{[][]byte{{}}, "03 00", []string{"02"}},
		// 00 00: one run, not two, nor a literal holding zeros.
		{[][]byte{{}, {}}, "04", []string{"02 02", "05 00 00", "03 00 03 00"}},
		// 02 01 02: one literal, not two.
		{[][]byte{{1, 2}}, "07 02 01 02", []string{"03 02 05 01 02"}},
		// 00 00 00 01 05: the run takes the third zero.
		{[][]byte{{}, {}, {}, {5}}, "06 05 01 05", []string{"04 07 00 01 05"}},
		// 01 00 00 00: the run takes the literal's last zero.
		{[][]byte{{0}, {0}}, "03 01 06", []string{"05 01 00 04"}},
	}
	var d InputDecoder
	for _, c := range cases {
		if got := encodeRecords(nil, c.records); !bytes.Equal(got, unhex(t, c.canonical)) {
			t.Fatalf("records %x encode to %x, want %s", c.records, got, c.canonical)
		}
		if got, err := decodeRecords(&d, unhex(t, c.canonical), nil, len(c.records), 8); err != nil || !equalRecords(got, c.records) {
			t.Fatalf("%s decodes to %x, %v", c.canonical, got, err)
		}
		for _, o := range c.others {
			if got, err := decodeRecords(&d, unhex(t, o), nil, len(c.records), 8); !errors.Is(err, ErrMalformed) {
				t.Errorf("%s (records %x) decoded to %x, %v; want ErrMalformed", o, c.records, got, err)
			}
		}
	}
}
