package column

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// copyStamp (assembly kernels where available, the portable code for the
// rest) copies every value and stamps exactly the values whose bytes differ,
// for every kernel size and sizes without a kernel, group remainders, values
// differing in any single byte, and loads large enough to prefetch.
func TestCopyStampMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 12, 16, 20, 24, 31, 32, 33, 40, 48, 64, 100}
	counts := []int{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200}
	for _, kernels := range []bool{true, false} {
		if kernels && !useKernels {
			continue // no kernels on this machine
		}
		for _, size := range sizes {
			for _, n := range counts {
				for _, p := range []float64{0, 0.1, 0.5, 1} {
					for _, off := range []int{0, 4, 1} { // aligned, 4-aligned, unaligned memory
						name := fmt.Sprintf("kernels=%v/size=%d/n=%d/p=%v/off=%d", kernels, size, n, p, off)
						checkCopyStamp(t, name, r, kernels, size, n, p, off)
					}
				}
			}
		}
		// Loads large enough to use the prefetching kernels.
		for _, size := range []int{4, 8, 16, 24, 40} {
			n := prefetchFrom/size + 13
			checkCopyStamp(t, fmt.Sprintf("kernels=%v/large/size=%d", kernels, size), r, kernels, size, n, 0.3, 0)
		}
	}
}

func checkCopyStamp(t *testing.T, name string, r *rand.Rand, kernels bool, size, n int, p float64, off int) {
	t.Helper()
	defer func(old bool) { useKernels = old }(useKernels)
	useKernels = kernels
	mem := func() []byte { // n values at offset off from 8-byte aligned memory
		w := make([]uint64, (n*size+off)/8+1)
		return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*8)[off : off+n*size]
	}
	src, dst := mem(), mem()
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	copy(dst, src)
	want := make([]uint64, n)
	changed := make([]uint64, n)
	for i := range n {
		changed[i] = uint64(i + 1)
		want[i] = uint64(i + 1)
		if r.Float64() < p {
			// Differs in one byte, or in each byte with probability 1/2
			// (at least one), or in every byte.
			v := dst[i*size : (i+1)*size]
			switch r.IntN(3) {
			case 0:
				v[r.IntN(size)] ^= byte(1 + r.IntN(255))
			case 1:
				k := r.IntN(size)
				for j := range v {
					if j == k || r.IntN(2) == 0 {
						v[j] ^= byte(1 + r.IntN(255))
					}
				}
			case 2:
				for j := range v {
					v[j] ^= byte(1 + r.IntN(255))
				}
			}
			want[i] = 99
		}
	}
	align := 8
	if off%8 != 0 {
		align = off % 8 & -(off % 8) // largest power of two dividing off
	}
	var d, s unsafe.Pointer
	if n > 0 {
		d, s = unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0])
	}
	copyStamp(d, s, n, uintptr(size), align, kernelFor(uintptr(size)), changed, 99)
	if !bytes.Equal(dst, src) {
		t.Fatalf("%s: values not copied", name)
	}
	for i := range n {
		if changed[i] != want[i] {
			t.Fatalf("%s: value %d stamped %d, want %d", name, i, changed[i], want[i])
		}
	}
}
