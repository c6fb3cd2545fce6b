package replicate_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// TestPredictionHooks: values routed to a receive hook with their tick, the
// tick-complete signal, confirm history, and a client-predicted spawn
// adopted by its server entity.
func TestPredictionHooks(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	var completed []tick.Tick
	cw := ecs.New()
	c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: tp.p, TickComplete: func(t tick.Tick) { completed = append(completed, t) }})
	if err != nil {
		t.Fatal(err)
	}
	se, ce := newPipe()
	h.srv.AddConn(se)
	_ = c.Connect(ce)
	h.cws, h.clients, h.srvEnds, h.cliEnds = append(h.cws, cw), append(h.clients, c), append(h.srvEnds, se), append(h.cliEnds, ce)
	e := spawnRep(h.sw, Position{1, 1}, 1)
	h.converge(3, nil)
	type hooked struct {
		t tick.Tick
		v Position
	}
	var got []hooked
	if err := replicate.SetReceiveHook(c, func(_ ecs.Entity, t tick.Tick, v Position) bool {
		got = append(got, hooked{t, v})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	_ = ecs.StoreOf[Position](h.sw).Set(e, Position{2, 2})
	h.exchange()
	cl, _ := c.ClientEntity(e)
	if len(got) != 1 || got[0].v != (Position{2, 2}) || got[0].t != h.srv.Tick() {
		t.Fatalf("hook got %+v (server tick %d)", got, h.srv.Tick())
	}
	if p, _ := ecs.StoreOf[Position](cw).Get(cl); p != (Position{1, 1}) {
		t.Fatalf("hooked value also written: %v", p)
	}
	if len(completed) == 0 || completed[len(completed)-1] != h.srv.Tick() || !c.TickComplete(h.srv.Tick()) {
		t.Fatalf("completed ticks %v, server at %d", completed, h.srv.Tick())
	}
	last, mask, ok := c.ConfirmHistory(cl)
	if !ok || last != h.srv.Tick() || mask&1 == 0 {
		t.Fatalf("confirm history %d %b %v", last, mask, ok)
	}
	// Predicted spawn: the client spawns a projectile, the server maps its
	// own projectile to it.
	predicted := cw.Spawn()
	_ = ecs.StoreOf[Health](cw).Set(predicted, Health{99})
	proj := spawnRep(h.sw, Position{5, 5}, 50)
	if err := h.srv.MapClientEntity(c.ID(), proj, predicted); err != nil {
		t.Fatal(err)
	}
	h.exchange()
	if got, _ := c.ClientEntity(proj); got != predicted {
		t.Fatalf("server projectile mapped to %v, want the predicted %v", got, predicted)
	}
	if hp, _ := ecs.StoreOf[Health](cw).Get(predicted); hp.HP != 50 {
		t.Fatalf("authoritative value not applied to the predicted entity: %v", hp)
	}
}
