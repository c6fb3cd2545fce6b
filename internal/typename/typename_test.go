package typename_test

import (
	"reflect"
	"testing"

	"github.com/rewindgo/rewind/internal/typename"
)

type position struct{ X, Y int32 }

// Names are part of protocol hashes and checksum part names, so they must
// not change: package path and name for named types, the type's string for
// the others.
func TestOf(t *testing.T) {
	cases := []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[position](), "github.com/rewindgo/rewind/internal/typename_test.position"},
		{reflect.TypeFor[int32](), "int32"},
		{reflect.TypeFor[[]byte](), "[]uint8"},
		{reflect.TypeFor[[2]position](), "[2]typename_test.position"},
		{reflect.TypeFor[struct{ A int }](), "struct { A int }"},
	}
	for _, c := range cases {
		if got := typename.Of(c.t); got != c.want {
			t.Errorf("Of(%v) = %q, want %q", c.t, got, c.want)
		}
	}
}
