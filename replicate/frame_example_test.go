package replicate_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Move is the example's client input; Scored the server's announcement.
type (
	Move   struct{ DX float32 }
	Scored struct{ Points int32 }
)

// One whole frame on each side. The client sends its input for tick F;
// the server's frame of F receives it (Receive), simulates F with it, and
// sends what changed (SendTick(F)) with a message queued during F; the
// client's frame applies that (Update), reads the message and sees tick
// F complete. The example waits for the messages instead of polling once
// per frame as a game does, so it needs no clock.
func Example_frame() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})

	// Server and client build the same protocol: a replicated component
	// and a message type each way.
	proto := func() (*replicate.Protocol, replicate.MessageType[Move], replicate.MessageType[Scored]) {
		p := newExampleProtocol()
		move, _ := replicate.RegisterMessage[Move](p, replicate.ClientToServer, transport.ReliableOrdered)
		scored, _ := replicate.RegisterMessage[Scored](p, replicate.ServerToClient, transport.ReliableOrdered)
		return p, move, scored
	}
	sp, move, scored := proto()
	cp, _, _ := proto()

	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: sp})
	defer srv.Close()
	player := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(player, replicate.Replicated{})
	positions := ecs.Register[Pos](sw)
	_ = positions.Set(player, Pos{})

	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: cp})
	defer client.Close()
	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx)
	srv.Send() // tick 1: the client is welcomed and gets the player
	for client.Entities() == 0 {
		_ = conn.WaitReceive(ctx)
		client.Update()
	}

	// The client's frame: its input for tick 2.
	_ = move.SendToServer(client, Move{DX: 1.5})

	// The server's frame of tick 2: receive, simulate, send.
	const f tick.Tick = 2
	_ = sconn.WaitReceive(ctx)
	srv.Receive()
	for _, m := range move.ReceiveFromClients(srv) {
		p, _ := positions.Get(player)
		_ = positions.Set(player, Pos{X: p.X + m.Message.DX})
		_ = scored.SendToClients(srv, replicate.All(), Scored{Points: 10})
	}
	_ = srv.SendTick(f)

	// The client's next frame: apply what arrived.
	var got []Scored
	for !client.TickComplete(f) || len(got) == 0 {
		_ = conn.WaitReceive(ctx)
		client.Update()
		got = append(got, scored.ReceiveFromServer(client)...)
	}
	ce, _ := client.ClientEntity(player)
	pos, _ := ecs.StoreOf[Pos](cw).Get(ce)
	fmt.Println("tick", f, "position", pos, "message", got[0])
	// Output:
	// tick 2 position {1.5 0} message {10}
}
