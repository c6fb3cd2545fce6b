package replicate_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/quant"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// Ship is the example's quantized component.
type Ship struct {
	Pos [3]float32
	Dir [2]float32
}

// How a game spends fewer bytes: a quantized codec (positions on a 1/256
// grid within ±128, a heading in 10 bits: 6 bytes instead of 20), the
// server simulating on the quantized values so a client holds exactly
// the server's, and a per-client budget of mutation bytes a tick. Deltas
// against what the client acknowledged are on by default
// (ServerConfig.NoDeltas turns them off): a ship moving steadily costs a
// few bits a tick.
func Example_bandwidth() {
	codec := quant.NewCodec(
		quant.Vec3Field(quant.Must(quant.NewFloat[float32](-128, 128, 1.0/256)), func(s *Ship) *[3]float32 { return &s.Pos }),
		quant.UnitVec2Field(quant.Must(quant.NewUnitVec2(10)), func(s *Ship) *[2]float32 { return &s.Dir }),
	)
	run := func(noDeltas bool) (bytesIn uint64, same bool) {
		ctx := context.Background()
		network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
		defer network.Close()
		ln, _ := network.Listen(netip.AddrPort{})
		proto := func() *replicate.Protocol {
			p := replicate.NewProtocol()
			_, _ = replicate.Component[Ship](p, replicate.WithOwnRule(), replicate.WithCodec(codec, "ship/1"))
			return p
		}
		sw := ecs.New()
		srv, _ := replicate.NewServer(replicate.ServerConfig{
			World: sw, Protocol: proto(),
			BudgetPerTick: 1000, // mutation bytes per client and tick
			NoDeltas:      noDeltas,
		})
		defer srv.Close()
		ships := ecs.Register[Ship](sw)
		rep := ecs.Register[replicate.Replicated](sw)
		var ents []ecs.Entity
		for k := range 50 {
			e := sw.Spawn()
			_ = rep.Set(e, replicate.Replicated{})
			s := Ship{Pos: [3]float32{float32(k), 0, 0}, Dir: [2]float32{1, 0}}
			codec.Quantize(&s)
			_ = ships.Set(e, s)
			ents = append(ents, e)
		}
		cw := ecs.New()
		client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: proto()})
		defer client.Close()
		conn, _ := network.Dial(ctx, ln.Addr())
		sconn, _ := ln.Accept(ctx)
		srv.AddConn(sconn)
		_ = client.Connect(conn)
		_ = sconn.WaitReceive(ctx)
		for range 120 {
			for _, e := range ents {
				s := ships.Ptr(e)
				s.Pos[0] += 0.05 // a steady move
				codec.Quantize(s)
			}
			srv.Send()
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		same = true
		cs := ecs.StoreOf[Ship](cw)
		for _, e := range ents {
			ce, _ := client.ClientEntity(e)
			got, _ := cs.Get(ce)
			want, _ := ships.Get(e)
			same = same && got == want
		}
		return client.Stats().BytesIn, same
	}
	deltaBytes, same := run(false)
	absBytes, _ := run(true)
	fmt.Println("client holds the server's ships:", same)
	fmt.Println("with deltas, a quarter of the bytes or less:", 4*deltaBytes <= absBytes) // 11,125 and 53,452 bytes
	// Output:
	// client holds the server's ships: true
	// with deltas, a quarter of the bytes or less: true
}
