package replicate_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport/quic"
)

// TestQUICEndToEnd runs a server and two clients over real QUIC on
// loopback: connection and protocol check (a client with another protocol
// is refused), spawns, inserts, removals, value changes, entity references
// and despawns replicate and converge, typed messages travel both ways
// exactly once and in order, and cancelling the context shuts everything
// down with no goroutine left behind.
func TestQUICEndToEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srvTLS, cliTLS, err := quic.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := quic.Listen(ctx, "127.0.0.1:0", quic.Config{TLS: srvTLS})
	if err != nil {
		t.Fatal(err)
	}
	tp := newProto(t)
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: tp.p})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	// Each client builds its own protocol with the same registration code.
	dial := func(p *replicate.Protocol) (*replicate.Client, *ecs.World) {
		t.Helper()
		dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
		defer dcancel()
		conn, err := quic.Dial(dctx, ln.Addr().String(), quic.Config{TLS: cliTLS})
		if err != nil {
			t.Fatal(err)
		}
		cw := ecs.New()
		c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: p})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, cw
	}
	var clients []*replicate.Client
	var cws []*ecs.World
	for range 2 {
		c, cw := dial(newProto(t).p)
		clients, cws = append(clients, c), append(cws, cw)
	}
	other := newProto(t)
	if err := other.p.AddCustom("another game"); err != nil {
		t.Fatal(err)
	}
	bad, _ := dial(other.p)

	step := func() {
		srv.Send()
		for _, c := range append(slices.Clip(clients), bad) {
			c.Update()
		}
	}
	// poll ticks until cond holds, at most 10 seconds.
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			step()
			time.Sleep(2 * time.Millisecond)
		}
	}
	converged := func() bool {
		for i, c := range clients {
			if diffViews(serverView(&harness{sw: sw}, nil), clientView(c, cws[i])) != "" {
				return false
			}
		}
		return true
	}

	poll("the clients to connect", func() bool {
		return clients[0].State() == replicate.Connected && clients[1].State() == replicate.Connected
	})
	poll("the other protocol to be refused", func() bool { return bad.State() == replicate.Disconnected })
	if !errors.Is(bad.Err(), replicate.ErrProtocolMismatch) {
		t.Fatalf("client with another protocol: %v", bad.Err())
	}
	rejected := 0
	for _, ev := range srv.Events() {
		if ev.Kind == replicate.ClientRejected {
			rejected++
		}
	}
	if rejected != 1 || len(srv.Clients()) != 2 {
		t.Fatalf("%d rejections, clients %v", rejected, srv.Clients())
	}

	// Spawns with references.
	var ents []ecs.Entity
	for i := range 40 {
		ents = append(ents, spawnRep(sw, Position{X: float64(i)}, int32(i)))
	}
	own, pos, hp := ecs.StoreOf[Owner](sw), ecs.StoreOf[Position](sw), ecs.StoreOf[Health](sw)
	for i, e := range ents {
		if i%3 == 0 {
			_ = own.Set(e, Owner{E: ents[(i+7)%len(ents)]})
		}
	}
	poll("the spawns to replicate", converged)
	if clients[0].Entities() != 40 || clients[1].Entities() != 40 {
		t.Fatalf("%d and %d entities", clients[0].Entities(), clients[1].Entities())
	}
	// Value changes, inserts, removals and despawns, over a few ticks.
	for k := range 30 {
		for i, e := range ents {
			if (i+k)%4 == 0 {
				_ = pos.Set(e, Position{X: float64(k), Y: float64(i)})
			}
		}
		switch {
		case k == 5:
			_ = hp.Remove(ents[1])
			_ = own.Remove(ents[0])
		case k == 10:
			_ = hp.Set(ents[1], Health{99})
			_ = sw.Despawn(ents[10]) // ents[3] refers to it
		case k == 15:
			ents = append(ents, spawnRep(sw, Position{X: -1}, -1))
			_ = own.Set(ents[len(ents)-1], Owner{E: ents[2]})
		}
		step()
	}
	poll("the changes to replicate", converged)
	if clients[0].Entities() != 40 {
		t.Fatalf("%d entities after a despawn and a spawn", clients[0].Entities())
	}

	// Messages both ways.
	const n = 20
	for i := range int32(n) {
		if err := tp.notice.SendToClients(srv, replicate.All(), Notice{i}); err != nil {
			t.Fatal(err)
		}
		if err := tp.indep.SendToClients(srv, replicate.All(), Health{i}); err != nil {
			t.Fatal(err)
		}
		for _, c := range clients {
			if err := tp.chat.SendToServer(c, Chat{Seq: i}); err != nil {
				t.Fatal(err)
			}
		}
		if i%5 == 0 {
			step()
		}
	}
	ce, _ := clients[1].ClientEntity(ents[3])
	if err := tp.target.SendToServer(clients[1], Target{E: ce}); err != nil {
		t.Fatal(err)
	}
	notices := make([][]int32, len(clients))
	indeps := make([][]int32, len(clients))
	chats := map[replicate.ClientID][]int32{}
	var targets []replicate.FromClient[Target]
	poll("the messages", func() bool {
		done := len(targets) == 1
		for i, c := range clients {
			for _, m := range tp.notice.ReceiveFromServer(c) {
				notices[i] = append(notices[i], m.Seq)
			}
			for _, m := range tp.indep.ReceiveFromServer(c) {
				indeps[i] = append(indeps[i], m.HP)
			}
			done = done && len(notices[i]) >= n && len(indeps[i]) >= n && len(chats[c.ID()]) >= n
		}
		for _, m := range tp.chat.ReceiveFromClients(srv) {
			chats[m.Client] = append(chats[m.Client], m.Message.Seq)
		}
		targets = append(targets, tp.target.ReceiveFromClients(srv)...)
		return done
	})
	for range 10 { // anything extra (a duplicate) would arrive now
		step()
	}
	for i, c := range clients {
		notices[i] = append(notices[i], slicesOf(tp.notice.ReceiveFromServer(c), func(m Notice) int32 { return m.Seq })...)
		indeps[i] = append(indeps[i], slicesOf(tp.indep.ReceiveFromServer(c), func(m Health) int32 { return m.HP })...)
		slices.Sort(indeps[i])
		if !isSeq(notices[i], n) || !isSeq(indeps[i], n) {
			t.Errorf("client %d: notices %v, independent %v", i, notices[i], indeps[i])
		}
	}
	for _, m := range tp.chat.ReceiveFromClients(srv) {
		chats[m.Client] = append(chats[m.Client], m.Message.Seq)
	}
	for i, c := range clients {
		if !isSeq(chats[c.ID()], n) {
			t.Errorf("chats of client %d: %v", i, chats[c.ID()])
		}
	}
	if len(targets) != 1 || targets[0].Client != clients[1].ID() || targets[0].Message.E != ents[3] {
		t.Errorf("target messages %+v, want one from client %d naming %v", targets, clients[1].ID(), ents[3])
	}
	for _, c := range clients {
		st, err := srv.Stats(c.ID())
		if err != nil {
			t.Fatal(err)
		}
		if st.RTT <= 0 || st.BytesOut == 0 || st.BytesIn == 0 || st.Entities != 40 || st.Violations != 0 {
			t.Errorf("client %d stats %+v", c.ID(), st)
		}
	}

	// Shut down by cancelling the context: the listener closes its conns,
	// the clients notice, the accept loop ends, and every goroutine exits.
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the context was cancelled")
	}
	poll("the clients to notice the shutdown", func() bool {
		return clients[0].State() == replicate.Disconnected && clients[1].State() == replicate.Disconnected
	})
	for i, c := range clients {
		if c.Entities() != 0 || cws[i].Len() != 0 {
			t.Errorf("client %d kept %d entities (%d in its world) after the disconnect", i, c.Entities(), cws[i].Len())
		}
	}
	srv.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slicesOf maps a slice.
func slicesOf[T, U any](s []T, f func(T) U) []U {
	out := make([]U, 0, len(s))
	for _, v := range s {
		out = append(out, f(v))
	}
	return out
}
