package replicate_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

func TestMutationsSplitAcrossMessages(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{NoDeltas: true}) // absolute: 300 values need 5 messages
	ents := spawnMany(h, 300)
	c := h.connect(nil)
	h.converge(3, nil)
	for i, e := range ents {
		_ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: float64(i), Y: 1})
	}
	var sizes []int
	h.hooks = &netHooks{drop: func(ch transport.Channel, m []byte) bool {
		sizes = append(sizes, len(m))
		return false
	}}
	h.exchange()
	if len(sizes) < 5 {
		t.Fatalf("300 changed positions sent in %d messages", len(sizes))
	}
	for _, s := range sizes {
		if s > transport.DefaultMaxUnreliableSize {
			t.Fatalf("message of %d bytes", s)
		}
	}
	if !c.TickComplete(h.srv.Tick()) {
		t.Fatal("tick not complete after all its messages arrived")
	}
	h.hooks = nil
	h.converge(2, nil)
	// Losing one of the split messages leaves the tick incomplete.
	for _, e := range ents {
		_ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: 5})
	}
	n := 0
	h.hooks = &netHooks{drop: func(ch transport.Channel, m []byte) bool { n++; return n == 2 }}
	h.exchange()
	if c.TickComplete(h.srv.Tick()) {
		t.Fatal("tick complete with a message lost")
	}
	h.hooks = nil
	h.converge(10, nil) // the lost values are resent after the ack timeout (~7 ticks)
}
