package replicate

// Deltas: a component value encoded as its change from a baseline, an
// earlier encoding of the same component that the client holds (see
// "Deltas against acknowledged baselines" in wire.go and journal.go).

import (
	"encoding/binary"
	"math/bits"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/rng"
)

// FieldLayout is implemented by a FixedSizer codec whose encoding is a
// sequence of bit fields, least significant bit first (the form of
// package internal/bin's bit writer, which quant.Codec uses), padded with
// zero bits to FixedSize bytes. FieldBits returns the widths of the
// fields in order (each 1 to 64, at most 8*FixedSize bits in all).
// replicate sends a value of such a codec as its fieldwise change from a
// baseline the client holds: an unchanged field costs one bit, a changed
// one a few bits more than its change. A FixedSizer codec without it is
// delta-encoded byte by byte; the default codec of plain data (and
// WithWireForm's) by the fields of its canonical form.
type FieldLayout interface {
	FieldBits() []int
}

// FieldBits returns the widths of the plain form's primitive fields.
func (c plainCodec[T]) FieldBits() []int {
	w := make([]int, c.l.Fields())
	for i := range w {
		w[i] = 8 * c.l.FieldWidth(i)
	}
	return w
}

// FixedSize makes a wire form's values travel without a length prefix.
func (c convCodec[T, W]) FixedSize() int { return fixedSizeOf(c.w) }

// FieldBits returns the wire form's field widths.
func (c convCodec[T, W]) FieldBits() []int { return fieldBitsOf(c.w, c.FixedSize()) }

// fixedSizeOf returns a codec's fixed size, or 0.
func fixedSizeOf(c any) int {
	switch c := c.(type) {
	case interface{ plainSize() int }:
		return c.plainSize()
	case FixedSizer:
		return max(c.FixedSize(), 0)
	}
	return 0
}

func (c plainCodec[T]) plainSize() int { return c.l.Encoded }

// fieldBitsOf returns the delta layout of a codec whose values are fixed
// bytes long: its FieldLayout if it has a valid one, else one 8-bit field
// per byte; nil for a codec of varying sizes.
func fieldBitsOf(c any, fixed int) []int {
	if fixed <= 0 {
		return nil
	}
	if fl, ok := c.(FieldLayout); ok {
		w := fl.FieldBits()
		total := 0
		for _, b := range w {
			if b < 1 || b > 64 {
				total = -1
				break
			}
			total += b
		}
		if total > 0 && total <= 8*fixed {
			return append([]int(nil), w...)
		}
	}
	w := make([]int, fixed)
	for i := range w {
		w[i] = 8
	}
	return w
}

// The field delta. For each field of the layout, in order, with base and
// cur read from the two encodings: one bit, 0 when the field is
// unchanged; otherwise 1, then z, the zig-zag form of the difference
// cur-base taken modulo 2^w as a signed w-bit number (w the field's
// width). A field of at most 24 bits (a quantized code, a small integer)
// writes z-1 in exponential-Golomb code of order (w-1)/4: a code that
// moves by a few steps costs a few bits. A wider one (a float's bits, a
// 32- or 64-bit integer) writes n-1 in lenBits(w) bits (n: z's bit
// length, 1 to w), then the n-1 bits of z below its top bit: a float
// that moves a little changes its low bits only, and the cost stays
// below 1+lenBits(w)+w bits whatever the change. The orders and the
// 24-bit limit were chosen on BenchmarkCubes (quantized: 136 kbit/s with
// the length form for all fields, 118 with these orders; the float
// fields of plain cubes: 337 with the length form, 457 to 505 with
// exponential-Golomb codes).

// A generator's state (component.draws) changes completely with every
// draw, so a field delta saves nothing; its delta starts with one bit,
// 1 when the value is the baseline's state advanced by n draws (n at most
// maxDraws), n then following in exponential-Golomb code of order 0,
// else 0 and the field delta.

// rngSize is the size of rng.Rand's encoding: hi, then lo, little-endian.
const rngSize = 16

