package replicate_test

import (
	"context"
	"net/netip"
	"reflect"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// StatsTo and AppendClients give what Stats and Clients give, and
// allocate nothing once their storage has grown.
func TestStatsToMatchesStats(t *testing.T) {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newExampleProtocol()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	e := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
	_ = ecs.Register[Pos](sw).Set(e, Pos{X: 1})
	client, _ := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: newExampleProtocol()})
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
	srv.Receive()
	srv.Send()

	ids := srv.AppendClients(nil)
	if !reflect.DeepEqual(ids, srv.Clients()) || len(ids) != 1 {
		t.Fatalf("AppendClients %v, Clients %v", ids, srv.Clients())
	}
	want, _ := srv.Stats(ids[0])
	var got replicate.ConnectionStats
	if err := srv.StatsTo(ids[0], &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("StatsTo %+v\nStats %+v", got, want)
	}
	if err := srv.StatsTo(ids[0]+99, &got); err != replicate.ErrNotConnected {
		t.Fatalf("unknown client: %v, want ErrNotConnected", err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		ids = srv.AppendClients(ids[:0])
		_ = srv.StatsTo(ids[0], &got)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call, want 0", allocs)
	}
}
