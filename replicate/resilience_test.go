package replicate_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

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
