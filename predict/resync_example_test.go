package predict_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// A resync at tick 3 (replicate calls Timeline.Resync through Hooks, then
// delivers the server's values of tick 3): the next Step rolls back to 3
// and re-simulates from the server's generator, so the client's rolls of
// ticks 4 and on are the server's; a value of an older tick arriving late
// is obsolete.
func ExampleTimeline_Resync() {
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 8})
	world, _ := predict.RegisterResource[rng.Rand](tl)
	roll, _ := predict.RegisterResource[Roll](tl)
	world.Resource().Set(rng.NewSeed(1))
	sim := func(tick.Tick) {
		g := world.Resource().Ptr()
		roll.Resource().Set(Roll{V: g.Uint64() % 100})
	}
	for range 5 {
		tl.Step(sim)
	}
	server := rng.NewSeed(2) // the server's generator at the end of tick 3
	_ = tl.Resync(3)
	_ = world.Authoritative(3, server)
	err := world.Authoritative(2, rng.NewSeed(3))
	tl.Step(sim)
	got, _ := roll.At(4)
	fmt.Println(got.V == server.Uint64()%100, errors.Is(err, predict.ErrObsolete), tl.Stats().Resyncs, tl.Stats().Rollbacks)
	// Output: true true 1 1
}

// AttachResource predicts a replicated resource: here the world's random
// generator, which the server replicates and the client registers with
// its Timeline. The client, 3 ticks ahead, draws the server's rolls: its
// prediction of every tick equals the server's draw, with no rollback.
func ExampleAttachResource() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	newProtocol := func() *replicate.Protocol {
		p := replicate.NewProtocol()
		_, _ = replicate.ReplicateResource[rng.Rand](p)
		_, _ = replicate.ReplicateResource[Roll](p)
		return p
	}
	roll := func(w *ecs.World) func(tick.Tick) {
		g, r := ecs.RegisterResource[rng.Rand](w), ecs.RegisterResource[Roll](w)
		return func(tick.Tick) { r.Set(Roll{V: g.Ptr().Uint64() % 6}) }
	}
	sw := ecs.New()
	ecs.RegisterResource[rng.Rand](sw).Set(rng.NewSeed(42))
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newProtocol()})
	defer srv.Close()
	serverSim := roll(sw)

	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProtocol()})
	defer client.Close()
	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx)
	// The first update brings the generator of tick 0; the client then
	// predicts from it.
	srv.Send()
	for client.UpdateTick() == 0 {
		_ = conn.WaitReceive(ctx)
		client.Update()
	}
	tl := predict.New(cw, client.UpdateTick(), predict.Config{Window: 16})
	gen, _ := predict.RegisterResource[rng.Rand](tl)
	rolls, _ := predict.RegisterResource[Roll](tl)
	predict.Attach(client, tl)
	_ = predict.AttachResource(client, gen)
	_ = predict.AttachResource(client, rolls)
	clientSim := roll(cw)
	for range 3 {
		tl.Step(clientSim)
	}
	var server, predicted []uint64
	for f := srv.Tick() + 1; f <= 8; f++ {
		srv.Receive()
		serverSim(f)
		_ = srv.SendTick(f)
		v, _ := ecs.ResourceOf[Roll](sw).Get()
		server = append(server, v.V)
		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		tl.Step(clientSim)
		p, _ := rolls.At(f)
		predicted = append(predicted, p.V)
	}
	fmt.Println(server)
	fmt.Println(predicted, "rollbacks", tl.Stats().Rollbacks)
	// Output:
	// [3 4 2 2 4 2 1]
	// [3 4 2 2 4 2 1] rollbacks 0
}
