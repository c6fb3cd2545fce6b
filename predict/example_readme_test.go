package predict_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Ship is the README example's predicted component; Stick its input.
type (
	Ship  struct{ X, V int64 }
	Stick struct{ Dir int8 }
)

// fly is the README example's simulation, the same on server and client.
func fly(s *Ship, in Stick) { s.V = int64(in.Dir); s.X += s.V }

// The README's client/server prediction example, whole: a server and a
// predicting client over the in-memory network, 30 ticks. The text
// between the README markers is README.md's, compared by
// TestReadmeExample.
func Example_readme() {
	ctx := context.Background()
	// README:begin
	// One protocol, built the same way on both sides: what replicates, and the input.
	newProtocol := func() (*replicate.Protocol, *input.Type[Stick]) {
		p := replicate.NewProtocol()
		_, _ = replicate.Component[Ship](p, replicate.WithOwnRule())
		in, _ := input.Register[Stick](p, nil, input.Config{})
		return p, in
	}
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1}) // or transport/quic
	ln, _ := network.Listen(netip.AddrPort{})

	// Server: the authoritative World, each tick simulated with the inputs received.
	sw := ecs.New()
	sp, sin := newProtocol()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: sp})
	sframe := predict.NewServerFrame(srv, sin)
	ship, ships := sw.Spawn(), ecs.Register[Ship](sw)
	_ = ecs.Register[replicate.Replicated](sw).Set(ship, replicate.Replicated{}) // replicate it
	_ = ships.Set(ship, Ship{})

	// Client: runs ahead of the server and predicts Ship, rolling back when the server disagrees.
	cw := ecs.New()
	cp, cin := newProtocol()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: cp})
	tl := predict.New(cw, 0, predict.Config{Window: 32})
	predicted, _ := predict.Register[Ship](tl)
	_ = predict.AttachComponent(client, predicted) // the server's Ship values go to the Timeline
	conn, _ := network.Dial(ctx, ln.Addr())
	cframe, _ := predict.NewClientFrame(client, tl, cin, predict.ClientFrameConfig{
		RTT: func() time.Duration { return conn.Stats().RTT }})
	mine := ecs.NewQuery1(predicted.Store().Write())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn) // a real server runs srv.Serve(ctx, listener)
	_ = client.Connect(conn)
	for t := tick.Tick(1); t <= 30; t++ {
		_ = sframe.Frame(t, func(t tick.Tick, input func(replicate.ClientID) Stick) {
			fly(ships.Ptr(ship), input(client.ID()))
		})
		for client.State() != replicate.Connected || !client.TickComplete(t) {
			_ = conn.WaitReceive(ctx) // a game renders instead of waiting
			srv.Receive()
			client.Update()
		}
		cframe.Frame(time.Second/60, func(tick.Tick) Stick { return Stick{Dir: 1} }, func(t tick.Tick) {
			in, _ := cframe.Sender().Input(t)
			for _, s := range mine.All() {
				fly(s, in)
			}
		})
	}
	// README:end
	s, _ := ships.Get(ship)
	ce, _ := client.ClientEntity(ship)
	c, _ := predicted.Store().Get(ce)
	fmt.Println("server tick", srv.Tick(), "x", s.X)
	fmt.Println("client tick", tl.Now(), "x", c.X)
	// Output:
	// server tick 30 x 29
	// client tick 34 x 33
}
