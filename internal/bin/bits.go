package bin

// Bit packing: fields narrower than a byte, for quantized values.
//
// Bit order: the first bit written is the least significant bit of the
// first byte, and an n-bit value is written least significant bit first,
// so a value that starts on a byte boundary reads as little-endian. The
// last byte is padded with zero bits, and a reader refuses padding that
// is not zero ([ErrPadding]) or whole bytes after it ([ErrTrailing]):
// every accepted bit string has exactly one byte form, so accepted bytes
// re-encode to themselves.

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// ErrPadding: the bits after the last field of a bit-packed form, up to
// the byte boundary, are not all zero.
var ErrPadding = errors.New("bin: non-zero padding bits")

// BitWriter appends bit fields to a byte slice. Whole bytes are appended
// as soon as they are complete; Finish appends the last, partial byte.
// It allocates only when the slice has to grow. The zero value appends to
// a nil slice.
type BitWriter struct {
	b   []byte
	acc uint64 // the pending bits, fewer than 64
	n   uint   // how many bits acc holds
}

// NewBitWriter returns a writer that appends to dst.
func NewBitWriter(dst []byte) BitWriter { return BitWriter{b: dst} }

// Reset makes w append to dst, dropping pending bits.
func (w *BitWriter) Reset(dst []byte) { *w = BitWriter{b: dst} }

// WriteBits writes the low n bits of v (0 <= n <= 64; the bits of v above
// them are ignored). It panics if n is out of range: widths are the
// caller's constants, not input.
func (w *BitWriter) WriteBits(v uint64, n int) {
	if m := uint(n); m < 64 && w.n+m < 64 { // the inlined case: the accumulator does not fill
		w.acc |= v << (64 - m) >> (64 - m) << w.n // (m 0: v << 64 is 0)
		w.n += m
		return
	}
	w.flush(v, uint(n))
}

// flush writes an m-bit field that fills the accumulator: its 8 bytes
// are appended, and the field's remaining bits start the next.
//
//go:noinline
func (w *BitWriter) flush(v uint64, m uint) {
	if m > 64 {
		panic("bin: WriteBits width out of range")
	}
	v = v << (64 - m) >> (64 - m)
	used := 64 - w.n // bits of v that fit
	w.b = binary.LittleEndian.AppendUint64(w.b, w.acc|v<<w.n)
	w.acc = v >> used // (used 64: 0)
	w.n = m - used
}

// WriteBool writes one bit: 1 for true.
func (w *BitWriter) WriteBool(v bool) {
	var b uint64
	if v {
		b = 1
	}
	w.WriteBits(b, 1)
}

// WriteZigzag writes v zigzag-mapped (0, -1, 1, -2, ... as 0, 1, 2, 3,
// ...) in n bits; v must fit (|v| below 2^(n-1), or -2^(n-1)), or its
// high bits are lost as in WriteBits.
func (w *BitWriter) WriteZigzag(v int64, n int) {
	w.WriteBits(uint64(v<<1)^uint64(v>>63), n)
}

// WriteExpGolomb writes v in the exponential-Golomb code of order k
// (0 <= k < 64), the varying-width code of small gaps: with x = v>>k + 1
// of m bits, m-1 zero bits, a one bit, the m-1 low bits of x, then the k
// low bits of v. Order 0 costs 1 bit for 0, 3 bits for 1 and 2, 5 for 3
// to 6, 2*log2(v+1)+1 in general; order k spends k more bits on every
// value to save 2 bits per doubling below 2^k. For the index of an entity
// after the previous one in a sorted list, write the gap index-prev-1.
// Every value has exactly one code word (MaxUint64 at order 0 is 129
// bits).
func (w *BitWriter) WriteExpGolomb(v uint64, k uint) {
	if k >= 64 {
		panic("bin: WriteExpGolomb order out of range")
	}
	x := v>>k + 1
	if x == 0 { // v>>k is MaxUint64: x is 2^64, of 65 bits
		w.WriteBits(0, 64)
		w.WriteBits(1, 1)
		w.WriteBits(0, 64)
		w.WriteBits(v, int(k))
		return
	}
	if code, n, ok := ExpGolombCode(v, k); ok {
		w.WriteBits(code, n)
		return
	}
	m := bits.Len64(x)
	w.WriteBits(0, m-1)
	w.WriteBits(1, 1)
	w.WriteBits(x, m-1) // the top bit of x is the one written above
	w.WriteBits(v, int(k))
}

