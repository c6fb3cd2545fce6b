package snapshot

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/canon"
	"github.com/rewindgo/rewind/internal/xxh64"
)

// canonical is the checksum byte form of a plain-data type (package
// internal/canon: primitive fields in declaration order, little-endian,
// platform ints as 8 bytes, bools as one byte, no padding), the same on
// every machine, so checksums agree across architectures, plus a reused
// encoding buffer for types whose memory is not already in that form.
type canonical struct {
	l      *canon.Form
	size   uintptr
	align  int
	direct bool // memory bytes are the canonical bytes
	buf    []byte
}

// plainForm checks that t holds no pointers (directly or in fields and
// array elements) and returns its canonical form. The error names the
// offending field path and kind.
func plainForm(t reflect.Type) (*canonical, error) {
	l, err := canon.Of(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotPlainData, err)
	}
	return &canonical{l: l, size: l.Size, align: l.Align, direct: l.Raw}, nil
}

// hashSlice writes the canonical bytes of vals to d. Non-direct forms are
// encoded in chunks through c's reused buffer, so hashing allocates nothing
// once the buffer has grown.
func hashSlice[T any](d *xxh64.Digest, c *canonical, vals []T) {
	if len(vals) == 0 || c.size == 0 {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(vals))
	if c.direct {
		d.Write(unsafe.Slice((*byte)(base), uintptr(len(vals))*c.size))
		return
	}
	const chunk = 4096
	buf := c.buf[:0]
	for i := range vals {
		buf = c.l.Append(buf, unsafe.Add(base, uintptr(i)*c.size))
		if len(buf) >= chunk {
			d.Write(buf)
			buf = buf[:0]
		}
	}
	d.Write(buf)
	c.buf = buf
}
