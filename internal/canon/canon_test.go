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

func TestLayout(t *testing.T) {
	type inner struct {
		A int8
		B [2]uint16
	}
	type outer struct {
		X  float64
		In inner
		N  int
		OK bool
		C  complex64
	}
	f, err := Of(reflect.TypeFor[outer]())
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{".X", reflect.Float64, 8}, {".In.A", reflect.Int8, 1}, {".In.B[0]", reflect.Uint16, 2},
		{".In.B[1]", reflect.Uint16, 2}, {".N", reflect.Int, 8}, {".OK", reflect.Bool, 1},
		{".C.real", reflect.Float32, 4}, {".C.imag", reflect.Float32, 4},
	}
	if !reflect.DeepEqual(f.Layout(), want) {
		t.Fatalf("layout %+v\nwant   %+v", f.Layout(), want)
	}
	sum := 0
	for _, fl := range f.Layout() {
		sum += fl.Size
	}
	if sum != f.Encoded {
		t.Fatalf("field sizes sum to %d, Encoded %d", sum, f.Encoded)
	}
	g, _ := Of(reflect.TypeFor[uint32]())
	if l := g.Layout(); len(l) != 1 || l[0].Path != "" || l[0].Kind != reflect.Uint32 {
		t.Fatalf("layout of uint32: %+v", l)
	}
}
