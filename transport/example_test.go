package transport_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/transport"
)

// A simulated network with 20 ms of latency between two peers and a lossy
// return path. In tests, run the same code inside synctest.Test so that it
// uses virtual time: it then finishes instantly and replays exactly.
func ExamplePacketNetwork() {
	alice := netip.MustParseAddrPort("10.0.0.1:7000")
	bob := netip.MustParseAddrPort("10.0.0.2:7000")

	n := transport.NewPacketNetwork(transport.PacketNetworkConfig{
		Seed:    1,
		Default: transport.LinkConfig{Latency: 20 * time.Millisecond},
	})
	defer n.Close()
	n.SetLink(bob, alice, transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 1})

	a, _ := n.Listen(alice)
	b, _ := n.Listen(bob)

	start := time.Now()
	a.Send(bob, []byte("input for frame 1"))
	if _, p, ok := b.Receive(); !ok {
		fmt.Println("nothing yet: the datagram is in flight")
	} else {
		fmt.Printf("too early: %q\n", p)
	}

	b.WaitReceive(context.Background()) // returns once the datagram arrives
	from, p, _ := b.Receive()
	fmt.Printf("bob got %q from %v after at least 20ms: %v\n", p, from, time.Since(start) >= 20*time.Millisecond)

	b.Send(from, []byte("ack 1")) // Loss 1 on bob -> alice
	fmt.Printf("bob -> alice: %+v\n", n.LinkStats(bob, alice))
	// Output:
	// nothing yet: the datagram is in flight
	// bob got "input for frame 1" from 10.0.0.1:7000 after at least 20ms: true
	// bob -> alice: {Sent:1 SentBytes:5 Delivered:0 Lost:1 Duplicated:0 Reordered:0 DroppedDown:0 DroppedQueue:0 Unreachable:0}
}
