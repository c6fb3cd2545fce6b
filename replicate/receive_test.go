package replicate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// silentConn hands the server a connection that never says hello and
// returns the client's end.
func (h *harness) silentConn() *pipeEnd {
	se, ce := newPipe()
	h.srv.AddConn(se)
	return ce
}

// TestSilentConnectionsDoNotFillServer: connections that never say hello
// hold no client slot. With MaxClients 4, three silent connections arriving
// every tick (180 a second, more than MaxPending 8 within a hello timeout:
// the oldest make room, the rest time out) do not stop 4 honest clients,
// which arrive among them, from connecting; a fifth honest client is
// refused as full (MaxClients still holds); and every silent connection is
// closed.
func TestSilentConnectionsDoNotFillServer(t *testing.T) {
	h := newHarness(t, newProto(t), replicate.ServerConfig{MaxClients: 4, MaxPending: 8, HelloTimeout: 2 * time.Second})
	var silent []*pipeEnd
	flood := func(ticks int) {
		for range ticks {
			for range 3 {
				silent = append(silent, h.silentConn())
			}
			h.exchange()
		}
	}
	flood(30)
	for range 4 {
		h.connect(nil)
		flood(10)
	}
	for i, c := range h.clients {
		if c.State() != replicate.Connected {
			t.Fatalf("honest client %d: %v, %v", i, c.State(), c.Err())
		}
	}
	extra := h.connect(nil)
	flood(5)
	if extra.State() != replicate.Disconnected || !errors.Is(extra.Err(), replicate.ErrRejected) || !strings.Contains(extra.Err().Error(), "server full") {
		t.Fatalf("fifth client with MaxClients 4: %v, %v", extra.State(), extra.Err())
	}
	for range 3 * 60 {
		h.exchange()
	}
	for i, s := range silent {
		if s.err == nil {
			t.Fatalf("silent connection %d of %d still open", i, len(silent))
		}
	}
	if got := len(h.srv.Clients()); got != 4 {
		t.Fatalf("%d clients connected, want the 4 honest ones", got)
	}
}

// TestHelloDeadline: a connection that says nothing is closed when its
// hello deadline passes (virtual time), with a hello-timeout rejection,
// not a tick before; one that says hello in time is connected.
func TestHelloDeadline(t *testing.T) {
	h := newHarness(t, newProto(t), replicate.ServerConfig{HelloTimeout: time.Second})
	quiet := h.silentConn()
	h.exchange() // the server takes the connection at this tick
	accepted := h.now
	h.srv.Events()
	for quiet.err == nil {
		if h.now.Sub(accepted) > 2*time.Second {
			t.Fatal("silent connection still open 2 s after a 1 s hello timeout")
		}
		h.exchange()
	}
	// The server's tick at h.now closed it: the first tick 1 s or more
	// after the connection arrived.
	if d := h.now.Sub(accepted); d < time.Second || d >= time.Second+time.Second/60 {
		t.Fatalf("closed %v after it connected, want at the first tick from 1 s", d)
	}
	if !strings.Contains(quiet.err.Error(), "hello timeout") {
		t.Fatalf("close reason %v, want a hello timeout", quiet.err)
	}
	var rejected []replicate.ServerEvent
	for _, ev := range h.srv.Events() {
		if ev.Kind == replicate.ClientRejected {
			rejected = append(rejected, ev)
		}
	}
	if len(rejected) != 1 || !strings.Contains(rejected[0].Reason, "hello timeout") {
		t.Fatalf("events %+v, want one rejection for the hello timeout", rejected)
	}
	c := h.connect(nil)
	for range 3 {
		h.exchange()
	}
	if c.State() != replicate.Connected {
		t.Fatalf("honest client: %v, %v", c.State(), c.Err())
	}
}