// maxDraws bounds the draws the server looks for between two states.
const maxDraws = 64

func rngOf(b []byte) rng.Rand {
	return rng.New(binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]))
}

// appendDraws writes the draws form of cur from base when there is one,
// and reports whether it did (else it wrote the 0 bit).
func appendDraws(w *bin.BitWriter, base, cur []byte) bool {
	n, ok := rng.Draws(rngOf(base), rngOf(cur), maxDraws)
	w.WriteBool(ok)
	if ok {
		w.WriteExpGolomb(uint64(n), 0)
	}
	return ok
}

// readDraws reads the draws form's bit and, if set, the count, and
// appends the state base advanced by it (nothing with base nil). It
// reports whether the form was used.
func readDraws(r *bin.BitReader, base, dst []byte) ([]byte, bool) {
	if !r.ReadBool() {
		return dst, false
	}
	n := r.ReadExpGolomb(0)
	if n > maxDraws {
		r.Fail(errRange)
		return dst, true
	}
	if base == nil || r.Err() != nil {
		return dst, true
	}
	g := rngOf(base)
	for range n {
		g.Step()
	}
	hi, lo := g.State()
	dst = binary.LittleEndian.AppendUint64(dst, hi)
	return binary.LittleEndian.AppendUint64(dst, lo), true
}

// extrapolation is a predicted delta's reference: each field of the
// baseline b moved on by its change since an older baseline o, scaled
// by num/den (the ticks from the baseline to the value over the ticks
// between the two baselines): b + (b-o)*num/den, the difference taken
// as a signed w-bit number and the quotient truncated toward zero, all
// modulo 2^w. A value that moves steadily then differs from it by
// nothing or by its change of speed. den 0: no extrapolation (the
// reference is the baseline).
type extrapolation struct {
	older    []byte
	num, den int64
}

// field is the extrapolated reference of one field of w bits.
func (e extrapolation) field(b, o uint64, w int) uint64 {
	d := (b - o) & widthMask(w)
	sd := int64(d<<(64-uint(w))) >> (64 - uint(w))
	return (b + uint64(sd*e.num/e.den)) & widthMask(w)
}

// lenBits is the width of a field delta's length: enough for n-1, n <= w.
func lenBits(w int) int { return bits.Len(uint(w - 1)) }

// fieldCursor reads the consecutive fields of an encoding: whole bytes
// directly when every field of the layout is whole bytes (plain data),
// else through a bit reader.
type fieldCursor struct {
	b       []byte
	off     int
	aligned bool
	r       bin.BitReader
}

func newCursor(b []byte, aligned bool) fieldCursor {
	c := fieldCursor{b: b, aligned: aligned}
	if !aligned {
		c.r = bin.NewBitReader(b)
	}
	return c
}

