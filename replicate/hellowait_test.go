package replicate_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// TestHelloUnanswered: a client whose server never serves its connection
// (Serve or AddConn forgotten: the transport accepts it, nothing reads it)
// stays Connecting, and says why once through its logger after 10 s; a
// client the server answers says nothing.
func TestHelloUnanswered(t *testing.T) {
	for _, serve := range []bool{false, true} {
		network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
		ln, err := network.Listen(netip.AddrPort{})
		if err != nil {
			t.Fatal(err)
		}
		tp := newProto(t)
		var srv *replicate.Server
		if serve {
			srv, err = replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: tp.p})
			if err != nil {
				t.Fatal(err)
			}
		}
		now := time.Unix(1e9, 0)
		var logged bytes.Buffer
		c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: tp.p,
			Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := network.Dial(context.Background(), ln.Addr())
		if err != nil {
			t.Fatal(err)
		}
		sconn, err := ln.Accept(context.Background()) // the transport accepts it either way
		if err != nil {
			t.Fatal(err)
		}
		if serve {
			srv.AddConn(sconn)
		}
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		for range 12 { // 12 s, a second per frame
			if serve {
				srv.Receive()
				srv.Send()
			}
			now = now.Add(time.Second)
			if serve {
				_ = conn.WaitReceive(context.Background())
			}
			c.Update()
		}
		n := strings.Count(logged.String(), "no answer to the hello")
		switch {
		case !serve && (c.State() != replicate.Connecting || n != 1 || !strings.Contains(logged.String(), "Server.Serve or AddConn")):
			t.Errorf("unserved: %v, logged %q; want Connecting and one warning naming Serve", c.State(), logged.String())
		case serve && (c.State() != replicate.Connected || n != 0):
			t.Errorf("served: %v, logged %q; want Connected and no warning", c.State(), logged.String())
		}
		network.Close()
	}
}
