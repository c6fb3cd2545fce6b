package snapshot

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/internal/xxh64"
)

// canonical describes the checksum byte layout of a plain-data type: its
// primitive fields in declaration order, each little-endian, ints and uints of
// platform size widened to 8 bytes, bools as one byte, no padding. The layout
// is the same on every machine, so checksums agree across architectures.
type canonical struct {
	size  uintptr // in-memory size of the type
	align int     // in-memory alignment of the type
	// direct is true when the in-memory bytes already are the canonical bytes
	// (little-endian host, no padding, no platform-sized integers narrower than 8 bytes).
	direct bool
	fields []field
	buf    []byte // reused encoding buffer for non-direct layouts
}

type field struct {
	off    uintptr
	size   uint8 // in-memory size: 1, 2, 4 or 8
	signed bool  // sign-extend when widening
	widen  bool  // platform-sized int/uint narrower than 8 bytes: write 8
}

func littleEndianHost() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// plainLayout checks that t holds no pointers (directly or in fields and array
// elements) and returns its canonical layout. The error names the offending
// field path and kind.
func plainLayout(t reflect.Type) (*canonical, error) {
	c := &canonical{size: t.Size(), align: t.Align()}
	if err := c.walk(t, 0, t.String()); err != nil {
		return nil, err
	}
	packed := uintptr(0)
	widen := false
	for _, f := range c.fields {
		packed += uintptr(f.size)
		widen = widen || f.widen
	}
	c.direct = littleEndianHost() && !widen && packed == c.size
	return c, nil
}

func (c *canonical) walk(t reflect.Type, off uintptr, path string) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Uint8:
		c.fields = append(c.fields, field{off: off, size: 1, signed: t.Kind() == reflect.Int8})
	case reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		k := t.Kind()
		c.fields = append(c.fields, field{off: off, size: uint8(t.Size()), signed: k == reflect.Int16 || k == reflect.Int32 || k == reflect.Int64})
	case reflect.Int, reflect.Uint:
		c.fields = append(c.fields, field{off: off, size: uint8(t.Size()), signed: t.Kind() == reflect.Int, widen: t.Size() < 8})
	case reflect.Complex64, reflect.Complex128:
		h := uint8(t.Size() / 2)
		c.fields = append(c.fields, field{off: off, size: h}, field{off: off + uintptr(h), size: h})
	case reflect.Array:
		for i := range t.Len() {
			if err := c.walk(t.Elem(), off+uintptr(i)*t.Elem().Size(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if err := c.walk(f.Type, off+f.Offset, path+"."+f.Name); err != nil {
				return err
			}
		}
	default: // Pointer, UnsafePointer, Uintptr, Slice, Map, Chan, Func, Interface, String
		return fmt.Errorf("%w: %s is a %s", ErrNotPlainData, path, kindName(t.Kind()))
	}
	return nil
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Pointer, reflect.UnsafePointer:
		return "pointer"
	case reflect.Uintptr:
		return "uintptr (may hide a pointer)"
	case reflect.String:
		return "string (holds a pointer)"
	}
	return k.String()
}

// hashSlice writes the canonical bytes of vals to d. Non-direct layouts are
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
		p := unsafe.Add(base, uintptr(i)*c.size)
		for _, f := range c.fields {
			q := unsafe.Add(p, f.off)
			var v uint64
			switch f.size {
			case 1:
				v = uint64(*(*uint8)(q))
				if f.signed {
					v = uint64(int64(*(*int8)(q)))
				}
			case 2:
				v = uint64(*(*uint16)(q))
				if f.signed {
					v = uint64(int64(*(*int16)(q)))
				}
			case 4:
				v = uint64(*(*uint32)(q))
				if f.signed {
					v = uint64(int64(*(*int32)(q)))
				}
			default:
				v = *(*uint64)(q)
			}
			n := int(f.size)
			if f.widen {
				n = 8
			}
			buf = binary.LittleEndian.AppendUint64(buf, v)[:len(buf)+n]
		}
		if len(buf) >= chunk {
			d.Write(buf)
			buf = buf[:0]
		}
	}
	d.Write(buf)
	c.buf = buf
}
