package rng

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// A Rand is a PCG-DXSM random number generator with 128 bits of state. It is
// plain data: copying a Rand value takes a snapshot of the generator. The zero
// Rand is a valid generator (seeded with 0, 0), but use [New], [NewSeed] or
// [Stream] to seed it.
//
// A Rand is not safe for concurrent use.
type Rand struct {
	hi, lo uint64
}

// New returns a generator whose 128-bit state is seed1<<64 | seed2. It gives the
// same Uint64 sequence as math/rand/v2.NewPCG(seed1, seed2).
func New(seed1, seed2 uint64) Rand { return Rand{seed1, seed2} }

// NewSeed returns a generator seeded from a single 64-bit seed: the two state
// words are the first two outputs of SplitMix64 started at seed.
func NewSeed(seed uint64) Rand {
	seed += golden
	return Rand{mix(seed), mix(seed + golden)}
}

// Stream returns the generator of stream id under seed, for example one per
// entity with id the entity's 64-bit form. The seed and the id go through a
// strong mix (the SplitMix64 finalizer), so neighbouring ids give uncorrelated
// streams, and for a given seed different ids give different states.
func Stream(seed, id uint64) Rand {
	return NewSeed(mix(mix(seed+streamSalt) ^ id))
}

// Derive returns a child generator for id, derived from the current state of
// r without advancing r. For a given state, different ids give different
// children.
func (r *Rand) Derive(id uint64) Rand {
	return NewSeed(mix(r.hi^mix(id+deriveSalt)) + r.lo)
}

const (
	golden     = 0x9e3779b97f4a7c15 // SplitMix64 increment: 2^64 / golden ratio
	streamSalt = 0x243f6a8885a308d3 // digits of pi, to separate Stream from NewSeed
	deriveSalt = 0x13198a2e03707344
)

// mix is the SplitMix64 output function, a bijection of uint64 with strong
// avalanche.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// State returns the generator's 128-bit state, hi<<64 | lo: New(State())
// is r.
func (r Rand) State() (hi, lo uint64) { return r.hi, r.lo }

// Step advances r by one draw, as Uint64 does, without the output.
func (r *Rand) Step() {
	// The LCG step: state = state*mul + inc, modulo 2^128, with the 128-bit
	// multiplier and increment of PCG.
	const (
		mulHi = 0x2360ed051fc65da4
		mulLo = 0x4385df649fccf645
		incHi = 0x5851f42d4c957f2d
		incLo = 0x14057b7ef767814f
	)
	hi, lo := bits.Mul64(r.lo, mulLo)
	hi += r.hi*mulLo + r.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	r.hi, r.lo = hi, lo
}

// Draws returns how many draws (Uint64 calls; every other method makes
// one or more) take a generator from state from to state to: n in 0..max
// with from stepped n times equal to to, and ok; ok is false if no n up
// to max does. Replication sends a generator's state as this count.
func Draws(from, to Rand, max int) (n int, ok bool) {
	for n = 0; n <= max; n++ {
		if from == to {
			return n, true
		}
		from.Step()
	}
	return 0, false
}

// Uint64 returns a uniformly distributed 64-bit value.
func (r *Rand) Uint64() uint64 {
	r.Step()
	hi, lo := r.hi, r.lo

	// DXSM output: xorshift and multiply the high half, then multiply by the
	// low half made odd.
	const cheapMul = 0xda942042e4dd58b5
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	return hi * (lo | 1)
}

// Uint32 returns a uniformly distributed 32-bit value: the high half of
// [Rand.Uint64].
func (r *Rand) Uint32() uint32 { return uint32(r.Uint64() >> 32) }

// Int64 returns a uniformly distributed non-negative 63-bit integer.
func (r *Rand) Int64() int64 { return int64(r.Uint64() >> 1) }

// Uint64N returns a uniformly distributed integer in [0, n), or 0 if n is 0.
// It uses Lemire's multiply-shift method with rejection, so the result is
// unbiased; it consumes one Uint64, rarely more.
func (r *Rand) Uint64N(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n // 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// IntN returns a uniformly distributed integer in [0, n), or 0 if n <= 0.
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.Uint64N(uint64(n)))
}

// Int64N returns a uniformly distributed integer in [0, n), or 0 if n <= 0.
func (r *Rand) Int64N(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return int64(r.Uint64N(uint64(n)))
}

// Int32N returns a uniformly distributed integer in [0, n), or 0 if n <= 0.
func (r *Rand) Int32N(n int32) int32 {
	if n <= 0 {
		return 0
	}
	return int32(r.Uint64N(uint64(n)))
}

// Float64 returns a uniformly distributed float64 in [0, 1): a multiple of
// 2^-53 made from the high 53 bits of [Rand.Uint64].
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// Float32 returns a uniformly distributed float32 in [0, 1): a multiple of
// 2^-24 made from the high 24 bits of [Rand.Uint64].
func (r *Rand) Float32() float32 { return float32(r.Uint64()>>40) * 0x1p-24 }

// Bool returns true or false with equal probability: the top bit of
// [Rand.Uint64].
func (r *Rand) Bool() bool { return r.Uint64()>>63 != 0 }

// Shuffle permutes n elements uniformly by calling swap(i, j) to exchange
// elements i and j. It is the Fisher–Yates shuffle, from the last element
// down, with j drawn by [Rand.Uint64N]. It does nothing if n <= 1.
func (r *Rand) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, int(r.Uint64N(uint64(i)+1)))
	}
}

// Perm returns a uniformly random permutation of the integers [0, n), or nil if
// n <= 0. It fills the slice as [Rand.PermInto] does.
func (r *Rand) Perm(n int) []int {
	if n <= 0 {
		return nil
	}
	p := make([]int, n)
	r.PermInto(p)
	return p
}

// PermInto fills dst with a uniformly random permutation of the integers
// [0, len(dst)), without allocating. It uses the "inside-out" Fisher–Yates
// shuffle, drawing one [Rand.Uint64N] per element after the first.
func (r *Rand) PermInto(dst []int) {
	for i := range dst {
		j := int(r.Uint64N(uint64(i) + 1))
		dst[i] = dst[j]
		dst[j] = i
	}
}

const (
	magic     = "rng1"
	stateSize = len(magic) + 16
)

// AppendBinary appends the encoded state of r to b: the 4 bytes "rng1"
// followed by the high and the low state words, each 8 bytes big-endian.
// It implements [encoding.BinaryAppender] and never fails.
func (r *Rand) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint64(b, r.hi)
	return binary.BigEndian.AppendUint64(b, r.lo), nil
}

// MarshalBinary returns the encoded state of r, as described at
// [Rand.AppendBinary]. It implements [encoding.BinaryMarshaler] and never
// fails.
func (r *Rand) MarshalBinary() ([]byte, error) {
	return r.AppendBinary(make([]byte, 0, stateSize))
}

// UnmarshalBinary sets the state of r from data encoded by
// [Rand.MarshalBinary]. It implements [encoding.BinaryUnmarshaler]. If data is
// not exactly such an encoding, it returns an error wrapping [ErrBadState] and
// leaves r unchanged.
func (r *Rand) UnmarshalBinary(data []byte) error {
	if len(data) != stateSize {
		return fmt.Errorf("%w: length %d, want %d", ErrBadState, len(data), stateSize)
	}
	if string(data[:len(magic)]) != magic {
		return fmt.Errorf("%w: bad magic %q, want %q", ErrBadState, data[:len(magic)], magic)
	}
	r.hi = binary.BigEndian.Uint64(data[len(magic):])
	r.lo = binary.BigEndian.Uint64(data[len(magic)+8:])
	return nil
}
