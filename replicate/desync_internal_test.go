package replicate

import (
	"bytes"
	"slices"
	"testing"
)

// TestWireGoldenDesync pins the bytes of the ChecksumReport,
// ChecksumVerdict and Resync messages (wire.go) and checks that each
// decodes to what was encoded.
func TestWireGoldenDesync(t *testing.T) {
	parts := []idPart{{id: 0, sum: 1}, {id: 2, sum: 0x0102030405060708}, {id: 66, sum: 3}}
	rep := appendChecksumReport(nil, 300, 0xAA, parts)
	want := []byte{4, 0xac, 0x02, 0xAA, 0, 0, 0, 0, 0, 0, 0, 3,
		0, 1, 0, 0, 0, 0, 0, 0, 0,
		2, 8, 7, 6, 5, 4, 3, 2, 1,
		66, 3, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(rep, want) {
		t.Fatalf("report % x, want % x", rep, want)
	}
	tk, sum, got, err := readChecksumReport(rep[1:], nil)
	if err != nil || tk != 300 || sum != 0xAA || !slices.Equal(got, parts) {
		t.Fatalf("report read back: %v %#x %v %v", tk, sum, got, err)
	}
	ver := appendChecksumVerdict(nil, 300, []uint8{2, 66})
	if want := []byte{16, 0xac, 0x02, 2, 2, 66}; !bytes.Equal(ver, want) {
		t.Fatalf("verdict % x, want % x", ver, want)
	}
	if tk, d, err := readChecksumVerdict(ver[1:], nil); err != nil || tk != 300 || !slices.Equal(d, []uint8{2, 66}) {
		t.Fatalf("verdict read back: %v %v %v", tk, d, err)
	}
	// Part ids out of order, repeated or out of range are malformed.
	for _, bad := range [][]byte{
		{10, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		{10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		if _, _, _, err := readChecksumReport(bad, nil); err == nil {
			t.Fatalf("report % x accepted", bad)
		}
	}
	if _, _, err := readChecksumVerdict([]byte{10, 2, 3, 3}, nil); err == nil {
		t.Fatal("verdict with a repeated id accepted")
	}
}

// FuzzChecksumReport: any bytes decode to an error or to a report that
// encodes back to the same bytes, with at most maxReportParts parts.
func FuzzChecksumReport(f *testing.F) {
	f.Add(appendChecksumReport(nil, 300, 7, []idPart{{0, 1}, {3, 2}})[1:])
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, sum, parts, err := readChecksumReport(b, nil)
		if err != nil {
			return
		}
		if len(parts) > maxReportParts || !bytes.Equal(appendChecksumReport(nil, tk, sum, parts)[1:], b) {
			t.Fatalf("% x decoded to %v %v %v", b, tk, sum, parts)
		}
	})
}

// FuzzChecksumVerdict: the same for verdicts.
func FuzzChecksumVerdict(f *testing.F) {
	f.Add(appendChecksumVerdict(nil, 300, []uint8{1, 5})[1:])
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, d, err := readChecksumVerdict(b, nil)
		if err == nil && !bytes.Equal(appendChecksumVerdict(nil, tk, d)[1:], b) {
			t.Fatalf("% x decoded to %v %v", b, tk, d)
		}
	})
}
