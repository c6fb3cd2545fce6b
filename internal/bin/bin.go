// Package bin holds the byte-level helpers every rewind wire format is built
// from: a reader of varints and fixed-size fields over a byte slice, a
// varint decoder for byte streams, and the few append helpers that
// encoding/binary lacks. The rollback wire format and recordings,
// replicate's messages and transport/quic's framing use it, so the formats
// share one varint rule and one set of bounds checks.
//
// # Varints
//
// An unsigned varint is encoding/binary's uvarint (unsigned LEB128: 7 bits
// per byte, least significant group first, the high bit set on every byte
// but the last); a signed one is zigzag-mapped first (binary.AppendVarint).
// Encoders use encoding/binary's Append functions. Decoders here accept only
// the minimal encoding, the one those functions produce:
//
//   - a value needing more than 64 bits (an 11th byte, or a 10th byte above
//     1) is [ErrOverflow];
//   - an encoding longer than needed (its last byte is 0x00 after a
//     continuation byte, as in 80 00 for 0) is [ErrNonMinimal].
//
// Decision: refuse non-minimal encodings everywhere. Each value then has
// exactly one encoding, so a decoded message encodes back to the bytes it
// came from (the rollback wire fuzz target checks this), a peer cannot pad
// fields to probe limits counted in bytes, and two formats never disagree
// about what a byte string means. The encoders never produced non-minimal
// varints, so no valid traffic, golden bytes or recording changes meaning.
//
// # Reader
//
// [Reader] consumes a byte slice. Its first error sticks: reads after it
// return zero values and change nothing, so a decoder reads every field
// and checks [Reader.Err] or [Reader.End] once. Errors are the sentinels
// of this package, or whatever the caller passed to [Reader.Fail]; a
// decoder maps them to its own errors in one place. Nothing here allocates
// or panics on any input, and byte strings it returns alias the input.
package bin

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
)

// Errors of the reader and the varint decoders; compare with errors.Is (or
// ==: they are returned unwrapped).
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("bin: truncated")
	// ErrOverflow: a varint does not fit 64 bits.
	ErrOverflow = errors.New("bin: varint overflows 64 bits")
	// ErrNonMinimal: a varint is longer than its minimal encoding.
	ErrNonMinimal = errors.New("bin: varint not minimally encoded")
	// ErrRange: a value is over the bound the caller gave.
	ErrRange = errors.New("bin: value out of range")
	// ErrTrailing: bytes are left after the last field.
	ErrTrailing = errors.New("bin: trailing bytes")
)

// MaxVarintLen is the longest varint encoding of a 64-bit value.
const MaxVarintLen = binary.MaxVarintLen64

// Uvarint decodes the minimal uvarint at the start of b and returns it with
// the number of bytes it took. On error (ErrTruncated, ErrOverflow or
// ErrNonMinimal) it returns 0, 0.
func Uvarint(b []byte) (uint64, int, error) {
	v, n := binary.Uvarint(b)
	if badUvarint(b, n) {
		return 0, 0, uvarintError(b, n)
	}
	return v, n, nil
}

// badUvarint reports whether binary.Uvarint's result n for b is not a
// minimal varint: an error of binary.Uvarint, or a last byte of 0 after a
// continuation byte.
func badUvarint(b []byte, n int) bool { return n <= 0 || (n > 1 && b[n-1] == 0) }

// uvarintError classifies a varint badUvarint refused.
func uvarintError(b []byte, n int) error {
	switch {
	case n == 0 && len(b) >= MaxVarintLen:
		return ErrOverflow // ten continuation bytes
	case n == 0:
		return ErrTruncated
	case n < 0:
		return ErrOverflow
	}
	return ErrNonMinimal
}

// UvarintDecoder decodes a uvarint fed one byte at a time, for formats
// whose bytes come from a stream. The zero value is ready; after a varint
// is done (or failed), Reset it for the next one.
type UvarintDecoder struct {
	v uint64
	n uint8 // bytes fed so far
}

// Feed takes the next byte. It reports done when c is the last byte of the
// varint (then Value holds it), and ErrOverflow or ErrNonMinimal as soon
// as the bytes cannot be a minimal 64-bit varint. A decoder is fed at most
// MaxVarintLen bytes before it reports done or an error.
func (d *UvarintDecoder) Feed(c byte) (done bool, err error) {
	if d.n == MaxVarintLen-1 && c > 1 {
		return false, ErrOverflow
	}
	s := 7 * uint(d.n)
	d.n++
	if c < 0x80 {
		if d.n > 1 && c == 0 {
			return false, ErrNonMinimal
		}
		d.v |= uint64(c) << s
		return true, nil
	}
	d.v |= uint64(c&0x7f) << s
	return false, nil
}

// Value returns the varint decoded so far (the whole value once Feed
// reported done).
func (d *UvarintDecoder) Value() uint64 { return d.v }

// Len returns the number of bytes fed since the last Reset.
func (d *UvarintDecoder) Len() int { return int(d.n) }

// Reset prepares d for the next varint.
func (d *UvarintDecoder) Reset() { *d = UvarintDecoder{} }

