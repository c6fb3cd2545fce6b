package quant_test

import (
	"context"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/quant"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// replicate.Codec is an interface: a quant.Codec satisfies it by its
// method set, with no import of replicate in package quant.
var _ replicate.Codec[Cube] = (*quant.Codec[Cube])(nil)

// TestReplicateQuantized replicates a Cube with a quant codec from a
// server to a client over the in-memory message network: the client
// holds exactly the server's value after Quantize, a spawn and a mutation.
func TestReplicateQuantized(t *testing.T) {
	newProtocol := func() *replicate.Protocol {
		p := replicate.NewProtocol()
		if _, err := replicate.Component[Cube](p, replicate.WithOwnRule(), replicate.WithCodec[Cube](newCubeCodec(), "cube/v1")); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, err := network.Listen(netip.AddrPort{})
	if err != nil {
		t.Fatal(err)
	}
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newProtocol()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cw := ecs.New()
	client, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProtocol()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	codec := newCubeCodec()
	sent := Cube{Pos: [3]float32{1.2345, -77.7, 0.001}, Rot: [4]float32{0.1, 0.7, -0.2, 0.6}, Vel: [3]float32{math.Pi, -1, 40}}
	codec.Quantize(&sent) // the server simulates on the quantized value
	e := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
	_ = ecs.Register[Cube](sw).Set(e, sent)

	conn, err := network.Dial(ctx, ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	sconn, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv.AddConn(sconn)
	if err := client.Connect(conn); err != nil {
		t.Fatal(err)
	}
	if err := sconn.WaitReceive(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Send()
	for client.Entities() == 0 {
		if err := conn.WaitReceive(ctx); err != nil {
			t.Fatal(err)
		}
		client.Update()
	}
	ce, ok := client.ClientEntity(e)
	if !ok {
		t.Fatal("no client entity")
	}
	got, _ := ecs.StoreOf[Cube](cw).Get(ce)
	if got != sent {
		t.Fatalf("spawn: client has %+v, server %+v", got, sent)
	}

	// A mutation: the cube comes to rest.
	sent.Vel, sent.Rest = [3]float32{}, true
	sent.Pos[1] = 3.3
	codec.Quantize(&sent)
	_ = ecs.StoreOf[Cube](sw).Set(e, sent)
	srv.Send()
	for got != sent {
		if err := conn.WaitReceive(ctx); err != nil {
			t.Fatalf("waiting for %+v, have %+v: %v", sent, got, err)
		}
		client.Update()
		got, _ = ecs.StoreOf[Cube](cw).Get(ce)
	}
}
