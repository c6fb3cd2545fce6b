package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rewindgo/rewind/internal/bin"
)

// Input codec errors, built once so that rejecting hostile bytes does not
// allocate. They are never modified.
var (
	errInTruncated  = fmt.Errorf("%w: inputs: truncated", ErrMalformed)
	errInVarint     = fmt.Errorf("%w: inputs: overlong or non-minimal varint", ErrMalformed)
	errInToken      = fmt.Errorf("%w: inputs: empty token", ErrMalformed)
	errInRun        = fmt.Errorf("%w: inputs: token longer than the records can hold", ErrMalformed)
	errInRecordLen  = fmt.Errorf("%w: inputs: record longer than the limit", ErrMalformed)
	errInTrailing   = fmt.Errorf("%w: inputs: trailing bytes", ErrMalformed)
	errInDecoderArg = fmt.Errorf("%w: inputs: negative record count or limit", ErrMalformed)
	errInCanonical  = fmt.Errorf("%w: inputs: tokens not in the encoder's form", ErrMalformed)
)

// zeroPair is two zero bytes, which the encoder never leaves in a literal.
var zeroPair = []byte{0, 0}

// Token kinds, for the decoder's check that tokens are in the encoder's
// one form.
const (
	tokNone byte = iota
	tokRun
	tokLiteral
)

// InputEncoder compresses the records of consecutive frames (see the package
// documentation for the format). The zero value is ready to use and encodes
// against an empty base. An encoder reuses its buffers: once they have grown,
// Reset, Add and AppendTo do not allocate.
type InputEncoder struct {
	prev   []byte // last record added, the base before the first
	delta  []byte // delta stream of the records added
	frames int
}

// Reset discards the records added and makes a copy of base the record the
// next Add is delta-encoded against: the record of the frame before the
// first one, or empty if the receiver holds none.
func (e *InputEncoder) Reset(base []byte) {
	e.prev = append(e.prev[:0], base...)
	e.delta = e.delta[:0]
	e.frames = 0
}

// Add appends the record of the next frame. The record is copied.
func (e *InputEncoder) Add(record []byte) {
	p := e.prev
	e.delta = binary.AppendUvarint(e.delta, uint64(len(record)^len(p)))
	for i, c := range record {
		if i < len(p) {
			c ^= p[i]
		}
		e.delta = append(e.delta, c)
	}
	e.prev = append(e.prev[:0], record...)
	e.frames++
}

// Frames returns the number of records added since the last Reset.
func (e *InputEncoder) Frames() int { return e.frames }

// AppendTo appends the compressed records to dst and returns the extended
// slice. It does not change the encoder; with no records it appends nothing.
func (e *InputEncoder) AppendTo(dst []byte) []byte {
	s := e.delta
	lit := 0 // start of the pending literal
	for i := 0; i < len(s); {
		if s[i] != 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && s[j] == 0 {
			j++
		}
		if j-i >= 2 {
			if lit < i {
				dst = binary.AppendUvarint(dst, uint64(i-lit)<<1|1)
				dst = append(dst, s[lit:i]...)
			}
			dst = binary.AppendUvarint(dst, uint64(j-i)<<1)
			lit = j
		}
		i = j
	}
	if lit < len(s) {
		dst = binary.AppendUvarint(dst, uint64(len(s)-lit)<<1|1)
		dst = append(dst, s[lit:]...)
	}
	return dst
}

// InputDecoder decompresses records written by an [InputEncoder]. Its work
// and memory are bounded by n*(maxRecord+10) bytes of delta stream plus the
// payload length, whatever the payload holds; maxRecord therefore bounds the
// memory it allocates. The zero value is ready for Reset. A decoder reuses
// its buffers: once they have grown, Reset and Next do not allocate.
type InputDecoder struct {
	src       []byte // payload not yet read; a pending literal is src[:lit]
	prev, cur []byte // last record decoded (base before the first), scratch
	left      int    // records still to decode
	maxRecord int
	budget    uint64 // delta stream bytes the remaining records may still use
	run       uint64 // zero bytes left in the current run token
	lit       int    // literal bytes left in the current literal token
	err       error
	tok       byte // kind of the last token read (tokNone before the first)
	litLast   byte // last byte of the last literal token
}

// Reset prepares d to decode payload, which holds n records, at most
// maxRecord bytes each, delta-encoded against base (the record of the frame
// before the first; base is copied). payload is not copied and must not
// change while d uses it. Reset fails if n or maxRecord is negative, or if n
// is 0 and payload is not empty.
func (d *InputDecoder) Reset(payload, base []byte, n, maxRecord int) error {
	*d = InputDecoder{prev: append(d.prev[:0], base...), cur: d.cur[:0]}
	if n < 0 || maxRecord < 0 {
		d.err = errInDecoderArg
		return d.err
	}
	d.src, d.left, d.maxRecord = payload, n, maxRecord
	per := uint64(maxRecord) + binary.MaxVarintLen64
	if n > 0 && per > math.MaxUint64/uint64(n) {
		d.budget = math.MaxUint64
	} else {
		d.budget = uint64(n) * per
	}
	if n == 0 && len(payload) != 0 {
		d.err = errInTrailing
		return d.err
	}
	return nil
}

