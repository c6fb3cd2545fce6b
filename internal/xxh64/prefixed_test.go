package xxh64

import (
	"math/rand/v2"
	"testing"
)

// Sum64Prefixed equals the streaming Digest for every length, alignment and prefix.
func TestSum64PrefixedMatchesDigest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 5000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	lengths := []int{4000, 4096 + 7}
	for n := range 300 {
		lengths = append(lengths, n)
	}
	var d Digest
	for _, n := range lengths {
		for off := range 8 {
			data := buf[off : off+n]
			prefix := r.Uint64()
			d.Reset()
			d.WriteUint64(prefix)
			d.Write(data)
			if got, want := Sum64Prefixed(prefix, data), d.Sum64(); got != want {
				t.Fatalf("len %d off %d: %#x, want %#x", n, off, got, want)
			}
		}
	}
}
