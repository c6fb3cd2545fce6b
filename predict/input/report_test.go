package input

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rewindgo/rewind/tick"
)

// TestInputReportRoundTrip: a report encodes and decodes to itself,
// arrivals in order, wrapping ticks and negative margins included, and
// the decoder refuses what is not a report.
func TestInputReportRoundTrip(t *testing.T) {
	var c reportCodec
	in := Report{Tick: 1<<32 - 2, Newest: 3, Lost: 0b1010,
		Arrivals: []Arrival{{Last: 1<<32 - 1, Margin: -1}, {Last: 3, Margin: 5}}, Missing: 7, Late: 2}
	b := c.Append(nil, &in)
	var out Report
	if err := c.Decode(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Tick != in.Tick || out.Newest != in.Newest || out.Lost != in.Lost || out.Missing != 7 || out.Late != 2 ||
		len(out.Arrivals) != 2 || out.Arrivals[0] != in.Arrivals[0] || out.Arrivals[1] != in.Arrivals[1] {
		t.Fatalf("round trip %+v -> %+v", in, out)
	}
	// 17 arrivals: the newest 16 are sent.
	many := Report{Tick: 100, Newest: 100}
	for i := range MaxReportArrivals + 1 {
		many.Arrivals = append(many.Arrivals, Arrival{Last: tick.Tick(84 + i)})
	}
	if err := c.Decode(c.Append(nil, &many), &out); err != nil || len(out.Arrivals) != MaxReportArrivals || out.Arrivals[0].Last != 85 {
		t.Fatalf("17 arrivals: %v, %+v", err, out)
	}
	one := c.Append(nil, &Report{Tick: 1, Newest: 1})
	padded := append([]byte{0x81, 0x00}, one[1:]...) // Tick 1 as 81 00
	if err := c.Decode(one, &out); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty": nil, "truncated": b[:len(b)-1], "trailing": append(bytes.Clone(b), 0),
		"too many": {1, 0, 0, MaxReportArrivals + 1}, "padded": padded,
		"far newest": {1, 0xfe, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0, 0},
	} {
		if err := c.Decode(data, &out); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%s) = %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzInputReportDecode: no input panics or allocates beyond
// MaxReportArrivals, and what decodes encodes back to the same bytes
// (one varint rule).
func FuzzInputReportDecode(f *testing.F) {
	var c reportCodec
	f.Add(c.Append(nil, &Report{Tick: 9, Newest: 12, Lost: 1, Arrivals: []Arrival{{Last: 11, Margin: 2}, {Last: 12, Margin: -3}}, Missing: 1}))
	f.Add([]byte{0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Report
		if err := c.Decode(data, &r); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if len(r.Arrivals) > MaxReportArrivals {
			t.Fatalf("%d arrivals decoded", len(r.Arrivals))
		}
		if again := c.Append(nil, &r); !bytes.Equal(again, data) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", data, r, again)
		}
	})
}
