package xxh64

import "testing"

// The vectors were checked against the xxHash reference (XXH64, seed 0).
func TestVectors(t *testing.T) {
	long := make([]byte, 1000)
	for i := range long {
		long[i] = byte(i % 251)
	}
	for _, c := range []struct {
		in   []byte
		want uint64
	}{
		{nil, 0xef46db3751d8e999},
		{[]byte("a"), 0xd24ec4f1a98c6e5b},
		{[]byte("abc"), 0x44bc2cf5ad770999},
		{long[:37], 0xd93fa2dfee5c24c9},
		{long, 0xf306f04aa88b54d3},
	} {
		if got := Sum64(c.in); got != c.want {
			t.Errorf("Sum64(%d bytes) = %#x, want %#x", len(c.in), got, c.want)
		}
		// Any chunking of the stream gives the same hash.
		for step := 1; step <= 40; step += 13 {
			d := New()
			for rest := c.in; len(rest) > 0; {
				k := min(step, len(rest))
				d.Write(rest[:k])
				rest = rest[k:]
			}
			if got := d.Sum64(); got != c.want {
				t.Errorf("chunked by %d: %#x, want %#x", step, got, c.want)
			}
		}
	}
}

func BenchmarkSum64(b *testing.B) {
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		Sum64(buf)
	}
}
