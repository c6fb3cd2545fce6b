package canon

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"unsafe"
)

type mixed struct {
	A bool
	B int16
	C int
	D [2]float32
	E uint8
}

func TestRoundTripAndForm(t *testing.T) {
	l, err := Of(reflect.TypeFor[mixed]())
	if err != nil {
		t.Fatal(err)
	}
	if l.Encoded != 1+2+8+8+1 || l.Direct {
		t.Fatalf("encoded %d direct %v", l.Encoded, l.Direct)
	}
	v := mixed{A: true, B: -2, C: -3, D: [2]float32{1.5, -0}, E: 7}
	b := l.Append(nil, unsafe.Pointer(&v))
	want := []byte{1, 0xfe, 0xff, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 7}
	if !bytes.Equal(b, want) {
		t.Fatalf("form %x, want %x", b, want)
	}
	var w mixed
	if !l.Decode(b, unsafe.Pointer(&w)) || w != v {
		t.Fatalf("decoded %+v", w)
	}
	bad := append([]byte(nil), b...)
	bad[0] = 2
	if l.Decode(bad, unsafe.Pointer(&w)) {
		t.Fatal("bool byte 2 accepted")
	}
	if l.Decode(b[:5], unsafe.Pointer(&w)) {
		t.Fatal("short input accepted")
	}
}

func TestDirectAndRefusal(t *testing.T) {
	type pos struct{ X, Y float64 }
	l, err := Of(reflect.TypeFor[pos]())
	if err != nil || !l.Direct || l.Encoded != 16 {
		t.Fatalf("%v %+v", err, l)
	}
	type bad struct{ S []int }
	if _, err := Of(reflect.TypeFor[bad]()); !errors.Is(err, ErrNotPlain) {
		t.Fatalf("slice field: %v", err)
	}
}