// next reads the next field, of w bits.
func (c *fieldCursor) next(w int) uint64 {
	if !c.aligned {
		return c.r.ReadBits(w)
	}
	n := w / 8
	b := c.b[c.off : c.off+n]
	c.off += n
	switch n {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i, x := range b {
		v |= uint64(x) << (8 * i)
	}
	return v
}

// wholeBytes reports whether every field of a layout is whole bytes.
func wholeBytes(fields []int) bool {
	for _, w := range fields {
		if w%8 != 0 {
			return false
		}
	}
	return true
}

// appendFieldDelta writes cur's change from base (two encodings of layout
// fields, of equal length) to w.
func appendFieldDelta(w *bin.BitWriter, fields []int, base []byte, pr extrapolation, cur []byte) {
	aligned := wholeBytes(fields)
	rb, rc := newCursor(base, aligned), newCursor(cur, aligned)
	var r2 fieldCursor
	if pr.den != 0 {
		r2 = newCursor(pr.older, aligned)
	}
	for _, fw := range fields {
		b, c := rb.next(fw), rc.next(fw)
		if pr.den != 0 {
			b = pr.field(b, r2.next(fw), fw)
		}
		d := (c - b) & widthMask(fw)
		if d == 0 {
			w.WriteBool(false)
			continue
		}
		z := zigzagW(d, fw)
		if k := expOrder(fw); k >= 0 {
			if code, n, ok := bin.ExpGolombCode(z-1, uint(k)); ok && n < 64 {
				w.WriteBits(1|code<<1, n+1) // changed, then the code
			} else {
				w.WriteBool(true)
				w.WriteExpGolomb(z-1, uint(k))
			}
			continue
		}
		n := bits.Len64(z)
		lb := lenBits(fw)
		if 1+lb+n-1 <= 64 {
			w.WriteBits(1|uint64(n-1)<<1|(z&^(1<<(n-1)))<<(1+lb), lb+n) // changed, length, bits below the top
			continue
		}
		w.WriteBool(true)
		w.WriteBits(uint64(n-1), lb)
		w.WriteBits(z, n-1) // the top bit is implied
	}
}

// readFieldDelta reads one field delta from r and appends to dst the
// encoding it makes of base: len(base) bytes. With base nil it only reads
// past the delta (an entity the client no longer has) and appends
// nothing. The result is not checked here: the codec's Decode checks it.
func readFieldDelta(r *bin.BitReader, fields []int, base []byte, pr extrapolation, dst []byte) []byte {
	aligned := wholeBytes(fields)
	var rb, r2 fieldCursor
	var out bin.BitWriter
	if base != nil {
		rb = newCursor(base, aligned)
		if !aligned {
			out = bin.NewBitWriter(dst)
		}
		if pr.den != 0 {
			r2 = newCursor(pr.older, aligned)
		}
	}
	for _, fw := range fields {
		var d uint64
		if k := expOrder(fw); k >= 0 {
			if r.ReadBool() {
				v := r.ReadExpGolomb(uint(k))
				if v >= widthMask(fw) { // z would not fit the field: not a form the writer makes
					r.Fail(errRange)
					return dst
				}
				d = unzigzagW(v+1, fw)
			}
		} else if r.ReadBool() {
			n := int(r.ReadBits(lenBits(fw))) + 1
			if n > fw {
				r.Fail(errRange)
				return dst
			}
			z := uint64(1)<<(n-1) | r.ReadBits(n-1)
			d = unzigzagW(z, fw)
		}
		if base == nil {
			continue
		}
		b := rb.next(fw)
		if pr.den != 0 {
			b = pr.field(b, r2.next(fw), fw)
		}
		v := (b + d) & widthMask(fw)
		if aligned {
			for i := 0; i < fw/8; i++ {
				dst = append(dst, byte(v>>(8*i)))
			}
		} else {
			out.WriteBits(v, fw)
		}
	}
	if base == nil || r.Err() != nil || aligned {
		return dst
	}
	// Padding bits of base (a layout narrower than its bytes) carry over
	// as zeros; Finish pads to the byte.
	start := len(dst)
	res := out.Finish()
	for len(res)-start < len(base) {
		res = append(res, 0)
	}
	return res
}

// widthMask is the mask of a w-bit field (w <= 64).
func widthMask(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// zigzagW maps d, a w-bit two's complement difference, to 0, 1, 2, ...
// for 0, -1, 1, -2, ...: z < 2^w.
func zigzagW(d uint64, w int) uint64 {
	s := int64(d<<(64-uint(w))) >> (64 - uint(w)) // sign-extend from w bits
	return (uint64(s<<1) ^ uint64(s>>63)) & widthMask(w)
}

// unzigzagW inverts zigzagW, modulo 2^w.
func unzigzagW(z uint64, w int) uint64 {
	return (z>>1 ^ -(z & 1)) & widthMask(w)
}

// expOrder is the exponential-Golomb order of a changed field of w bits,
// or -1 for the length-prefixed form of fields wider than 24 bits.
func expOrder(w int) int {
	if w > 24 {
		return -1
	}
	return (w - 1) / 4
}
