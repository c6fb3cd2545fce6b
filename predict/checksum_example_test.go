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

// Desync detection for a predicting client: with ChecksumInterval set on
// both sides, Attach (through AttachChecksum) makes the client report the
// checksum of its confirmed state at every 4th server tick, its predicted
// types summed from their history at that tick, though its World holds
// the prediction of 3 ticks later. The reports of ticks 4 and 8 match;
// then a bug writes a velocity the server never had (at the client's tick
// 12), and every report from tick 12 on names the type (the server could
// repair it: ServerConfig.ResyncOnDesync).
func ExampleAttachChecksum() {
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

	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newProtocol(), ChecksumInterval: 4})
	defer srv.Close()
	serverSim := move(sw)

	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProtocol(), ChecksumInterval: 4})
	defer client.Close()
	tl := predict.New(cw, 0, predict.Config{Window: 16})
	pos, _ := predict.Register[RPos](tl)
	vel, _ := predict.Register[RVel](tl)
	predict.Attach(client, tl) // AttachChecksum included
	_ = predict.AttachComponent(client, pos)
	_ = predict.AttachComponent(client, vel)
	clientSim := move(cw)

	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx)
	for range 3 {
		tl.Step(clientSim) // 3 ticks ahead
	}

	var ship ecs.Entity
	for f := tick.Tick(1); f <= 20; f++ {
		srv.Receive() // checks the reports that arrived
		for _, ev := range srv.Events() {
			if ev.Kind == replicate.ClientDesync {
				fmt.Println("desync at tick", ev.Tick, "in", ev.Types)
			}
		}
		serverSim(f)
		if f == 1 {
			ship = sw.Spawn()
			_ = ecs.Register[replicate.Replicated](sw).Set(ship, replicate.Replicated{})
			_ = ecs.StoreOf[RPos](sw).Set(ship, RPos{X: 0})
			_ = ecs.StoreOf[RVel](sw).Set(ship, RVel{X: 1})
		}
		_ = srv.SendTick(f)

		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		if f == 10 { // a bug: the client writes a velocity the server never had
			ce, _ := client.ClientEntity(ship)
			_ = vel.Insert(ce, tl.Now(), RVel{X: 2})
		}
		tl.Step(clientSim)         // sends the reports the Step made final
		_ = sconn.WaitReceive(ctx) // the client's acks (and report)
	}
	st, _ := srv.Stats(client.ID())
	fmt.Println("reports checked", st.ChecksumsChecked, "desyncs", st.Desyncs)
	// Output:
	// desync at tick 12 in [github.com/rewindgo/rewind/predict_test.RVel]
	// desync at tick 16 in [github.com/rewindgo/rewind/predict_test.RVel]
	// reports checked 4 desyncs 2
}
