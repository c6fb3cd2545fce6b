package replicate_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

func TestMessagesBothWays(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	e := spawnRep(h.sw, Position{}, 1)
	c1 := h.connect(nil)
	c2 := h.connect(nil)
	h.converge(3, nil)
	for i := int32(0); i < 5; i++ {
		if err := tp.chat.SendToServer(c1, Chat{Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	ce, _ := c1.ClientEntity(e)
	_ = tp.target.SendToServer(c1, Target{E: ce})
	h.exchange()
	h.exchange()
	got := tp.chat.ReceiveFromClients(h.srv)
	if len(got) != 5 || got[4].Message.Seq != 4 || got[0].Client != c1.ID() {
		t.Fatalf("server got %+v", got)
	}
	tg := tp.target.ReceiveFromClients(h.srv)
	if len(tg) != 1 || tg[0].Message.E != e {
		t.Fatalf("mapped client message %+v, want server entity %v", tg, e)
	}
	// Server -> clients with targets.
	_ = tp.notice.SendToClients(h.srv, replicate.All(), Notice{1})
	_ = tp.notice.SendToClients(h.srv, replicate.AllExcept(c1.ID()), Notice{2})
	_ = tp.notice.SendToClients(h.srv, replicate.Single(c1.ID()), Notice{3})
	h.exchange()
	n1, n2 := tp.notice.ReceiveFromServer(c1), tp.notice.ReceiveFromServer(c2)
	if len(n1) != 2 || n1[0].Seq != 1 || n1[1].Seq != 3 || len(n2) != 2 || n2[1].Seq != 2 {
		t.Fatalf("client messages %v / %v", n1, n2)
	}
	// A message sent in the tick an entity spawns is held until the spawn
	// (its update) has been applied, unless independent.
	h.hooks = &netHooks{rnd: rand.New(rand.NewPCG(1, 1)), relDelay: 0}
	e2 := spawnRep(h.sw, Position{7, 7}, 7)
	_ = tp.notice.SendToClients(h.srv, replicate.All(), Notice{4})
	_ = tp.indep.SendToClients(h.srv, replicate.All(), Health{5})
	h.srv.Send()
	// Deliver the message before the update by reordering the server's outbox.
	out := h.srvEnds[0].outbox
	var msgs, rest []pipeMsg
	for _, m := range out {
		if m.data[0] == 14 {
			msgs = append(msgs, m)
		} else {
			rest = append(rest, m)
		}
	}
	h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, msgs...)
	h.srvEnds[0].outbox = rest
	c1.Update()
	if n := tp.notice.ReceiveFromServer(c1); len(n) != 0 {
		t.Fatalf("message delivered before its update: %v", n)
	}
	if n := tp.indep.ReceiveFromServer(c1); len(n) != 1 {
		t.Fatalf("independent message held: %v", n)
	}
	h.srvEnds[0].flow(nil)
	c1.Update()
	if _, ok := c1.ClientEntity(e2); !ok {
		t.Fatal("spawn not applied")
	}
	if n := tp.notice.ReceiveFromServer(c1); len(n) != 1 || n[0].Seq != 4 {
		t.Fatalf("held message after its update: %v", n)
	}
}

// TestClientMessageNoneReference: a client message whose entity reference
// is empty (the zero Entity) is valid data, delivered as none; it is no
// violation however often it is sent.
func TestClientMessageNoneReference(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{MaxViolations: 4})
	e := spawnRep(h.sw, Position{}, 1)
	c := h.connect(nil)
	h.converge(3, nil)
	ce, _ := c.ClientEntity(e)
	for i := 0; i < 20; i++ {
		if err := tp.target.SendToServer(c, Target{E: 0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.target.SendToServer(c, Target{E: ce}); err != nil {
		t.Fatal(err)
	}
	h.exchange()
	h.exchange()
	if c.State() != replicate.Connected {
		t.Fatalf("client disconnected for empty references: %v", c.Err())
	}
	st, err := h.srv.Stats(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if st.Violations != 0 {
		t.Fatalf("%d violations counted for empty references", st.Violations)
	}
	got := tp.target.ReceiveFromClients(h.srv)
	if len(got) != 21 {
		t.Fatalf("%d messages delivered, want 21", len(got))
	}
	for _, m := range got[:20] {
		if m.Message.E != 0 {
			t.Fatalf("empty reference delivered as %v", m.Message.E)
		}
	}
	if got[20].Message.E != e {
		t.Fatalf("reference delivered as %v, want server entity %v", got[20].Message.E, e)
	}
}

// TestOversizeServerMessageRefused: a server message that does not fit the
// message size limit (1 MiB on the reliable channels, the conns' datagram
// size on Unreliable) is refused by SendToClients with an error matching
// replicate.ErrTooLarge and transport.ErrTooLarge, and disconnects nobody:
// the clients stay connected and receive the messages that fit, exactly
// once.
func TestOversizeServerMessageRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMemRig(t, 1, replicate.ServerConfig{})
		defer r.close()
		r.connect(3, transport.LinkConfig{})
		r.srv.Events()

		big := Blob(bytes.Repeat([]byte{'x'}, transport.DefaultMaxMessageSize))
		err := r.tp.blob.SendToClients(r.srv, replicate.All(), big)
		var se *transport.SizeError
		if !errors.Is(err, replicate.ErrTooLarge) || !errors.Is(err, transport.ErrTooLarge) || !errors.As(err, &se) ||
			se.Channel != transport.ReliableOrdered || se.Limit != transport.DefaultMaxMessageSize || se.Size <= se.Limit {
			t.Fatalf("SendToClients(1 MiB payload) = %v, want a size error over the 1 MiB limit", err)
		}
		bigU := BlobU(bytes.Repeat([]byte{'u'}, transport.DefaultMaxUnreliableSize))
		if err := r.tp.blobU.SendToClients(r.srv, replicate.Single(r.clients[1].ID()), bigU); !errors.Is(err, replicate.ErrTooLarge) || !errors.As(err, &se) || se.Channel != transport.Unreliable {
			t.Fatalf("SendToClients(unreliable, %d bytes) = %v, want a size error", len(bigU), err)
		}
		fits := Blob(bytes.Repeat([]byte{'y'}, transport.DefaultMaxMessageSize-64))
		if err := r.tp.blob.SendToClients(r.srv, replicate.All(), fits); err != nil {
			t.Fatalf("SendToClients(a message that fits) = %v", err)
		}
		got := make([]int, len(r.clients))
		for range 60 {
			r.step()
			for i, c := range r.clients {
				for _, m := range r.tp.blob.ReceiveFromServer(c) {
					if !bytes.Equal(m, fits) {
						t.Fatalf("client %d received a message of %d bytes, want the %d that fit", i, len(m), len(fits))
					}
					got[i]++
				}
			}
		}
		for _, ev := range r.srv.Events() {
			if ev.Kind == replicate.ClientDisconnected {
				t.Fatalf("client %d disconnected: %s", ev.Client, ev.Reason)
			}
		}
		for i, c := range r.clients {
			if c.State() != replicate.Connected || got[i] != 1 {
				t.Fatalf("client %d: state %v, %d messages received; want connected with the one that fit", i, c.State(), got[i])
			}
		}
	})
}
