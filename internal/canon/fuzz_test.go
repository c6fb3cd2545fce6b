package canon

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"
)

// FuzzDecode: Decode of hostile bytes never panics, and what it accepts
// re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	l, _ := Of(reflect.TypeFor[mixed]())
	f.Add(make([]byte, 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v mixed
		if l.Decode(b, unsafe.Pointer(&v)) {
			if got := l.Append(nil, unsafe.Pointer(&v)); !bytes.Equal(got, b[:l.Encoded]) {
				t.Fatalf("re-encoded %x from %x", got, b)
			}
		}
	})
}
