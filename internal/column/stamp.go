package column

import (
	"bytes"
	"unsafe"
)

// Plain.Stamp overwrites the live values with the saved ones and
// stamps exactly those whose bytes change (see ecs.RestoreStore). It compares
// every value, so its cost is a compare plus a copy; on amd64 with AVX2 an
// assembly kernel does both in one pass over whole groups of values (values
// of 4, 8, 16 and 24 bytes and of 32 bytes or more), and the portable code
// below does the rest (other sizes, the last partial group, other machines).

// kernel is an assembly loop for one value size: it copies whole groups of
// values and stamps the ones that differ. The zero kernel does nothing.
type kernel struct {
	run   func(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)
	group int // values per group
}

// Kernels prefetch prefetchAhead bytes ahead when a load moves at least
// prefetchFrom bytes of values of one type: at that size the values come from
// L3 or memory and prefetching speeds the load up by about a quarter, while
// for smaller loads the prefetch instructions only cost time.
const (
	prefetchFrom  = 1 << 20
	prefetchAhead = 2048
)

// copyStamp overwrites dst with src (n values of size bytes, memory aligned to
// align) and sets changed[i] = now for every value i whose bytes differ.
func copyStamp(dst, src unsafe.Pointer, n int, size uintptr, align int, k kernel, changed []uint64, now uint64) {
	if n == 0 || size == 0 {
		return
	}
	changed = changed[:n]
	done := 0
	if k.run != nil && useKernels {
		if g := n / k.group; g > 0 {
			pf := 0
			if uintptr(n)*size >= prefetchFrom {
				pf = prefetchAhead
			}
			k.run(dst, src, &changed[0], g, size, now, pf)
			done = g * k.group
		}
	}
	if done == n {
		return
	}
	off := uintptr(done) * size
	m := uintptr(n-done) * size
	d := unsafe.Slice((*byte)(unsafe.Add(dst, off)), m)
	s := unsafe.Slice((*byte)(unsafe.Add(src, off)), m)
	copyStampBytes(d, s, int(size), align, changed[done:], now)
}

// copyStampBytes is the portable copyStamp: blocks of equal bytes cost one
// memequal, differing blocks are compared value by value, then copied.
func copyStampBytes(d, s []byte, size, align int, changed []uint64, now uint64) {
	const block = 64
	for lo := 0; lo < len(changed); lo += block {
		hi := min(lo+block, len(changed))
		db, sb := d[lo*size:hi*size], s[lo*size:hi*size]
		if bytes.Equal(db, sb) {
			continue
		}
		markDiff(db, sb, size, align, changed[lo:hi], now)
		copy(db, sb)
	}
}

// markDiff stamps changed[i] = now for every value i (of size bytes, memory
// aligned to align) that differs between d and s, comparing whole words where
// size and alignment allow.
func markDiff(d, s []byte, size, align int, changed []uint64, now uint64) {
	switch {
	case size%8 == 0 && align >= 8:
		markWords(words[uint64](d), words[uint64](s), size/8, changed, now)
	case size%4 == 0 && align >= 4:
		markWords(words[uint32](d), words[uint32](s), size/4, changed, now)
	default:
		for i := range changed {
			o := i * size
			if !bytes.Equal(d[o:o+size], s[o:o+size]) {
				changed[i] = now
			}
		}
	}
}

// markWords stamps the values (of k words each) that differ, without
// branching inside a value; small values get unrolled loops.
func markWords[W uint32 | uint64](d, s []W, k int, changed []uint64, now uint64) {
	n := len(changed)
	d, s = d[:n*k], s[:n*k]
	switch k {
	case 1:
		for i := range changed {
			if d[i] != s[i] {
				changed[i] = now
			}
		}
	case 2:
		for i := range changed {
			if (d[2*i]^s[2*i])|(d[2*i+1]^s[2*i+1]) != 0 {
				changed[i] = now
			}
		}
	case 3:
		for i := range changed {
			o := 3 * i
			if (d[o]^s[o])|(d[o+1]^s[o+1])|(d[o+2]^s[o+2]) != 0 {
				changed[i] = now
			}
		}
	default:
		for i := range changed {
			var x W
			for j := i * k; j < i*k+k; j++ {
				x |= d[j] ^ s[j]
			}
			if x != 0 {
				changed[i] = now
			}
		}
	}
}

// words views aligned bytes as machine words.
func words[W uint32 | uint64](b []byte) []W {
	var w W
	return unsafe.Slice((*W)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(w)))
}
