package replicate_test

import (
	"bytes"
	"errors"
	"testing"
	"testing/synctest"

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
