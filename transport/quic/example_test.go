package quic_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/quic"
)

// A server listens on loopback with a development certificate, a client
// dials it, each sends the other one reliable, ordered message, and the
// server closes the conn with a reason that the client reads from Err.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// SelfSigned returns the server's certificate and a client config that
	// trusts it; in production the server gets a real certificate.
	serverTLS, clientTLS, err := quic.SelfSigned()
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := quic.Listen(ctx, "127.0.0.1:0", quic.Config{TLS: serverTLS})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()

	client, err := quic.Dial(ctx, ln.Addr().String(), quic.Config{TLS: clientTLS})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	server, err := ln.Accept(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}

	// Send queues and never blocks; Receive polls, WaitReceive waits.
	if err := client.Send(transport.ReliableOrdered, []byte("hello")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("server got:", receive1(ctx, server))
	if err := server.Send(transport.ReliableOrdered, []byte("welcome")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("client got:", receive1(ctx, client))

	server.CloseWithReason("match over")
	<-client.Done()
	fmt.Println(client.Err())
	// Output:
	// server got: hello
	// client got: welcome
	// transport: connection closed by peer: "match over"
}

// receive1 waits for the next message on c and returns it as a string.
func receive1(ctx context.Context, c transport.MessageConn) string {
	for {
		if err := c.WaitReceive(ctx); err != nil {
			return err.Error()
		}
		if _, msg, ok := c.Receive(); ok {
			return string(msg)
		}
	}
}
