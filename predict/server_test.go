package predict_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// TestServerFrame: the server simulates each tick with each client's
// input for that tick (the one the client sent, once it arrived in time)
// and forwards every client's inputs to the others, which then predict
// it with its real inputs; a tick not after the last is refused with
// replicate.ErrTick and simulates nothing.
func TestServerFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = time.Second / 60
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 5})
		defer net.Close()
		s := newFrameServer(t)
		defer s.srv.Close()
		r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 2, transport.LinkConfig{Latency: 20 * time.Millisecond}, 5)}
		r.connect(step)
		a, b := r.clients[0], r.clients[1]
		real := map[tick.Tick]FInput{} // what the server simulated a with
		for r.tick < 120 {
			r.tick++
			err := s.frame.Frame(r.tick, func(tk tick.Tick, input func(replicate.ClientID) FInput) {
				real[tk] = input(a.rc.ID())
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range r.clients {
				c.frame.Frame(step, c.input, c.sim)
			}
			time.Sleep(step)
		}
		// The server used a's own inputs after the start (ticks 80..116:
		// the client keeps its inputs for 64 ticks, and the inputs of the
		// last ticks simulated are still on their way to b).
		n := 0
		for tk := tick.Tick(80); tk <= 116; tk++ {
			own, ok := a.frame.Sender().Input(tk)
			if !ok {
				t.Fatalf("a no longer holds its input for %v", tk)
			}
			if v := real[tk]; v != own {
				t.Fatalf("tick %v: server simulated a with %v, a sent %v", tk, v, own)
			}
			// b received a's input for the tick.
			if got, ok := b.frame.Remote().Input(a.rc.ID(), tk); !ok || got != own {
				t.Fatalf("tick %v: b holds %v (%v) for a, a sent %v", tk, got, ok, own)
			}
			n++
		}
		if st := s.frame.Buffer().Stats(a.rc.ID()); st.Received < 115 || st.Missing > 5 || n != 37 {
			t.Fatalf("inputs %+v", st)
		}
		called := false
		err := s.frame.Frame(r.tick, func(tick.Tick, func(replicate.ClientID) FInput) { called = true })
		if !errors.Is(err, replicate.ErrTick) || called {
			t.Fatalf("frame of tick %v again: %v (sim called %v)", r.tick, err, called)
		}
	})
}
