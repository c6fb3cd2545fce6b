package transport_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/rewindgo/rewind/transport"
)

// BenchmarkMemSendReceive measures one 64-byte message from client to
// server per op on a perfect in-memory link.
func BenchmarkMemSendReceive(b *testing.B) {
	for _, ch := range []transport.Channel{transport.ReliableOrdered, transport.Unreliable} {
		b.Run(ch.String(), func(b *testing.B) {
			n := transport.NewMessageNetwork(transport.MessageNetworkConfig{})
			defer n.Close()
			ln, _ := n.Listen(netip.MustParseAddrPort("10.0.0.1:7000"))
			c, err := n.Dial(context.Background(), ln.Addr())
			if err != nil {
				b.Fatal(err)
			}
			s, _ := ln.Accept(context.Background())
			msg := make([]byte, 64)
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if err := c.Send(ch, msg); err != nil {
					b.Fatal(err)
				}
				if _, _, ok := s.Receive(); !ok {
					b.Fatal("nothing received")
				}
			}
		})
	}
}
