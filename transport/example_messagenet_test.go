package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/transport"
)

// A server and a client on an in-memory network with 25 ms of latency each
// way and 20% loss. Reliable messages still arrive, in order; the losses
// only delay them. In tests, run the same code inside synctest.Test: it then
// uses virtual time, finishes instantly and replays exactly from the seed.
func ExampleMessageNetwork() {
	ctx := context.Background()
	n := transport.NewMessageNetwork(transport.MessageNetworkConfig{
		Seed:    1,
		Default: transport.LinkConfig{Latency: 25 * time.Millisecond, Loss: 0.2},
	})
	defer n.Close()

	ln, _ := n.Listen(netip.MustParseAddrPort("10.0.0.1:7000"))
	client, _ := n.Dial(ctx, ln.Addr()) // takes one round trip
	server, _ := ln.Accept(ctx)

	for i := range 5 {
		client.Send(transport.ReliableOrdered, fmt.Appendf(nil, "input %d", i))
	}
	for range 5 {
		server.WaitReceive(ctx)
		ch, msg, _ := server.Receive()
		fmt.Printf("%v: %s\n", ch, msg)
	}
	fmt.Println("RTT:", server.Stats().RTT)
	// Output:
	// reliable-ordered: input 0
	// reliable-ordered: input 1
	// reliable-ordered: input 2
	// reliable-ordered: input 3
	// reliable-ordered: input 4
	// RTT: 50ms
}

// A game server polls its conns once per tick: Receive never blocks, and
// Send only queues. A client that stops reading is not buffered without
// bound: its conn closes with a reason, which the server sees in Err.
func ExampleMessageConn_poll() {
	ctx := context.Background()
	n := transport.NewMessageNetwork(transport.MessageNetworkConfig{
		Limits: transport.MessageLimits{ReceiveQueueMessages: 3},
	})
	defer n.Close()
	ln, _ := n.Listen(netip.AddrPort{})
	client, _ := n.Dial(ctx, ln.Addr())
	server, _ := ln.Accept(ctx)

	for tick := range 5 {
		// Poll every message that arrived since the last tick.
		for {
			_, msg, ok := server.Receive()
			if !ok {
				break
			}
			fmt.Printf("tick %d: got %s\n", tick, msg)
		}
		// The client sent one message at tick 0; the server replies with
		// a world update every tick, which the client never reads.
		if tick == 0 {
			client.Send(transport.ReliableOrdered, []byte("hello"))
		}
		if err := server.Send(transport.ReliableOrdered, []byte("world update")); err != nil {
			var ce *transport.CloseError
			errors.As(err, &ce)
			fmt.Printf("tick %d: client dropped: %v (remote %v)\n", tick, errors.Is(err, transport.ErrReceiveOverflow), ce.Remote)
			break
		}
	}
	// Output:
	// tick 1: got hello
	// tick 4: client dropped: true (remote true)
}
