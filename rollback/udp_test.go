package rollback_test

import (
	"context"
	"testing"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// TestUDPLoopback plays 300 frames between two sessions over real UDP
// sockets on loopback, as fast as the inputs flow, and checks agreement.
func TestUDPLoopback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mk := func(conn transport.PacketConn, local int, other transport.PacketConn) *peer {
		cfg := rollback.Config{DesyncInterval: 10, Players: []rollback.Player{
			{Handle: rollback.PlayerHandle(local), Kind: rollback.Local},
			{Handle: rollback.PlayerHandle(1 - local), Kind: rollback.Remote, Addr: other.LocalAddr()}}}
		s, err := rollback.NewP2P(conn, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return &peer{s: s, g: newStubGame(t), conn: conn, input: defaultInput, finals: map[rollback.Frame]uint64{}}
	}
	peers := []*peer{mk(a, 0, b), mk(b, 1, a)}
	deadline := time.Now().Add(20 * time.Second)
	for peers[0].s.CurrentFrame() < 300 || peers[1].s.CurrentFrame() < 300 {
		if time.Now().After(deadline) {
			t.Fatalf("frames %d and %d after 20 s", peers[0].s.CurrentFrame(), peers[1].s.CurrentFrame())
		}
		for _, p := range peers {
			if p.s.CurrentFrame() < 300 {
				p.step(t)
			} else {
				p.s.Poll()
			}
		}
		// Wait for traffic rather than spin (bounded, so retries still run).
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Millisecond)
		_ = a.WaitReceive(wctx)
		wcancel()
	}
	for i := 0; i < 50; i++ { // let the last frames confirm
		for _, p := range peers {
			p.s.Poll()
		}
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Millisecond)
		_ = b.WaitReceive(wctx)
		wcancel()
	}
	for _, p := range peers {
		p.step(t) // record finals for the confirmed frames
	}
	if n := compareFinals(t, peers); n < 250 {
		t.Fatalf("only %d frames compared", n)
	}
	for i, p := range peers {
		if countEvents(p.events, rollback.EventDesyncDetected) != 0 {
			t.Fatalf("peer %d: desync", i)
		}
	}
}
