package replicate_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// A desync down to the entity and field: the server dumps its state
// after sending each report tick, the client dumps its own when it
// reports (CaptureAtReports, entities under their server ids). The
// client's copy of Pos.Y is damaged after tick 2 (the server changes Pos
// no more: nothing repairs it); the server's verdict on
// tick 4 names the type, and the two dumps of tick 4 name the entity, the
// field and both values.
func ExampleClient_CaptureAtReports() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newExampleProtocol(), ChecksumInterval: 2})
	defer srv.Close()
	e := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
	_ = ecs.Register[Pos](sw).Set(e, Pos{X: 1, Y: 5})

	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newExampleProtocol(), ChecksumInterval: 2})
	defer client.Close()

	dumpsOf := func(w *ecs.World, o snapshot.DumpOptions) *snapshot.Dumps {
		reg := snapshot.NewRegistry(w)
		_ = snapshot.Copy[Pos](reg)
		return snapshot.NewDumps(reg, replicate.MaxPendingChecksums, o)
	}
	srvDumps := dumpsOf(sw, snapshot.DumpOptions{Label: "server"})
	cliDumps := dumpsOf(cw, snapshot.DumpOptions{Label: "client", Entity: client.ServerEntity})
	client.CaptureAtReports(func(t tick.Tick) { _ = cliDumps.Capture(t) })

	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx)
	for f := tick.Tick(1); f <= 4; f++ {
		srv.Receive()
		if f <= 2 { // then Pos stays as it is: nothing repairs the damage
			ecs.StoreOf[Pos](sw).Ptr(e).X++
		}
		_ = srv.SendTick(f)
		if f%2 == 0 {
			_ = srvDumps.Capture(f)
		}
		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		if f == 2 {
			ce, _ := client.ClientEntity(e)
			ecs.StoreOf[Pos](cw).Ptr(ce).Y = 6 // damaged
		}
		_ = sconn.WaitReceive(ctx)
	}
	srv.Receive()
	for _, ev := range srv.Events() {
		if ev.Kind != replicate.ClientDesync {
			continue
		}
		a, _ := srvDumps.At(ev.Tick)
		b, _ := cliDumps.At(ev.Tick)
		diffs, _ := snapshot.DiffDumps(a.Only(ev.Types), b.Only(ev.Types), 10)
		for _, d := range diffs {
			fmt.Printf("tick %d: entity %v %s: server %s, client %s\n", ev.Tick, d.Entity, d.Field, d.A, d.B)
		}
	}
	// Output:
	// tick 4: entity 0v1 .Y: server 5, client 6
}
