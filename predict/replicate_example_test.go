package predict_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// A predicting client of a replication server: Attach and
// AttachComponent route what replication receives into the Timeline,
// which rolls back when the server's values differ from the prediction.
// Server and client run the same simulation (ships move by their
// velocity); the server pushes the ship at tick 5, which the client, 3
// ticks ahead, could not predict. A game polls both once per tick; this
// example waits for each server tick to reach the client instead, so it
// needs no clock.
func ExampleAttach() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	newProtocol := func() *replicate.Protocol {
		p := replicate.NewProtocol()
		_, _ = replicate.Component[RPos](p, replicate.WithOwnRule())
		_, _ = replicate.Component[RVel](p, replicate.WithOwnRule())
		return p
	}
	move := func(w *ecs.World) func(tick.Tick) {
		q := ecs.NewQuery2(ecs.Register[RPos](w).Write(), ecs.Register[RVel](w).Read())
		return func(tick.Tick) {
			for _, r := range q.All() {
				r.A.X += r.B.X
			}
		}
	}

	// The server simulates its world; its ticks are the replication ticks.
	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newProtocol()})
	defer srv.Close()
	serverSim := move(sw)

	// The client predicts RPos and RVel on a Timeline over its world.
	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProtocol()})
	defer client.Close()
	tl := predict.New(cw, 0, predict.Config{Window: 16})
	pos, _ := predict.Register[RPos](tl)
	vel, _ := predict.Register[RVel](tl)
	predict.Attach(client, tl) // despawns and complete ticks
	_ = predict.AttachComponent(client, pos)
	_ = predict.AttachComponent(client, vel)
	clientSim := move(cw)

	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx) // the hello
	for range 3 {
		tl.Step(clientSim) // the client runs 3 ticks ahead
	}

	var ship ecs.Entity
	for f := tick.Tick(1); f <= 8; f++ {
		// Server frame: receive phase, simulation of f, send phase.
		srv.Receive()
		serverSim(f)
		switch f {
		case 1:
			ship = sw.Spawn()
			_ = ecs.Register[replicate.Replicated](sw).Set(ship, replicate.Replicated{})
			_ = ecs.StoreOf[RPos](sw).Set(ship, RPos{X: 0})
			_ = ecs.StoreOf[RVel](sw).Set(ship, RVel{X: 1})
		case 5:
			_ = ecs.StoreOf[RVel](sw).Set(ship, RVel{X: 3}) // pushed
		}
		_ = srv.SendTick(f)

		// Client frame: receive phase (values go to the Timeline), then
		// one predicted step (rolling back first when needed).
		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		tl.Step(clientSim)
	}
	sx, _ := ecs.StoreOf[RPos](sw).Get(ship)
	ce, _ := client.ClientEntity(ship)
	cx, _ := pos.Store().Get(ce)
	fmt.Println("server tick", srv.Tick(), "x", sx.X)
	fmt.Println("client tick", tl.Now(), "x", cx.X)
	fmt.Println("rollbacks", tl.Stats().Rollbacks)
	// Output:
	// server tick 8 x 13
	// client tick 11 x 22
	// rollbacks 2
}
