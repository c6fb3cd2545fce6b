package replicate_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/transport"
)

// PlayerRNG is a player's own random stream, registered as RNG state.
type PlayerRNG struct{ R rng.Rand }

// An RNG-only resync repairs a client's random streams and nothing else:
// here a client whose copy of a player's stream was advanced by mistake
// gets the server's back, with the reason in its event.
func ExampleServer_ResyncRNG() {
	ctx := context.Background()
	proto := func() *replicate.Protocol {
		p := replicate.NewProtocol()
		_, _ = replicate.Component[Pos](p, replicate.WithOwnRule())
		_, _ = replicate.Component[PlayerRNG](p, replicate.WithOwnRule(), replicate.RNGState())
		return p
	}
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: proto()})
	defer srv.Close()
	player := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(player, replicate.Replicated{})
	_ = ecs.Register[Pos](sw).Set(player, Pos{X: 1})
	_ = ecs.Register[PlayerRNG](sw).Set(player, PlayerRNG{R: rng.Stream(7, 1)})

	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: proto()})
	defer client.Close()
	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx)
	srv.Send()
	for client.Entities() == 0 {
		_ = conn.WaitReceive(ctx)
		client.Update()
	}
	ce, _ := client.ClientEntity(player)
	ecs.StoreOf[PlayerRNG](cw).Ptr(ce).R.Uint64() // a draw the server never made
	ecs.StoreOf[Pos](cw).Ptr(ce).X = 9            // not RNG state: left alone

	_ = srv.ResyncRNG(client.ID(), "stream drift")
	srv.Send()
	for client.Stats().Resyncs == 0 {
		_ = conn.WaitReceive(ctx)
		client.Update()
	}
	for _, ev := range client.Events() {
		if ev.Kind == replicate.EventResync {
			fmt.Println(ev.Resync, ev.Reason)
		}
	}
	s, _ := ecs.StoreOf[PlayerRNG](sw).Get(player)
	c, _ := ecs.StoreOf[PlayerRNG](cw).Get(ce)
	pos, _ := ecs.StoreOf[Pos](cw).Get(ce)
	fmt.Println(s == c, pos.X)
	// Output:
	// rng stream drift
	// true 9
}
