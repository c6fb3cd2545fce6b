package canon

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"
)

// Form is the canonical form of one plain-data type.
type Form struct {
	// Size and Align are the in-memory size and alignment of the type.
	Size  uintptr
	Align int
	// Encoded is the size of the canonical form in bytes.
	Encoded int
	// Raw is true when the in-memory bytes already are the canonical bytes
	// (little-endian host, no padding, no narrow platform ints): Append and
	// hashing may use the memory as it is.
	Raw bool
	// Direct is Raw without bools: decoding may copy bytes into memory as
	// they are (a bool byte other than 0 or 1 must be refused).
	Direct bool
	fields []field
	layout []Field
}

// Field describes one primitive field of a canonical form, in order: a
// value's canonical bytes are its fields' bytes one after another.
type Field struct {
	// Path is the field's path within the type: ".Pos.X", "[2]", "" for
	// a type that is itself a number. The halves of a complex number are
	// ".real" and ".imag".
	Path string
	// Kind is the field's kind (a complex half is a float of half its size;
	// an ecs.Entity is a Uint64).
	Kind reflect.Kind
	// Size is the field's size in the canonical form (platform-sized ints: 8).
	Size int
}

// Layout returns the fields of the form in canonical order. The slice is
// shared: do not modify it.
func (l *Form) Layout() []Field { return l.layout }

type field struct {
	off    uintptr
	size   uint8 // in-memory size: 1, 2, 4 or 8
	signed bool  // sign-extend when widening
	widen  bool  // platform-sized int/uint narrower than 8 bytes: 8 on the wire
	isBool bool
}

func littleEndianHost() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// Of returns the canonical form of t, or an error wrapping ErrNotPlain that names the
// offending field path and kind.
func Of(t reflect.Type) (*Form, error) {
	l := &Form{Size: t.Size(), Align: t.Align()}
	if err := l.walk(t, 0, t.String()); err != nil {
		return nil, err
	}
	packed := uintptr(0)
	raw, bools := littleEndianHost(), false
	for _, f := range l.fields {
		packed += uintptr(f.size)
		n := int(f.size)
		if f.widen {
			n = 8
			raw = false
		}
		bools = bools || f.isBool
		l.Encoded += n
	}
	l.Raw = raw && packed == l.Size
	l.Direct = l.Raw && !bools
	return l, nil
}

func (l *Form) walk(t reflect.Type, off uintptr, path string) error {
	return l.walkAt(t, off, path, len(path))
}

// walkAt walks t at offset off; path[root:] is the field's path within
// the top type.
func (l *Form) walkAt(t reflect.Type, off uintptr, path string, root int) error {
	n := len(l.fields)
	if err := l.walkKind(t, off, path, root); err != nil {
		return err
	}
	switch t.Kind() {
	case reflect.Array, reflect.Struct:
	case reflect.Complex64, reflect.Complex128:
		k, h := reflect.Float32, int(t.Size()/2)
		if h == 8 {
			k = reflect.Float64
		}
		l.layout = append(l.layout, Field{Path: path[root:] + ".real", Kind: k, Size: h}, Field{Path: path[root:] + ".imag", Kind: k, Size: h})
	default:
		if len(l.fields) > n {
			size := int(l.fields[n].size)
			if l.fields[n].widen {
				size = 8
			}
			l.layout = append(l.layout, Field{Path: path[root:], Kind: t.Kind(), Size: size})
		}
	}
	return nil
}

func (l *Form) walkKind(t reflect.Type, off uintptr, path string, root int) error {
	switch t.Kind() {
	case reflect.Bool:
		l.fields = append(l.fields, field{off: off, size: 1, isBool: true})
	case reflect.Int8, reflect.Uint8:
		l.fields = append(l.fields, field{off: off, size: 1, signed: t.Kind() == reflect.Int8})
	case reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		k := t.Kind()
		l.fields = append(l.fields, field{off: off, size: uint8(t.Size()), signed: k == reflect.Int16 || k == reflect.Int32 || k == reflect.Int64})
	case reflect.Int, reflect.Uint:
		l.fields = append(l.fields, field{off: off, size: uint8(t.Size()), signed: t.Kind() == reflect.Int, widen: t.Size() < 8})
	case reflect.Complex64, reflect.Complex128:
		h := uint8(t.Size() / 2)
		l.fields = append(l.fields, field{off: off, size: h}, field{off: off + uintptr(h), size: h})
	case reflect.Array:
		for i := range t.Len() {
			if err := l.walkAt(t.Elem(), off+uintptr(i)*t.Elem().Size(), fmt.Sprintf("%s[%d]", path, i), root); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if err := l.walkAt(f.Type, off+f.Offset, path+"."+f.Name, root); err != nil {
				return err
			}
		}
	default: // Pointer, UnsafePointer, Uintptr, Slice, Map, Chan, Func, Interface, String
		return &NotPlainError{Path: path, Kind: KindName(t.Kind())}
	}
	return nil
}

// KindName names a kind for error messages.
func KindName(k reflect.Kind) string {
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

// Append appends the canonical bytes of the value at p to dst.
func (l *Form) Append(dst []byte, p unsafe.Pointer) []byte {
	if l.Raw {
		return append(dst, unsafe.Slice((*byte)(p), l.Size)...)
	}
	for _, f := range l.fields {
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
		dst = binary.LittleEndian.AppendUint64(dst, v)[:len(dst)+n]
	}
	return dst
}

// Decode reads one value's canonical bytes from src into the value at p. It
// returns false (leaving the value partly written) when src is shorter than
// Encoded, a bool byte is not 0 or 1, or a widened platform int does not fit.
func (l *Form) Decode(src []byte, p unsafe.Pointer) bool {
	if len(src) < l.Encoded {
		return false
	}
	if l.Direct {
		copy(unsafe.Slice((*byte)(p), l.Size), src)
		return true
	}
	off := 0
	for _, f := range l.fields {
		q := unsafe.Add(p, f.off)
		switch {
		case f.isBool:
			b := src[off]
			if b > 1 {
				return false
			}
			*(*uint8)(q) = b
		case f.widen:
			v := binary.LittleEndian.Uint64(src[off:])
			if f.signed {
				if int64(v) != int64(int32(v)) {
					return false
				}
			} else if v>>32 != 0 {
				return false
			}
			*(*uint32)(q) = uint32(v)
			off += 8
			continue
		case f.size == 1:
			*(*uint8)(q) = src[off]
		case f.size == 2:
			*(*uint16)(q) = binary.LittleEndian.Uint16(src[off:])
		case f.size == 4:
			*(*uint32)(q) = binary.LittleEndian.Uint32(src[off:])
		default:
			*(*uint64)(q) = binary.LittleEndian.Uint64(src[off:])
		}
		off += int(f.size)
	}
	return true
}
