package replicate

import (
	"testing"

	"github.com/rewindgo/rewind/internal/bin"
)

// TestStateReaderUvarint: the reader's fast paths for varints of one to
// three bytes read exactly what bin.Uvarint reads, and refuse what it
// refuses (non-minimal forms, truncation), over every input of one and
// two bytes and every three bytes followed by another (the fast paths)
// or not (a sample).
func TestStateReaderUvarint(t *testing.T) {
	check := func(b []byte) {
		r := stateReader{b: b}
		got := r.uvarint()
		want, n, err := bin.Uvarint(b)
		if (r.err != nil) != (err != nil) || err == nil && (got != want || r.off != n) {
			t.Fatalf("% x: read %d (%d bytes, %v), bin.Uvarint %d (%d bytes, %v)", b, got, r.off, r.err, want, n, err)
		}
	}
	for x := range 1 << 16 {
		check([]byte{byte(x), byte(x >> 8)})
		check([]byte{byte(x)})
	}
	for x := range 1 << 24 {
		check([]byte{byte(x), byte(x >> 8), byte(x >> 16), 0x01})
		if x%251 == 0 {
			check([]byte{byte(x), byte(x >> 8), byte(x >> 16)})
		}
	}
}
