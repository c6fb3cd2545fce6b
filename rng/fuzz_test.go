package rng

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzUnmarshalBinary: a state decoded from hostile bytes is refused with
// ErrBadState or encodes back to exactly those bytes.
func FuzzUnmarshalBinary(f *testing.F) {
	r12 := New(1, 2)
	good, _ := r12.MarshalBinary()
	f.Add(good)
	f.Add([]byte("rng1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Rand
		if err := r.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrBadState) {
				t.Fatalf("error %v does not wrap ErrBadState", err)
			}
			return
		}
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("UnmarshalBinary(%x) then MarshalBinary gives %x", data, b)
		}
	})
}
