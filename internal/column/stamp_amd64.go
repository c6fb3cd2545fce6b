//go:build amd64 && !purego

package column

import "unsafe"

// AVX2 kernels, in copyload_amd64.s.

//go:noescape
func loadQ1(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)

//go:noescape
func loadQ2(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)

//go:noescape
func loadQ3(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)

//go:noescape
func loadD1(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)

//go:noescape
func loadW(dst, src unsafe.Pointer, ticks *uint64, groups int, size uintptr, now uint64, pf int)

func cpuAVX2() bool

// useKernels switches the assembly kernels on; tests turn it off to run the
// portable code on the same inputs.
var useKernels = cpuAVX2()

// Tables of the kernels, filled by init.
var (
	// stampMasks[m] has 64-bit lane i all ones when bit i of m is set.
	stampMasks [16][4]uint64
	// lut2 and lut3 map the word-equality bits of 4 values of 2 and 3
	// words (bit j: word j equal) to their difference bits (bit i: value i differs).
	lut2 [1 << 8]uint8
	lut3 [1 << 12]uint8
)

func init() {
	for m := range stampMasks {
		for i := range 4 {
			if m&(1<<i) != 0 {
				stampMasks[m][i] = ^uint64(0)
			}
		}
	}
	fill := func(lut []uint8, k int) {
		all := 1<<k - 1
		for eq := range lut {
			var d uint8
			for i := range 4 {
				if eq>>(i*k)&all != all {
					d |= 1 << i
				}
			}
			lut[eq] = d
		}
	}
	fill(lut2[:], 2)
	fill(lut3[:], 3)
}

// kernelFor returns the kernel for values of the given size, if there is one.
func kernelFor(size uintptr) kernel {
	switch {
	case size == 4:
		return kernel{run: loadD1, group: 8}
	case size == 8:
		return kernel{run: loadQ1, group: 4}
	case size == 16:
		return kernel{run: loadQ2, group: 4}
	case size == 24:
		return kernel{run: loadQ3, group: 4}
	case size >= 32:
		return kernel{run: loadW, group: 1}
	}
	return kernel{}
}