// ReadUvarint reads one minimal uvarint from r, at most MaxVarintLen bytes.
// It returns io.EOF if r ends before the first byte, io.ErrUnexpectedEOF if
// it ends inside the varint, other errors of r as they are, and
// ErrOverflow or ErrNonMinimal for a bad encoding.
func ReadUvarint(r io.ByteReader) (uint64, error) {
	var d UvarintDecoder
	for {
		c, err := r.ReadByte()
		if err != nil {
			if d.n > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		done, err := d.Feed(c)
		if err != nil {
			return 0, err
		}
		if done {
			return d.v, nil
		}
	}
}

// AppendBytes appends b with its length as a uvarint before it: the form
// [Reader.LenBytes] reads.
func AppendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// Reader decodes fields from a byte slice; see the package documentation.
// The zero value reads nothing; NewReader or Reset gives it bytes.
//
// Decision: a Reader moves an offset over its slice rather than reslicing
// it, so reading a field stores no pointer: a Reader kept in a heap object
// (or one whose address escapes) reads without GC write barriers, which
// replicate's state loader, reading millions of varints, depends on.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader returns a Reader of b.
func NewReader(b []byte) Reader { return Reader{b: b} }

// Reset makes r read b, clearing its error.
func (r *Reader) Reset(b []byte) { *r = Reader{b: b} }

// Err returns the first error, or nil.
func (r *Reader) Err() error { return r.err }

// Fail records err (if no error is recorded yet); the reads after it return
// zero values. Decoders use it for their own checks of the values read.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Len returns the number of unread bytes (0 after an error).
func (r *Reader) Len() int {
	if r.err != nil {
		return 0
	}
	return len(r.b) - r.off
}

// Offset returns the number of bytes read so far: the input's unread
// bytes start there (after an error it is where reading stopped).
func (r *Reader) Offset() int { return r.off }

// End returns the first error, or ErrTrailing if unread bytes remain.
func (r *Reader) End() error {
	if r.err == nil && r.off != len(r.b) {
		r.err = ErrTrailing
	}
	return r.err
}

// Uvarint reads a minimal uvarint.
func (r *Reader) Uvarint() uint64 {
	if off := r.off; r.err == nil && off < len(r.b) && r.b[off] < 0x80 { // inlined one-byte case
		r.off++
		return uint64(r.b[off])
	}
	return r.uvarintSlow()
}

func (r *Reader) uvarintSlow() uint64 {
	if r.err != nil {
		return 0
	}
	// Fast paths: two and three bytes (counts, lengths, entity indices
	// below 2^21), minimal (a last byte of 0 after a continuation byte
	// takes the checked path, which refuses it).
	if off := r.off; off+2 < len(r.b) {
		b0, b1, b2 := r.b[off], r.b[off+1], r.b[off+2]
		switch {
		case b1 < 0x80 && b1 != 0:
			r.off += 2
			return uint64(b0&0x7f) | uint64(b1)<<7
		case b1 >= 0x80 && b2 < 0x80 && b2 != 0:
			r.off += 3
			return uint64(b0&0x7f) | uint64(b1&0x7f)<<7 | uint64(b2)<<14
		}
	}
	b := r.b[r.off:]
	v, n := binary.Uvarint(b) // inlined, as Uvarint would not be
	if badUvarint(b, n) {
		r.err = uvarintError(b, n)
		return 0
	}
	r.off += n
	return v
}

// Varint reads a minimal zigzag varint.
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Uvarint32 reads a uvarint that must fit 32 bits (ErrRange if not).
func (r *Reader) Uvarint32() uint32 {
	v := r.Uvarint()
	if v > math.MaxUint32 {
		r.Fail(ErrRange)
		return 0
	}
	return uint32(v)
}

// Count reads a uvarint element count of at most max (ErrRange if over).
// It must also be at most the unread bytes, as it is when every element
// takes at least one byte, so a hostile count cannot make the caller
// allocate more than the input's size.
func (r *Reader) Count(max int) int {
	v := r.Uvarint()
	if r.err != nil {
		return 0
	}
	if v > uint64(max) || v > uint64(len(r.b)-r.off) {
		r.Fail(ErrRange)
		return 0
	}
	return int(v)
}

// Bytes reads exactly n bytes (n >= 0). The result aliases the input, with
// its capacity cut to n so that appending to it cannot overwrite the rest.
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.Fail(ErrTruncated)
		return nil
	}
	start := r.off
	r.off += n
	return r.b[start:r.off:r.off]
}

// LenBytes reads a byte string written by AppendBytes: a uvarint length of
// at most max (ErrRange if over), then that many bytes, aliased as by Bytes.
func (r *Reader) LenBytes(max int) []byte {
	n := r.Uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(max) {
		r.Fail(ErrRange)
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.Fail(ErrTruncated)
		return nil
	}
	return r.Bytes(int(n))
}

// Peek returns the unread bytes without reading them (nil after an
// error).
func (r *Reader) Peek() []byte {
	if r.err != nil {
		return nil
	}
	return r.b[r.off:]
}

// Rest reads every unread byte (aliased as by Bytes; nil after an error).
func (r *Reader) Rest() []byte { return r.Bytes(r.Len()) }

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if off := r.off; r.err == nil && off < len(r.b) {
		r.off++
		return r.b[off]
	}
	r.Fail(ErrTruncated)
	return 0
}

// Uint16 reads a little-endian uint16.
func (r *Reader) Uint16() uint16 {
	if p := r.Bytes(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

// Uint32 reads a little-endian uint32.
func (r *Reader) Uint32() uint32 {
	if p := r.Bytes(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

// Uint64 reads a little-endian uint64.
func (r *Reader) Uint64() uint64 {
	if p := r.Bytes(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}
