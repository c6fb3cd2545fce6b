package replicate_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Pos is the replicated component of the examples.
type Pos struct{ X, Y float32 }

// newExampleProtocol builds the protocol; server and client each build the
// same one.
func newExampleProtocol() *replicate.Protocol {
	p := replicate.NewProtocol()
	if _, err := replicate.Component[Pos](p, replicate.WithOwnRule()); err != nil {
		panic(err)
	}
	return p
}

// A server replicates its world to a client over the in-memory network of
// package transport (QUIC works the same way, see transport/quic). Each
// server tick is one Send; the client applies what arrived in Update. A
// game polls both once per tick; this example waits for the messages
// instead, so it needs no clock. In tests, run it inside synctest.Test
// with latency and loss on the network's links.
func Example() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})

	// The server owns the world: entities marked Replicated are sent.
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newExampleProtocol()})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	e := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
	_ = ecs.Register[Pos](sw).Set(e, Pos{X: 1, Y: 2})

	// The client dials, hands the conn to its Client and says hello.
	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newExampleProtocol()})
	defer client.Close()
	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx) // or srv.Serve(ctx, ln) in a goroutine
	srv.AddConn(sconn)
	_ = client.Connect(conn)

	_ = sconn.WaitReceive(ctx) // the hello
	srv.Send()                 // a server tick: welcome, then the update
	for client.Entities() == 0 {
		_ = conn.WaitReceive(ctx)
		client.Update()
	}
	ce, _ := client.ClientEntity(e)
	pos, _ := ecs.StoreOf[Pos](cw).Get(ce)
	fmt.Println(client.State(), client.Entities(), pos)

	// The next tick sends only what changed, as a mutation.
	_ = ecs.StoreOf[Pos](sw).Set(e, Pos{X: 3, Y: 4})
	srv.Send()
	for pos.X != 3 {
		_ = conn.WaitReceive(ctx)
		client.Update()
		pos, _ = ecs.StoreOf[Pos](cw).Get(ce)
	}
	fmt.Println(pos, "after", client.Stats().Updates, "update")
	// Output:
	// connected 1 {1 2}
	// {3 4} after 1 update
}

// A Rule replicates its components together, on entities that have all of
// them and pass its filters; WithOwnRule gives a component a rule of its
// own.
func ExampleRule() {
	type Pos struct{ X, Y float32 }
	type Vel struct{ X, Y float32 }
	type Name struct{ Text [16]byte }
	type Invisible struct{}

	p := replicate.NewProtocol()
	pos, _ := replicate.Component[Pos](p)
	vel, _ := replicate.Component[Vel](p)
	// Name replicates wherever an entity has one.
	_, _ = replicate.Component[Name](p, replicate.WithOwnRule())
	// Pos and Vel replicate only together, and not on Invisible entities.
	err := p.AddRule(replicate.Rule{
		Components: []replicate.ComponentIndex{pos, vel},
		Filters:    []replicate.Filter{replicate.Without[Invisible]()},
	})
	fmt.Println(err)
	_, err = replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: p})
	fmt.Println(err)
	// Output:
	// <nil>
	// <nil>
}

// The world's random number generator replicated as a resource: after
// applying the update of a tick, the client holds the server's generator
// of that tick and draws the same numbers. Per-entity streams replicate
// the same way as a component (Component[rng.Rand]).
func ExampleReplicateResource() {
	newProtocol := func() *replicate.Protocol {
		p := newExampleProtocol()
		if _, err := replicate.ReplicateResource[rng.Rand](p); err != nil {
			panic(err)
		}
		return p
	}
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newProtocol()})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	_ = ecs.SetResource(sw, rng.NewSeed(42))

	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProtocol()})
	defer client.Close()
	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx)

	for range 3 { // three ticks, each drawing from the world's stream
		ecs.ResourcePtr[rng.Rand](sw).IntN(6)
		srv.Send()
		for client.UpdateTick() != srv.Tick() {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
	}
	server, _ := ecs.GetResource[rng.Rand](sw)
	local, _ := ecs.GetResource[rng.Rand](cw)
	fmt.Println(server.IntN(100), local.IntN(100), server == local)
	// Output:
	// 5 5 true
}

// A server captures a checkpoint of its replicated state every Interval
// ticks: a copy of the replicated stores, encoded to the saved form
// (LoadState reads it) only when asked for, and a checksum with one part
// per type, which clients compute too (Client.Checksum).
func ExampleCheckpoints() {
	p := newExampleProtocol()
	w := ecs.New()
	for i := range 3 {
		e := w.Spawn()
		_ = ecs.Register[replicate.Replicated](w).Set(e, replicate.Replicated{})
		_ = ecs.Register[Pos](w).Set(e, Pos{X: float32(i)})
	}
	ring := replicate.NewCheckpoints(w, p, replicate.CheckpointConfig{Interval: 300, Max: 4})
	for t := tick.Tick(1); t <= 1500; t++ {
		// ... run the tick and Server.Send ...
		if ring.Due(t) {
			if _, err := ring.Capture(t); err != nil {
				panic(err)
			}
		}
	}
	latest, _ := ring.Latest()
	fmt.Println(ring.Len(), "checkpoints, latest at tick", latest.Tick)
	_, parts := latest.Checksum()
	for _, part := range parts {
		fmt.Println(part.Name)
	}
	restored := ecs.New()
	m, _ := replicate.LoadState(bytes.NewReader(latest.AppendState(nil)), restored, p)
	fmt.Println(len(m), "entities restored")
	// Output:
	// 4 checkpoints, latest at tick 1500
	// replicate.entities
	// github.com/rewindgo/rewind/replicate_test.Pos
	// 3 entities restored
}
