package column

import (
	"bytes"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/canon"
	"github.com/rewindgo/rewind/internal/xxh64"
)

// Plain is the copy strategy of plain-data type T: values are saved with a
// memory copy and compared bit for bit in their canonical form. A Plain
// holds reused buffers: it belongs to one owner and is not safe for
// concurrent use.
type Plain[T any] struct {
	// Form is T's canonical byte form.
	Form *canon.Form
	// Size is T's size in memory.
	Size uintptr
	// Align is T's alignment.
	Align int
	// Direct reports whether T's memory bytes are its canonical bytes (no
	// padding, little-endian machine).
	Direct bool

	w8, w4 int    // words to compare, for padding-free types of a fitting size
	k      kernel // restore kernel for the value size, if any
	ba, bb []byte // canonical encodings, for types with padding
	buf    []byte // Hash's encoding buffer
}

// PlainOf returns the copy strategy of T, or canon's error (wrapping
// canon.ErrNotPlain and naming the offending field) when T holds pointers.
func PlainOf[T any]() (*Plain[T], error) {
	l, err := canon.Of(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	p := &Plain[T]{Form: l, Size: l.Size, Align: l.Align, Direct: l.Raw, k: kernelFor(l.Size)}
	size := int(l.Size)
	switch {
	case !l.Raw || size == 0:
	case size%8 == 0 && l.Align >= 8:
		p.w8 = size / 8
	case size%4 == 0 && l.Align >= 4:
		p.w4 = size / 4
	}
	return p, nil
}

// Same reports whether a and b are identical in canonical form. Types
// without padding compare their memory, by machine words when the size and
// alignment allow (a byte compare costs a call per value).
func (p *Plain[T]) Same(a, b *T) bool {
	switch {
	case p.w8 > 0:
		x, y := unsafe.Pointer(a), unsafe.Pointer(b)
		for i := range p.w8 {
			if *(*uint64)(unsafe.Add(x, 8*i)) != *(*uint64)(unsafe.Add(y, 8*i)) {
				return false
			}
		}
		return true
	case p.w4 > 0:
		x, y := unsafe.Pointer(a), unsafe.Pointer(b)
		for i := range p.w4 {
			if *(*uint32)(unsafe.Add(x, 4*i)) != *(*uint32)(unsafe.Add(y, 4*i)) {
				return false
			}
		}
		return true
	case p.Direct:
		return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(a)), p.Size), unsafe.Slice((*byte)(unsafe.Pointer(b)), p.Size))
	}
	p.ba = p.Form.Append(p.ba[:0], unsafe.Pointer(a))
	p.bb = p.Form.Append(p.bb[:0], unsafe.Pointer(b))
	return bytes.Equal(p.ba, p.bb)
}

// Hash writes the canonical bytes of vals to d. Forms that are not Direct
// are encoded in chunks through a reused buffer, so hashing allocates
// nothing once the buffer has grown.
func (p *Plain[T]) Hash(d *xxh64.Digest, vals []T) {
	if len(vals) == 0 || p.Size == 0 {
		return
	}
	if p.Direct {
		d.Write(Bytes(vals))
		return
	}
	const chunk = 4096
	base := unsafe.Pointer(unsafe.SliceData(vals))
	buf := p.buf[:0]
	for i := range vals {
		buf = p.Form.Append(buf, unsafe.Add(base, uintptr(i)*p.Size))
		if len(buf) >= chunk {
			d.Write(buf)
			buf = buf[:0]
		}
	}
	d.Write(buf)
	p.buf = buf
}

// Stamp is the restore kernel: it overwrites dst with src (the same length
// or longer) and sets changed[i] = now for every value i whose bytes
// differ. changed has at least len(dst) entries.
func (p *Plain[T]) Stamp(dst, src []T, changed []uint64, now uint64) {
	if len(dst) == 0 {
		return
	}
	src = src[:len(dst)]
	copyStamp(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), len(dst), p.Size, p.Align, p.k, changed, now)
}

// StampWritten is the stamping rule of a strategy that cannot compare
// values: every value written since the save (changed after savedTick) is
// stamped now.
func StampWritten(changed []uint64, savedTick, now uint64) {
	for i, c := range changed {
		if c > savedTick {
			changed[i] = now
		}
	}
}

// Bytes views the memory of a slice of plain data.
func Bytes[T any](vals []T) []byte {
	if len(vals) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*int(unsafe.Sizeof(vals[0])))
}

// patchBlock is the unit Patch compares and copies: large enough that the
// comparison runs at memory speed, small enough that one changed value
// rewrites little.
const patchBlock = 4096

// Patch is the re-save kernel: it makes dst (the same length as src) equal
// to src, writing only the blocks that differ. When most of dst already
// holds src (a tick re-simulated after a rollback that changed little),
// reading both is cheaper than rewriting dst. Once a quarter of the blocks
// seen differ, it copies the rest.
func Patch[T any](dst, src []T) {
	d, s := Bytes(dst), Bytes(src)
	diff := 0
	for i := 0; i < len(s); i += patchBlock {
		j := min(i+patchBlock, len(s))
		if bytes.Equal(d[i:j], s[i:j]) {
			continue
		}
		copy(d[i:j], s[i:j])
		if diff++; diff >= 4 && 4*diff > i/patchBlock+1 {
			copy(d[j:], s[j:])
			return
		}
	}
}