// WriteBitsFrom writes the first n bits of src (bit-packed as a
// BitWriter writes them: a string of bits laid out before, such as one
// entity's block). It panics if src holds fewer than n bits.
func (w *BitWriter) WriteBitsFrom(src []byte, n int) {
	if n > 8*len(src) || n < 0 {
		panic("bin: WriteBitsFrom beyond its source")
	}
	if w.n%8 == 0 { // byte-aligned: flush the pending bytes, then copy
		for w.n > 0 {
			w.b = append(w.b, byte(w.acc))
			w.acc >>= 8
			w.n -= 8
		}
		whole := n / 8
		w.b = append(w.b, src[:whole]...)
		if r := n % 8; r > 0 {
			w.WriteBits(uint64(src[whole]), r)
		}
		return
	}
	for ; n >= 64; n -= 64 {
		w.WriteBits(binary.LittleEndian.Uint64(src), 64)
		src = src[8:]
	}
	var v uint64
	for i := 0; 8*i < n; i++ {
		v |= uint64(src[i]) << (8 * i)
	}
	w.WriteBits(v, n)
}

// ExpGolombCode returns the code word WriteExpGolomb writes for v at
// order k as one field of n bits (write it with WriteBits(code, n)), when
// it fits 64 bits (ok); a caller may put more bits above it.
func ExpGolombCode(v uint64, k uint) (code uint64, n int, ok bool) {
	x := v>>k + 1
	if x == 0 {
		return 0, 0, false
	}
	m := bits.Len64(x)
	if n = 2*m - 1 + int(k); n > 64 {
		return 0, 0, false
	}
	// m-1 zeros, x (its top bit first, the rest above it), v's k low bits.
	code = uint64(1)<<(m-1) | (x&(1<<(m-1)-1))<<m
	if k > 0 {
		code |= (v & (1<<k - 1)) << (2*m - 1)
	}
	return code, n, true
}

// Len returns the length in bits of the slice so far (the bytes it was
// given included) plus the pending bits.
func (w *BitWriter) Len() int { return 8*len(w.b) + int(w.n) }

// Pending returns how many bits wait in the partial last byte (0 to 7).
func (w *BitWriter) Pending() int { return int(w.n % 8) }

// Finish pads the pending bits with zeros to a whole byte, appends it,
// and returns the slice. The writer then continues on a byte boundary.
func (w *BitWriter) Finish() []byte {
	for w.n > 0 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.n -= min(w.n, 8)
	}
	return w.b
}

// BitReader reads the bit fields a BitWriter wrote. Its first error
// sticks, as with Reader: reads after it return zero and change nothing,
// so a decoder reads every field and checks End once. Reading past the
// end is ErrTruncated; nothing here panics on any input or allocates.
type BitReader struct {
	b    []byte
	size int    // len of the slice given to NewBitReader or Reset
	acc  uint64 // unread bits of the bytes taken from b, fewer than 64
	n    uint
	err  error
}

// NewBitReader returns a reader of b.
func NewBitReader(b []byte) BitReader { return BitReader{b: b, size: len(b)} }

// Reset makes r read b, clearing its error.
func (r *BitReader) Reset(b []byte) { *r = BitReader{b: b, size: len(b)} }

// Err returns the first error, or nil.
func (r *BitReader) Err() error { return r.err }

// Fail records err if no error is recorded yet; decoders use it for their
// own checks of the values read.
func (r *BitReader) Fail(err error) {
	if r.err == nil {
		r.err = err
		r.b, r.acc, r.n = nil, 0, 0
	}
}

// Remaining returns the number of unread bits, padding included (0 after
// an error).
func (r *BitReader) Remaining() int { return 8*len(r.b) + int(r.n) }

// ReadBits reads an n-bit value (0 <= n <= 64; it panics otherwise, as
// widths are the caller's constants).
func (r *BitReader) ReadBits(n int) uint64 {
	if m := uint(n); m <= r.n { // the inlined case: acc holds the field (never after an error)
		v := r.acc << (64 - m) >> (64 - m)
		r.acc >>= m
		r.n -= m
		return v
	}
	return r.readSlow(n)
}

