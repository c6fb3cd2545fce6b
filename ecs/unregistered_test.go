package ecs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
)

type unregistered struct{ X int }

// TestStoreOfUnregistered: the Store of a type never registered is nil,
// and using it panics at once with a message that names the type and the
// fix, not with a nil dereference deep inside the World.
func TestStoreOfUnregistered(t *testing.T) {
	w := ecs.New()
	e := w.Spawn()
	s := ecs.StoreOf[unregistered](w)
	if s != nil {
		t.Fatal("StoreOf of an unregistered type is not nil")
	}
	uses := map[string]func(){
		"Set":   func() { _ = s.Set(e, unregistered{}) },
		"Get":   func() { s.Get(e) },
		"Has":   func() { s.Has(e) },
		"Ptr":   func() { s.Ptr(e) },
		"Len":   func() { s.Len() },
		"Write": func() { s.Write() },
		"Read":  func() { s.Read() },
		"All":   func() { s.All() },
	}
	for name, use := range uses {
		msg := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			use()
			return "no panic"
		}()
		if !strings.Contains(msg, "ecs_test.unregistered was never registered") || !strings.Contains(msg, "ecs.Register") {
			t.Errorf("%s on a nil Store: panic %q, want one naming the type and ecs.Register", name, msg)
		}
	}
	if r := ecs.Register[unregistered](w); r == nil || ecs.StoreOf[unregistered](w) != r {
		t.Error("after Register, StoreOf does not return its Store")
	}
}
