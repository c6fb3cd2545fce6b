package quant_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/quant"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Mover is a predicted body in float32, sent quantized: position to
// 1/256 over ±1024, velocity to 1/64 over ±64.
type Mover struct{ X, Y, VX, VY float32 }

// Steer is a player's input: the direction to accelerate in.
type Steer struct{ DX, DY int8 }

func moverCodec() *quant.Codec[Mover] {
	pos := quant.Must(quant.NewFloat[float32](-1024, 1024, 1.0/256))
	vel := quant.Must(quant.NewFloat[float32](-64, 64, 1.0/64))
	return quant.NewCodec(
		quant.FloatField(pos, func(m *Mover) *float32 { return &m.X }),
		quant.FloatField(pos, func(m *Mover) *float32 { return &m.Y }),
		quant.FloatField(vel, func(m *Mover) *float32 { return &m.VX }),
		quant.FloatField(vel, func(m *Mover) *float32 { return &m.VY }),
	)
}

// stepMover is the game's simulation of one tick, the same on both sides:
// accelerate, drag, move; with quantize, the result is snapped to what
// the wire carries (Codec.Quantize), on the server and in the client's
// prediction alike.
func stepMover(m *Mover, in Steer, codec *quant.Codec[Mover], quantize bool) {
	m.VX = m.VX*0.97 + float32(in.DX)*0.37
	m.VY = m.VY*0.97 + float32(in.DY)*0.29
	m.X += m.VX / 60
	m.Y += m.VY / 60
	if quantize {
		codec.Quantize(m)
	}
}

// TestPredictQuantized: a client predicts its body from quantized server
// values. When both sides simulate on the quantized value (the server
// quantizes after each tick, the client's prediction does the same), the
// prediction equals every server value: 0 mispredictions in 300 ticks of
// steering. Without quantizing in the simulation, the client's
// full-precision prediction differs from the quantized value it receives
// nearly every tick: the mispredictions quantization causes.
func TestPredictQuantized(t *testing.T) {
	for _, quantize := range []bool{true, false} {
		n := predictQuantized(t, quantize)
		t.Logf("quantize in the simulation %v: %d mispredictions in 300 ticks", quantize, n)
		switch {
		case quantize && n != 0:
			t.Fatalf("quantizing on both sides: %d mispredictions, want 0", n)
		case !quantize && n < 100:
			t.Fatalf("not quantizing in the simulation: %d mispredictions; the test no longer shows what quantizing prevents", n)
		}
	}
}

func predictQuantized(t *testing.T, quantize bool) uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newProtocol := func() (*replicate.Protocol, *input.Type[Steer]) {
		p := replicate.NewProtocol()
		if _, err := replicate.Component[Mover](p, replicate.WithOwnRule(), replicate.WithCodec[Mover](moverCodec(), "mover/v1")); err != nil {
			t.Fatal(err)
		}
		in, err := input.Register[Steer](p, nil, input.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return p, in
	}
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 3})
	defer network.Close()
	ln, err := network.Listen(netip.AddrPort{})
	if err != nil {
		t.Fatal(err)
	}
	sw := ecs.New()
	sp, sin := newProtocol()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: sp})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sframe := predict.NewServerFrame(srv, sin)
	scodec := moverCodec()

	cw := ecs.New()
	cp, cin := newProtocol()
	client, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: cp})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	tl := predict.New(cw, 0, predict.Config{Window: 32})
	body, err := predict.Register[Mover](tl)
	if err != nil {
		t.Fatal(err)
	}
	if err := predict.AttachComponent(client, body); err != nil {
		t.Fatal(err)
	}
	conn, err := network.Dial(ctx, ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cframe, err := predict.NewClientFrame(client, tl, cin, predict.ClientFrameConfig{RTT: func() time.Duration { return conn.Stats().RTT }})
	if err != nil {
		t.Fatal(err)
	}
	ccodec := moverCodec()
	movers := ecs.NewQuery1(body.Store().Write())
	sim := func(t tick.Tick) {
		in, _ := cframe.Sender().Input(t)
		for _, m := range movers.All() {
			stepMover(m, in, ccodec, quantize)
		}
	}
	steer := func(t tick.Tick) Steer { // a player weaving left and right
		return Steer{DX: int8(int(t/23)%3 - 1), DY: int8(int(t/17)%3 - 1)}
	}

	sconn, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv.AddConn(sconn)
	if err := client.Connect(conn); err != nil {
		t.Fatal(err)
	}
	for client.State() != replicate.Connected {
		srv.Receive()
		if err := conn.WaitReceive(ctx); err != nil {
			t.Fatal(err)
		}
		client.Update()
	}
	e := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
	start := Mover{X: 10.3, Y: -4.1}
	scodec.Quantize(&start) // a spawn value the wire carries exactly
	_ = ecs.Register[Mover](sw).Set(e, start)
	for f := tick.Tick(1); f <= 300; f++ {
		if err := sframe.Frame(f, func(_ tick.Tick, in func(replicate.ClientID) Steer) {
			stepMover(ecs.StoreOf[Mover](sw).Ptr(e), in(client.ID()), scodec, quantize)
		}); err != nil {
			t.Fatal(err)
		}
		for !client.TickComplete(f) {
			if err := conn.WaitReceive(ctx); err != nil {
				t.Fatal(err)
			}
			client.Update()
		}
		cframe.Frame(time.Second/60, steer, sim)
	}
	if st := sframe.Buffer().Stats(client.ID()); st.Missing > 2 {
		t.Fatalf("%d inputs missing: the mispredictions would not be quantization's", st.Missing)
	}
	return body.Stats().Mispredictions
}
