package replicate_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// TestReferenceToHiddenEntity: a component referring to an entity that
// becomes hidden from the client maps to none (not to the dead client
// entity), and to the entity's new client entity when it is shown again.
func TestReferenceToHiddenEntity(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	target := spawnRep(h.sw, Position{1, 1}, 1)
	holder := spawnRep(h.sw, Position{2, 2}, 2)
	_ = ecs.StoreOf[Owner](h.sw).Set(holder, Owner{E: target})
	c := h.connect(nil)
	h.converge(3, nil)
	owner := func() ecs.Entity {
		t.Helper()
		ch, ok := c.ClientEntity(holder)
		if !ok {
			t.Fatal("holder not replicated")
		}
		o, ok := ecs.StoreOf[Owner](h.cws[0]).Get(ch)
		if !ok {
			t.Fatal("holder has no Owner")
		}
		return o.E
	}
	ct, _ := c.ClientEntity(target)
	if got := owner(); got != ct {
		t.Fatalf("owner %v, want the target's client entity %v", got, ct)
	}
	if err := h.srv.SetVisible(c.ID(), target, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		h.exchange()
	}
	if _, ok := c.ClientEntity(target); ok {
		t.Fatal("hidden target still replicated")
	}
	if got := owner(); got != 0 {
		t.Fatalf("owner refers to %v (alive %v) after its target was hidden, want none", got, h.cws[0].Alive(got))
	}
	_ = h.srv.SetVisible(c.ID(), target, true)
	for i := 0; i < 3; i++ {
		h.exchange()
	}
	ct2, ok := c.ClientEntity(target)
	if !ok {
		t.Fatal("target not shown again")
	}
	if got := owner(); got != ct2 || got == 0 {
		t.Fatalf("owner %v after the target came back, want its client entity %v", got, ct2)
	}
	// Despawned on the server: the reference maps to none too.
	_ = h.sw.Despawn(target)
	for i := 0; i < 3; i++ {
		h.exchange()
	}
	if got := owner(); got != 0 {
		t.Fatalf("owner refers to %v after its target was despawned, want none", got)
	}
}
