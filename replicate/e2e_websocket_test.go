package replicate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/quic"
	"github.com/rewindgo/rewind/transport/websocket"
)

// TestQUICAndWebSocketClientsOfOneServer serves one replication server
// on two listeners at once, QUIC and a WebSocket endpoint mounted on an
// HTTP server (Serve is called once per listener), and replicates the
// same world to a client of each: spawns, value changes, removals and
// despawns converge on both, and typed messages travel both ways.
func TestQUICAndWebSocketClientsOfOneServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srvTLS, cliTLS, err := quic.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	qln, err := quic.Listen(ctx, "127.0.0.1:0", quic.Config{TLS: srvTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer qln.Close()
	wln := websocket.NewListener(websocket.Config{})
	defer wln.Close()
	mux := http.NewServeMux()
	mux.Handle("/ws", wln)
	hs := httptest.NewServer(mux)
	defer hs.Close()

	tp := newProto(t)
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: tp.p})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	served := make(chan error, 2)
	go func() { served <- srv.Serve(ctx, qln) }()
	go func() { served <- srv.Serve(ctx, wln) }()

	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	qconn, err := quic.Dial(dctx, qln.Addr().String(), quic.Config{TLS: cliTLS})
	if err != nil {
		t.Fatal(err)
	}
	wconn, err := websocket.Dial(dctx, websocket.WebSocketURL(hs.URL, "/ws"), websocket.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var clients []*replicate.Client
	var worlds []*ecs.World
	for _, conn := range []transport.MessageConn{qconn, wconn} {
		cp := newProto(t)
		cw := ecs.New()
		c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: cp.p})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients, worlds = append(clients, c), append(worlds, cw)
	}
	step := func() {
		srv.Send()
		for _, c := range clients {
			c.Update()
		}
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			step()
			time.Sleep(2 * time.Millisecond) // real sockets: let the network run
		}
	}
	converged := func() bool {
		for i, c := range clients {
			if diffViews(serverView(&harness{sw: sw}, nil), clientView(c, worlds[i])) != "" {
				return false
			}
		}
		return true
	}
	poll("both clients to connect", func() bool {
		return clients[0].State() == replicate.Connected && clients[1].State() == replicate.Connected
	})
	if n := len(srv.Clients()); n != 2 {
		t.Fatalf("%d clients", n)
	}

	var ents []ecs.Entity
	for i := range 30 {
		ents = append(ents, spawnRep(sw, Position{X: float64(i)}, int32(i)))
	}
	poll("the spawns to replicate", converged)
	pos, hp := ecs.StoreOf[Position](sw), ecs.StoreOf[Health](sw)
	for k := range 20 {
		for i, e := range ents {
			if (i+k)%3 == 0 {
				_ = pos.Set(e, Position{X: float64(k), Y: float64(i)})
			}
		}
		if k == 7 {
			_ = hp.Remove(ents[2])
			_ = sw.Despawn(ents[5])
		}
		step()
	}
	poll("the changes to replicate", converged)

	// Messages: server to both clients, and from each client.
	if err := tp.notice.SendToClients(srv, replicate.All(), Notice{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		if err := tp.chat.SendToServer(c, Chat{Seq: int32(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var fromClients int
	got := make([]int, 2)
	poll("the messages", func() bool {
		fromClients += len(tp.chat.ReceiveFromClients(srv))
		for i, c := range clients {
			got[i] += len(tp.notice.ReceiveFromServer(c))
		}
		return fromClients == 2 && got[0] == 1 && got[1] == 1
	})
	cancel()
	for range 2 {
		if err := <-served; err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
}
