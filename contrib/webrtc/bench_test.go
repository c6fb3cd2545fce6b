package webrtc_test

import (
	"context"
	"testing"

	"github.com/rewindgo/rewind/transport"
)

// packetConn is a PacketConn that can wait for a datagram.
type packetConn interface {
	transport.PacketConn
	WaitReceive(ctx context.Context) error
}

// benchRoundTrip sends a 64-byte datagram from a to b and receives it,
// once per iteration: the path of a rollback input packet.
func benchRoundTrip(b *testing.B, a, c packetConn) {
	payload := make([]byte, 64)
	ctx := b.Context()
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if err := a.Send(c.LocalAddr(), payload); err != nil {
			b.Fatal(err)
		}
		if err := c.WaitReceive(ctx); err != nil {
			b.Fatal(err)
		}
		if _, p, ok := c.Receive(); !ok || len(p) != len(payload) {
			b.Fatal("lost")
		}
	}
}

// BenchmarkSendReceive: one datagram over a WebRTC data channel on
// loopback (DTLS, SCTP, pion's goroutines) ...
func BenchmarkSendReceive(b *testing.B) {
	cs := dialAll(b, signalServer(b, "bench", 2), 2)
	benchRoundTrip(b, cs[0], cs[1])
}

// ... and the floor: the same over the UDP conn of package transport.
func BenchmarkSendReceiveUDP(b *testing.B) {
	ctx := b.Context()
	a, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	c, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchRoundTrip(b, a, c)
}
