package canon

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"
)

type fieldMix struct {
	A bool
	B int16
	C float32
	D [2]uint8
	E int
	F complex64
	G uint64
}

// Field agrees with the canonical bytes, and the fields' widths add up to
// the encoded size.
func TestFieldsMatchCanonicalBytes(t *testing.T) {
	l, err := Of(reflect.TypeFor[fieldMix]())
	if err != nil {
		t.Fatal(err)
	}
	v := fieldMix{A: true, B: -3, C: 1.5, D: [2]uint8{7, 9}, E: -42, F: complex(1, -2), G: 1 << 60}
	enc := l.Append(nil, unsafe.Pointer(&v))
	off, total := 0, 0
	for i := range l.Fields() {
		n := l.FieldWidth(i)
		x := l.Field(unsafe.Pointer(&v), i)
		var le [8]byte
		for k := range n {
			le[k] = byte(x >> (8 * k))
		}
		if !bytes.Equal(le[:n], enc[off:off+n]) {
			t.Fatalf("field %d: %x, canonical bytes %x", i, le[:n], enc[off:off+n])
		}
		off += n
		total += n
	}
	if total != l.Encoded {
		t.Fatalf("fields cover %d bytes, encoded size %d", total, l.Encoded)
	}
}
