package replicate

// Deltas: a value encoded as its change from a baseline encoding the
// receiver holds.

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/rewindgo/rewind/internal/bin"
)

// DeltaCodec is a Codec that can also encode a value as its change from a
// baseline: the bytes Append produced for an earlier value, which the
// receiver holds. Both sides keep the baseline as those bytes, so a delta
// rebuilds exactly the encoding the sender would have sent, and the
// receiver decodes it with Decode as any value. The default codec of a
// plain-data type is a DeltaCodec (fieldwise: an unchanged field costs
// one bit), as is a WithWireForm codec whose wire form's codec is one;
// give a Codec these two methods to delta-encode in a form of its own.
type DeltaCodec[T any] interface {
	Codec[T]
	// AppendDelta appends the encoding of *v as a change from base (the
	// bytes Append produced for the baseline value).
	AppendDelta(dst, base []byte, v *T) []byte
	// ApplyDelta appends to dst the bytes Append produces for the value
	// that delta (the bytes one AppendDelta produced from base) encodes.
	// It must return an error, never panic, on bytes AppendDelta did not
	// produce from base; what it returns is checked by Decode.
	ApplyDelta(dst, base, delta []byte) ([]byte, error)
}

// The plain delta works on the canonical form: for each primitive field,
// in order, one bit (1: changed); a changed field of w bytes is then x,
// the XOR of its canonical bits with the baseline's, as n-1 in log2(8w)
// bits (n: the bit length of x, at least 1) and the n-1 bits of x below
// its top bit. The bits are packed least significant first (internal/bin's
// BitWriter) and padded with zeros to a whole byte. A float that moves a
// little keeps its sign, exponent and high mantissa bits: only its low
// bits travel.

// lenBits is log2(8w) for a field width w of 1, 2, 4 or 8 bytes.
func lenBits(w int) int { return bits.TrailingZeros(uint(8 * w)) }

// leField reads the w-byte little-endian field at b.
func leField(b []byte, w int) uint64 {
	switch w {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// xorField XORs x into the w-byte little-endian field at b.
func xorField(b []byte, w int, x uint64) {
	for k := range w {
		b[k] ^= byte(x >> (8 * k))
	}
}

// AppendDelta appends the plain delta of *v from base (its canonical
// bytes). A base of the wrong length (never produced by Append) makes the
// delta the value's absolute change from zero bytes.
func (c plainCodec[T]) AppendDelta(dst, base []byte, v *T) []byte {
	w := bin.NewBitWriter(dst)
	vp := unsafe.Pointer(v)
	if len(base) != c.l.Encoded {
		base = nil
	}
	off := 0
	for i := range c.l.Fields() {
		fw := c.l.FieldWidth(i)
		x := c.l.Field(vp, i)
		if base != nil {
			x ^= leField(base[off:], fw)
		}
		off += fw
		if x == 0 {
			w.WriteBool(false)
			continue
		}
		w.WriteBool(true)
		n := bits.Len64(x)
		w.WriteBits(uint64(n-1), lenBits(fw))
		w.WriteBits(x&^(1<<(n-1)), n-1)
	}
	return w.Finish()
}

// ApplyDelta appends to dst base with the plain delta applied.
func (c plainCodec[T]) ApplyDelta(dst, base, delta []byte) ([]byte, error) {
	if len(base) != c.l.Encoded {
		return dst, errValue
	}
	start := len(dst)
	dst = append(dst, base...)
	out := dst[start:]
	r := bin.NewBitReader(delta)
	off := 0
	for i := range c.l.Fields() {
		fw := c.l.FieldWidth(i)
		if r.ReadBool() {
			n := int(r.ReadBits(lenBits(fw))) + 1
			x := 1<<(n-1) | r.ReadBits(n-1)
			if r.Err() != nil {
				break
			}
			xorField(out[off:], fw, x)
		}
		off += fw
	}
	if r.End() != nil {
		return dst[:start], errValue
	}
	return dst, nil
}

// deltaCodec returns c as a DeltaCodec, if it takes deltas.
func deltaCodec[T any](c Codec[T]) (DeltaCodec[T], bool) {
	if w, ok := c.(interface{ takesDeltas() bool }); ok && !w.takesDeltas() {
		return nil, false
	}
	d, ok := c.(DeltaCodec[T])
	return d, ok
}

// takesDeltas reports whether the wire form's codec takes deltas.
func (c convCodec[T, W]) takesDeltas() bool {
	_, ok := c.w.(DeltaCodec[W])
	return ok
}

// AppendDelta appends the delta of *v's wire form from base (the wire
// form's encoding).
func (c convCodec[T, W]) AppendDelta(dst, base []byte, v *T) []byte {
	w := c.to(*v)
	return c.w.(DeltaCodec[W]).AppendDelta(dst, base, &w)
}

// ApplyDelta applies a delta of the wire form's codec.
func (c convCodec[T, W]) ApplyDelta(dst, base, delta []byte) ([]byte, error) {
	return c.w.(DeltaCodec[W]).ApplyDelta(dst, base, delta)
}
