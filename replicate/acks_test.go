package replicate_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

func TestMutationsLostResentStale(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{MutationTimeout: 1})
	e := spawnRep(h.sw, Position{}, 1)
	c := h.connect(nil)
	h.converge(3, nil)
	pos := ecs.StoreOf[Position](h.sw)
	// Lose every unreliable message for a while: values are resent and converge.
	h.hooks = &netHooks{drop: func(ch transport.Channel, _ []byte) bool { return true }}
	for i := 0; i < 5; i++ {
		_ = pos.Set(e, Position{X: float64(i)})
		h.exchange()
	}
	ce, _ := c.ClientEntity(e)
	if p, _ := ecs.StoreOf[Position](h.cws[0]).Get(ce); p.X == 4 {
		t.Fatal("value arrived through a dropped channel")
	}
	h.hooks = nil
	h.converge(3, nil)
	st, _ := h.srv.Stats(c.ID())
	if st.Resent == 0 {
		t.Fatal("no resends counted")
	}
	// Stale: a mutation of an older tick delivered after a newer one is ignored.
	var held []pipeMsg
	h.hooks = &netHooks{drop: func(ch transport.Channel, m []byte) bool {
		held = append(held, pipeMsg{ch: ch, data: append([]byte(nil), m...)})
		return true
	}}
	_ = pos.Set(e, Position{X: 100})
	h.exchange() // tick with X=100 captured
	h.hooks = nil
	_ = pos.Set(e, Position{X: 200})
	h.exchange()
	h.exchange()
	h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, held...) // the old one arrives late
	h.clients[0].Update()
	if p, _ := ecs.StoreOf[Position](h.cws[0]).Get(ce); p.X != 200 {
		t.Fatalf("stale value applied: %v", p.X)
	}
	if c.Stats().Stale == 0 {
		t.Fatal("stale mutation not counted")
	}
}