// TestClientQuotasIndependent: each client has its own quota. 16 clients
// sending 240 chat messages every tick (with their acks, within the 256
// MaxMessagesPerTick), and one
// flooding 2000 a tick, cost a quiet client nothing: every one of its
// messages reaches the game the tick after it was sent, nobody commits a
// violation or is disconnected, and the flooder gets at most its quota
// read per tick (the rest waits in its connection, in order).
func TestClientQuotasIndependent(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	const busy, ticks = 16, 20
	for range busy + 2 {
		h.connect(nil)
	}
	for range 3 {
		h.exchange()
	}
	// The quiet client connected last: the server reads it after the others.
	flooder, quiet := h.clients[busy], h.clients[busy+1]
	next := map[replicate.ClientID]int32{}
	sentBy := map[replicate.ClientID]int{}
	read := func() map[replicate.ClientID]int {
		got := map[replicate.ClientID]int{}
		for _, m := range tp.chat.ReceiveFromClients(h.srv) {
			if m.Message.Seq != next[m.Client] {
				t.Fatalf("client %d: message %d, want %d", m.Client, m.Message.Seq, next[m.Client])
			}
			next[m.Client]++
			got[m.Client]++
		}
		return got
	}
	for k := range ticks {
		for _, c := range h.clients[:busy] {
			sendChats(t, tp, c, sentBy, 240) // with acks, within the 256 a tick
		}
		sendChats(t, tp, quiet, sentBy, 3)
		sendChats(t, tp, flooder, sentBy, 2000)
		h.exchange()
		got := read()
		if k > 0 && got[quiet.ID()] != 3 {
			t.Fatalf("tick %d: %d messages of the quiet client read, want the 3 it sent a tick before", k, got[quiet.ID()])
		}
		if got[flooder.ID()] > replicate.DefaultMaxMessagesPerTick {
			t.Fatalf("tick %d: %d messages of the flooder read", k, got[flooder.ID()])
		}
	}
	h.exchange()
	read()
	for i, c := range h.clients {
		st, err := h.srv.Stats(c.ID())
		if err != nil || st.Violations != 0 || c.State() != replicate.Connected {
			t.Fatalf("client %d: %v, %d violations, %v", i, c.State(), st.Violations, err)
		}
		if c != flooder && int(next[c.ID()]) != sentBy[c.ID()] {
			t.Fatalf("client %d: %d of its %d messages read", i, next[c.ID()], sentBy[c.ID()])
		}
	}
	// Read at ticks 1..ticks (what a client sends arrives the next tick),
	// its quota each time less a few acks.
	if n := next[flooder.ID()]; n < ticks*(replicate.DefaultMaxMessagesPerTick-4) || n > ticks*replicate.DefaultMaxMessagesPerTick {
		t.Fatalf("flooder: %d messages read in %d ticks, want its quota of each", n, ticks)
	}
}

// sendChats sends n chat messages from c, numbered on from sent[c.ID()].
func sendChats(t *testing.T, tp testProto, c *replicate.Client, sent map[replicate.ClientID]int, n int) {
	t.Helper()
	for range n {
		if err := tp.chat.SendToServer(c, Chat{Seq: int32(sent[c.ID()])}); err != nil {
			t.Fatal(err)
		}
		sent[c.ID()]++
	}
}

// TestClientByteQuota: MaxBytesPerTick bounds what is read from a client
// per tick and what of it waits in the inboxes while the game does not
// read; the rest waits in the connection and arrives later, in order.
func TestClientByteQuota(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{MaxBytesPerTick: 100})
	c := h.connect(nil)
	for range 3 {
		h.exchange()
	}
	sent := map[replicate.ClientID]int{}
	var seqs []int32
	for k := range 100 {
		if k < 5 {
			sendChats(t, tp, c, sent, 20) // 22 bytes each on the wire
		}
		h.exchange()
		if k%4 != 3 {
			continue // the game reads every fourth tick
		}
		got := tp.chat.ReceiveFromClients(h.srv)
		// The message that crosses 100 bytes is still taken: 5 of 22.
		if len(got) > 5 {
			t.Fatalf("tick %d: %d messages waiting, over the 100-byte quota", k, len(got))
		}
		for _, m := range got {
			seqs = append(seqs, m.Message.Seq)
		}
	}
	if !isSeq(seqs, 100) {
		t.Fatalf("messages read: %v, want 0..99 in order", seqs)
	}
	if st, _ := h.srv.Stats(c.ID()); st.Violations != 0 || c.State() != replicate.Connected {
		t.Fatalf("client %v with %d violations", c.State(), st.Violations)
	}
}

