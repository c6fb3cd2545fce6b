package quant

import (
	"fmt"
	"math/bits"
)

// Int quantizes integers to the range [min, max] in Bits() bits: the code
// of v is v-min. Values out of range are clamped; in range there is no
// error. Make one with NewInt; the zero value is the range [0, 0], of no
// bits.
type Int struct {
	min  int64
	n    uint64 // max - min
	bits uint8
}

// NewInt returns the quantizer of [min, max]; ErrParam if min > max.
func NewInt(min, max int64) (Int, error) {
	if min > max {
		return Int{}, fmt.Errorf("%w: Int needs min <= max (%d, %d)", ErrParam, min, max)
	}
	n := uint64(max) - uint64(min)
	return Int{min: min, n: n, bits: uint8(bits.Len64(n))}, nil
}

// Bits returns the width of a code.
func (q Int) Bits() int { return int(q.bits) }

// Min returns the smallest value.
func (q Int) Min() int64 { return q.min }

// Max returns the largest value.
func (q Int) Max() int64 { return int64(uint64(q.min) + q.n) }

// Code returns the code of v clamped to [Min(), Max()].
func (q Int) Code(v int64) uint64 {
	if v <= q.min {
		return 0
	}
	return min(uint64(v)-uint64(q.min), q.n)
}

// Value returns the value of code c, or ErrCode if c is over Max()-Min().
func (q Int) Value(c uint64) (int64, error) {
	if c > q.n {
		return 0, ErrCode
	}
	return int64(uint64(q.min) + c), nil
}

// Quantize returns v clamped to [Min(), Max()], the value a receiver of
// its code decodes.
func (q Int) Quantize(v int64) int64 { return int64(uint64(q.min) + q.Code(v)) }
