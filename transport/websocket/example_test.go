//go:build !js

package websocket_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/websocket"
)

// A WebSocket endpoint mounted beside a page on one HTTP server, and a
// client (a browser build dials the same way) sending on two channels.
func Example() {
	ln := websocket.NewListener(websocket.Config{})
	defer ln.Close()
	mux := http.NewServeMux()
	mux.Handle("/ws", ln)
	mux.Handle("/", http.NotFoundHandler()) // the game's page
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	client, err := websocket.Dial(ctx, websocket.WebSocketURL(srv.URL, "/ws"), websocket.Config{})
	if err != nil {
		panic(err)
	}
	server, err := ln.Accept(ctx)
	if err != nil {
		panic(err)
	}
	client.Send(transport.ReliableOrdered, []byte("spawn"))
	client.Send(transport.Unreliable, []byte("move"))
	for range 2 {
		if err := server.WaitReceive(ctx); err != nil {
			panic(err)
		}
		ch, msg, _ := server.Receive()
		fmt.Printf("%v: %s\n", ch, msg)
	}
	server.CloseWithReason("match over")
	<-client.Done()
	fmt.Println(client.Err())
	// Output:
	// reliable-ordered: spawn
	// unreliable: move
	// transport: connection closed by peer: "match over"
}
