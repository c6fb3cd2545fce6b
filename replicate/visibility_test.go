package replicate_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

func TestVisibility(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{HiddenByDefault: true})
	a := spawnRep(h.sw, Position{1, 1}, 1)
	b := spawnRep(h.sw, Position{2, 2}, 2)
	_ = ecs.StoreOf[Owner](h.sw).Set(b, Owner{E: a})
	c1 := h.connect(nil)
	c2 := h.connect(nil)
	h.exchange()
	h.exchange()
	_ = h.srv.SetVisible(c1.ID(), b, true)
	visible := func(i int) func(ecs.Entity) bool {
		return func(e ecs.Entity) bool { return i == 0 && e == b }
	}
	h.converge(2, visible)
	if c1.Entities() != 1 || c2.Entities() != 0 {
		t.Fatalf("entities %d / %d", c1.Entities(), c2.Entities())
	}
	// A reference to a hidden entity is none on the client.
	cb, _ := c1.ClientEntity(b)
	if o, _ := ecs.StoreOf[Owner](h.cws[0]).Get(cb); o.E != 0 {
		t.Fatalf("reference to a hidden entity: %v", o.E)
	}
	// Hidden while changing, then visible again: sent whole with the latest values.
	_ = h.srv.SetVisible(c1.ID(), b, false)
	h.exchange()
	_ = ecs.StoreOf[Position](h.sw).Set(b, Position{9, 9})
	h.exchange()
	if c1.Entities() != 0 {
		t.Fatal("hidden entity still on the client")
	}
	_ = h.srv.SetVisible(c1.ID(), b, true)
	h.converge(2, visible)
}
