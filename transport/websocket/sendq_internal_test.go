package websocket

import (
	"testing"

	"github.com/rewindgo/rewind/transport"
)

// A conn whose writer is stuck (a socket backed up) keeps the newest
// UnreliableBacklog unreliable messages, counts the ones pushed out, and
// writes what it kept in Send order among the reliable ones.
func TestUnreliableBacklogKeepsTheNewest(t *testing.T) {
	cfg := Config{UnreliableBacklog: 3}.withDefaults()
	c := &Conn{cfg: cfg, lim: cfg.Limits, wake: make(chan struct{}, 1)}
	send := func(ch transport.Channel, b byte) {
		t.Helper()
		if err := c.Send(ch, []byte{b}); err != nil {
			t.Fatal(err)
		}
	}
	send(transport.Unreliable, 1)
	send(transport.ReliableOrdered, 2)
	for b := byte(3); b < 8; b++ {
		send(transport.Unreliable, b)
	}
	send(transport.ReliableUnordered, 8)
	var got []byte
	for {
		f, rel, ok := c.nextLocked()
		if !ok {
			break
		}
		if (rel >= 0) != transport.Channel(f[0]).Reliable() {
			t.Fatalf("frame %v: reliable length %d", f, rel)
		}
		got = append(got, f[1])
	}
	if string(got) != string([]byte{2, 5, 6, 7, 8}) {
		t.Fatalf("written %v, want [2 5 6 7 8]", got)
	}
	st := c.stats[transport.Unreliable]
	if st.Sent != 6 || st.DroppedSendQueue != 3 {
		t.Fatalf("unreliable stats %+v", st)
	}
}

// The reliable send queue is bounded: beyond it Send fails with
// ErrQueueFull and counts.
func TestReliableSendQueueBound(t *testing.T) {
	cfg := Config{Limits: transport.MessageLimits{SendQueueMessages: 2}}.withDefaults()
	c := &Conn{cfg: cfg, lim: cfg.Limits, wake: make(chan struct{}, 1)}
	for i := range 3 {
		err := c.Send(transport.ReliableOrdered, []byte{byte(i)})
		if (i < 2) != (err == nil) || (i == 2 && err != transport.ErrQueueFull) {
			t.Fatalf("Send %d = %v", i, err)
		}
	}
	if st := c.stats[transport.ReliableOrdered]; st.DroppedSendQueue != 1 || st.Sent != 2 {
		t.Fatalf("stats %+v", st)
	}
}