// readSlow reads a field acc does not hold yet.
func (r *BitReader) readSlow(n int) uint64 {
	if uint(n) > 32 {
		return r.readWide(n)
	}
	if r.err != nil {
		return 0
	}
	r.refill(uint(n))
	if r.n < uint(n) {
		r.Fail(ErrTruncated)
		return 0
	}
	v := r.acc & (1<<uint(n) - 1)
	r.acc >>= uint(n)
	r.n -= uint(n)
	return v
}

// refill takes bytes into acc until it holds at least n <= 32 bits or
// the input ends: four at a time while there are four.
func (r *BitReader) refill(n uint) {
	if len(r.b) >= 4 {
		r.acc |= uint64(binary.LittleEndian.Uint32(r.b)) << r.n
		r.b = r.b[4:]
		r.n += 32
		return
	}
	for r.n < n && len(r.b) > 0 {
		r.acc |= uint64(r.b[0]) << r.n
		r.b = r.b[1:]
		r.n += 8
	}
}

// readWide reads a field of 33 to 64 bits as two halves.
func (r *BitReader) readWide(n int) uint64 {
	if uint(n) > 64 {
		panic("bin: ReadBits width out of range")
	}
	lo := r.ReadBits(32)
	hi := r.ReadBits(n - 32)
	if r.err != nil {
		return 0
	}
	return lo | hi<<32
}

// AppendBytes reads n whole bytes (8-bit fields, at any bit position)
// and appends them to dst. Past the end it appends nothing and records
// ErrTruncated.
func (r *BitReader) AppendBytes(dst []byte, n int) []byte {
	if n < 0 || 8*n > r.Remaining() {
		r.Fail(ErrTruncated)
		return dst
	}
	for ; n >= 8; n -= 8 {
		dst = binary.LittleEndian.AppendUint64(dst, r.ReadBits(64))
	}
	for ; n > 0; n-- {
		dst = append(dst, byte(r.ReadBits(8)))
	}
	return dst
}

// ReadBool reads one bit.
func (r *BitReader) ReadBool() bool { return r.ReadBits(1) == 1 }

// ReadZigzag reads a value WriteZigzag wrote in n bits.
func (r *BitReader) ReadZigzag(n int) int64 {
	u := r.ReadBits(n)
	return int64(u>>1) ^ -int64(u&1)
}

// ReadExpGolomb reads a value WriteExpGolomb wrote with order k. A code
// word of a value above MaxUint64 is ErrOverflow.
func (r *BitReader) ReadExpGolomb(k uint) uint64 {
	if k >= 64 {
		panic("bin: ReadExpGolomb order out of range")
	}
	zeros := 0
	for r.err == nil && !r.ReadBool() {
		zeros++
		if zeros > 64 {
			r.Fail(ErrOverflow)
		}
	}
	if r.err != nil {
		return 0
	}
	var hi uint64 // v >> k
	if zeros == 64 {
		if r.ReadBits(64) != 0 {
			r.Fail(ErrOverflow)
		}
		hi = math.MaxUint64
	} else {
		hi = (1<<uint(zeros) | r.ReadBits(zeros)) - 1
	}
	if k > 0 && hi>>(64-k) != 0 {
		r.Fail(ErrOverflow)
	}
	lo := r.ReadBits(int(k))
	if r.err != nil {
		return 0
	}
	return hi<<k | lo
}

// Align skips to the next byte boundary, the skipped bits being padding
// that must be zero (ErrPadding), and returns the number of bytes read
// since NewBitReader or Reset: where a byte-aligned form that follows a
// bit-packed part starts (0 after an error).
func (r *BitReader) Align() int {
	if r.err != nil {
		return 0
	}
	if pad := int(r.n % 8); pad != 0 && r.ReadBits(pad) != 0 {
		r.Fail(ErrPadding)
		return 0
	}
	return r.size - len(r.b) - int(r.n/8)
}

// End returns the first error; else ErrTrailing if a whole unread byte
// remains, or ErrPadding if the unread bits of the last byte are not all
// zero. After End succeeds, the bytes read are exactly the bytes a
// BitWriter's Finish returns for the same fields.
func (r *BitReader) End() error {
	if r.err == nil {
		switch {
		case len(r.b) > 0 || r.n >= 8:
			r.err = ErrTrailing
		case r.acc != 0:
			r.err = ErrPadding
		}
	}
	return r.err
}
