package quic_test

import (
	"bytes"
	"testing"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/quic"
)

// TestBatchSharesPackets: the messages of a tick sent between Hold and
// Flush (replicate.Server's SendTick) go out in one or two QUIC packets
// instead of one each, arrive whole and in order, and a burst larger than a
// datagram is split between datagrams at message boundaries.
func TestBatchSharesPackets(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{})
	c, s := connect(t, ln, ln.Addr().String(), cfg)
	var b transport.Batcher = c

	// Let the handshake's packets and acknowledgements settle.
	if err := c.Send(transport.ReliableOrdered, msg('w', 0)); err != nil {
		t.Fatal(err)
	}
	receive(t, s, func(r []rec) bool { return len(r) == 1 })

	const n = 12
	before := c.Stats().WirePacketsSent
	b.Hold()
	for i := range n {
		if err := c.Send(transport.Unreliable, msg('u', i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Send(transport.ReliableOrdered, msg('r', 0)); err != nil {
		t.Fatal(err)
	}
	b.Flush()
	got := receive(t, s, func(r []rec) bool { return len(r) == n+1 })
	var u []int
	for _, r := range got {
		if r.ch == transport.Unreliable && r.tag == 'u' {
			u = append(u, r.i)
		}
	}
	for i := range n {
		if i >= len(u) || u[i] != i {
			t.Fatalf("unreliable messages %v, want 0..%d in order", u, n-1)
		}
	}
	// One packet for the datagram, at most one more for the stream frame
	// if QUIC packed it before the datagram was queued.
	if sent := c.Stats().WirePacketsSent - before; sent > 2 {
		t.Errorf("%d messages of a tick went out in %d packets, want at most 2", n+1, sent)
	}

	// A burst larger than a datagram: three messages of 500 bytes go out
	// in two datagrams, each message whole.
	big := func(i int) []byte { return bytes.Repeat([]byte{byte('A' + i)}, 500) }
	b.Hold()
	for i := range 3 {
		if err := c.Send(transport.Unreliable, big(i)); err != nil {
			t.Fatal(err)
		}
	}
	b.Flush()
	for i := 0; i < 3; {
		if err := s.WaitReceive(t.Context()); err != nil {
			t.Fatal(err)
		}
		for ch, p, ok := s.Receive(); ok; ch, p, ok = s.Receive() {
			if ch != transport.Unreliable || !bytes.Equal(p, big(i)) {
				t.Fatalf("message %d: %v of %d bytes, want 500 bytes of %q", i, ch, len(p), rune('A'+i))
			}
			i++
		}
	}
	if st := s.Stats().Channels[transport.Unreliable]; st.Received != n+3 || st.DroppedMalformed != 0 {
		t.Errorf("receiver counted %d unreliable messages and %d malformed datagrams, want %d and 0", st.Received, st.DroppedMalformed, n+3)
	}
}
