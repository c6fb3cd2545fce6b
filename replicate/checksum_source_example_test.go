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

// A checksum source: the client holds its checksum reports
// (HoldChecksums) and sends each with the part of Pos computed from
// values it keeps itself, summed with a ComponentSummer (as a prediction
// layer sums its history at the report's tick; package predict does it
// with AttachChecksum). Here the kept values are a copy of the World's at
// the report tick, taken before the World moves on.
func ExampleClient_HoldChecksums() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newExampleProtocol(), ChecksumInterval: 2})
	defer srv.Close()
	e := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
	_ = ecs.Register[Pos](sw).Set(e, Pos{X: 1})

	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newExampleProtocol(), ChecksumInterval: 2})
	defer client.Close()
	summer, _ := replicate.NewComponentSummer[Pos](client)
	type held struct {
		t   tick.Tick
		sum uint64
	}
	var kept []held // the part of Pos at each held report tick
	client.HoldChecksums(func(t tick.Tick) {
		var sum uint64
		for ce, v := range ecs.StoreOf[Pos](cw).Values() {
			se, _ := client.ServerEntity(ce)
			sum += summer.Term(se, &v)
		}
		kept = append(kept, held{t, sum})
	})
	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx)

	for f := tick.Tick(1); f <= 6; f++ {
		srv.Receive()
		ecs.StoreOf[Pos](sw).Ptr(e).X++
		_ = srv.SendTick(f)
		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		for _, h := range kept { // later, once the source knows its part
			fmt.Println("report", h.t, client.ReportChecksum(h.t, []replicate.Part{{Name: summer.Name(), Sum: h.sum}}))
		}
		kept = kept[:0]
		_ = sconn.WaitReceive(ctx)
	}
	srv.Receive()
	st, _ := srv.Stats(client.ID())
	fmt.Println("checked", st.ChecksumsChecked, "desyncs", st.Desyncs)
	// Output:
	// report 2 true
	// report 4 true
	// report 6 true
	// checked 3 desyncs 0
}