func TestProtocolMismatchAndAuth(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{Authenticate: func(id replicate.ClientID, token []byte) error {
		if string(token) != "secret" {
			return errors.New("bad token")
		}
		return nil
	}})
	spawnRep(h.sw, Position{}, 1)
	// Another protocol: one more component.
	other := newProto(t)
	h.proto = other.p
	type Extra struct{ A int8 }
	_, _ = replicate.Component[Extra](other.p, replicate.WithOwnRule())
	bad := h.connect([]byte("secret"))
	h.proto = tp.p
	wrongToken := h.connect([]byte("guess"))
	good := h.connect([]byte("secret"))
	for i := 0; i < 4; i++ {
		h.exchange()
	}
	if !errors.Is(bad.Err(), replicate.ErrProtocolMismatch) || bad.State() != replicate.Disconnected {
		t.Fatalf("mismatched client: %v %v", bad.State(), bad.Err())
	}
	// Said once, with both hashes and what differs: the client has one
	// more component than the server.
	want := fmt.Sprintf("replicate: protocol mismatch: client %016x, server %016x: this client registers component %s, which the server does not",
		other.p.Hash(), tp.p.Hash(), "github.com/rewindgo/rewind/replicate_test.Extra")
	if msg := bad.Err().Error(); msg != want {
		t.Errorf("mismatched client's error\n%q, want\n%q", msg, want)
	}
	if !errors.Is(wrongToken.Err(), replicate.ErrRejected) || wrongToken.Entities() != 0 {
		t.Fatalf("wrong token: %v, %d entities", wrongToken.Err(), wrongToken.Entities())
	}
	if good.State() != replicate.Connected || good.Entities() != 1 {
		t.Fatalf("good client %v with %d entities", good.State(), good.Entities())
	}
	rejected := 0
	for _, ev := range h.srv.Events() {
		if ev.Kind == replicate.ClientRejected {
			rejected++
		}
	}
	if rejected != 2 {
		t.Fatalf("%d rejections", rejected)
	}
}

func TestHostileClient(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{MaxViolations: 10})
	hidden := spawnRep(h.sw, Position{}, 1)
	good := h.connect(nil)
	evil := h.connect(nil)
	h.converge(3, nil)
	end := h.cliEnds[1]
	// Garbage, unknown kinds, bad messages, a reference to an unknown entity.
	for i := 0; i < 20; i++ {
		_ = end.Send(transport.ReliableOrdered, []byte{3, 99})
		_ = end.Send(transport.ReliableOrdered, []byte{byte(i), 0xff, 0xff})
		_ = end.Send(transport.Unreliable, []byte{2, 200})
	}
	_ = tp.target.SendToServer(evil, Target{E: ecs.NewEntity(500, 1)})
	_ = hidden
	h.exchange()
	h.exchange()
	if evil.State() != replicate.Disconnected {
		t.Fatal("misbehaving client still connected")
	}
	if got := tp.target.ReceiveFromClients(h.srv); len(got) != 0 {
		t.Fatalf("bad reference delivered: %v", got)
	}
	_ = ecs.StoreOf[Position](h.sw).Set(hidden, Position{3, 3})
	h.exchange()
	h.exchange()
	if good.State() != replicate.Connected {
		t.Fatal("well-behaved client hurt")
	}
	gv := clientView(good, h.cws[0])
	if d := diffViews(serverView(h, nil), gv); d != "" {
		t.Fatal(d)
	}
}