// Next returns the next record, or ok == false after the n-th. The record
// is valid until the next call to Next or Reset and must not be modified:
// the decoder reads it to decode the following record. An error (wrapping
// [ErrMalformed]) is returned for bytes that are not a valid encoding,
// including a record longer than maxRecord and, with the n-th record, bytes
// left over after it; it is sticky until Reset. A record returned before an
// error may still be part of an invalid payload.
func (d *InputDecoder) Next() (record []byte, ok bool, err error) {
	if d.err != nil {
		return nil, false, d.err
	}
	if d.left == 0 {
		return nil, false, nil
	}
	if err := d.next(); err != nil {
		d.err = err
		return nil, false, err
	}
	d.left--
	if d.left == 0 && (d.run != 0 || d.lit != 0 || len(d.src) != 0) {
		d.err = errInTrailing
		return nil, false, d.err
	}
	return d.prev, true, nil
}

// next decodes one record into d.prev (using d.cur as scratch).
func (d *InputDecoder) next() error {
	// Fast path: a run covering the length header and every byte of the
	// record means the record equals its predecessor, which stays in place.
	if p := uint64(len(d.prev)); d.run > p && len(d.prev) <= d.maxRecord {
		d.run -= p + 1
		d.budget -= p + 1
		return nil
	}
	// Length header: minimal uvarint of len(record) ^ len(prev).
	var h bin.UvarintDecoder
	for {
		c, err := d.byte()
		if err != nil {
			return err
		}
		done, err := h.Feed(c)
		if err != nil {
			return errInVarint
		}
		if done {
			break
		}
	}
	x := h.Value()
	l := x ^ uint64(len(d.prev))
	if l > uint64(d.maxRecord) {
		return errInRecordLen
	}
	n := int(l)
	if cap(d.cur) < n {
		d.cur = make([]byte, n, min(max(n, 2*cap(d.cur)), d.maxRecord))
	}
	cur, prev := d.cur[:n], d.prev
	for i := 0; i < n; {
		switch {
		case d.run > 0:
			k := int(min(d.run, uint64(n-i)))
			c := copy(cur[i:i+k], prev[min(i, len(prev)):])
			clear(cur[i+c : i+k])
			d.run -= uint64(k)
			d.budget -= uint64(k)
			i += k
		case d.lit > 0:
			k := min(d.lit, n-i)
			for j, c := range d.src[:k] {
				if i+j < len(prev) {
					c ^= prev[i+j]
				}
				cur[i+j] = c
			}
			d.src = d.src[k:]
			d.lit -= k
			d.budget -= uint64(k)
			i += k
		default:
			if err := d.token(); err != nil {
				return err
			}
		}
	}
	d.prev, d.cur = cur, prev
	return nil
}

// byte returns the next byte of the delta stream.
func (d *InputDecoder) byte() (byte, error) {
	for {
		switch {
		case d.run > 0:
			d.run--
			d.budget--
			return 0, nil
		case d.lit > 0:
			c := d.src[0]
			d.src = d.src[1:]
			d.lit--
			d.budget--
			return c, nil
		}
		if err := d.token(); err != nil {
			return 0, err
		}
	}
}

// token reads the next token header, setting run or lit.
func (d *InputDecoder) token() error {
	h, n, err := uint64(0), 1, error(nil)
	if len(d.src) > 0 && d.src[0] < 0x80 {
		h = uint64(d.src[0])
	} else {
		h, n, err = bin.Uvarint(d.src)
	}
	switch {
	case err == bin.ErrTruncated:
		return errInTruncated
	case err != nil:
		return errInVarint
	case h>>1 == 0:
		return errInToken
	case h>>1 > d.budget:
		return errInRun
	}
	d.src = d.src[n:]
	// The encoder's form, the only one accepted (so that accepted bytes
	// re-encode to themselves): every run of two or more zeros is one run
	// token, and the bytes between runs one literal token. So a run has
	// at least two zeros and follows no run, nor a literal ending in a
	// zero; a literal follows no literal, holds no two zeros in a row,
	// and does not start with a zero after a run.
	if h&1 == 0 {
		if h>>1 < 2 || d.tok == tokRun || (d.tok == tokLiteral && d.litLast == 0) {
			return errInCanonical
		}
		d.run, d.tok = h>>1, tokRun
		return nil
	}
	if h>>1 > uint64(len(d.src)) {
		return errInTruncated
	}
	lit := d.src[:h>>1]
	if d.tok == tokLiteral || (d.tok == tokRun && lit[0] == 0) || bytes.Contains(lit, zeroPair) {
		return errInCanonical
	}
	d.lit, d.tok, d.litLast = len(lit), tokLiteral, lit[len(lit)-1]
	return nil
}
