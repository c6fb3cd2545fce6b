package rollback_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

func TestTwoPeersConverge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 1, Default: transport.LinkConfig{Latency: 30 * time.Millisecond}})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{DesyncInterval: 10})
		runMatch(t, peers, 300, time.Minute)
		drainMatch(t, peers, time.Second)
		n := compareFinals(t, peers)
		if n < 250 {
			t.Fatalf("only %d confirmed frames compared", n)
		}
		for i, p := range peers {
			st := p.s.Stats()
			t.Logf("peer %d: %+v", i, st)
			if countEvents(p.events, rollback.EventDesyncDetected) != 0 {
				t.Fatalf("peer %d: desync events %v", i, p.events)
			}
			if st.Rollbacks == 0 {
				t.Errorf("peer %d: no rollbacks with 30 ms latency and changing inputs", i)
			}
		}
	})
}

// TestChaos runs 2, 3 and 4 peers through bad networks for 1200 frames and
// checks that every peer agrees on every confirmed frame's checksum and that
// no desync is reported.
func TestChaos(t *testing.T) {
	cases := []struct {
		name  string
		peers int
		link  transport.LinkConfig
	}{
		{"2peers-loss20", 2, transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 15 * time.Millisecond, Loss: 0.2, Duplicate: 0.05, Reorder: 0.05}},
		{"2peers-150ms", 2, transport.LinkConfig{Latency: 150 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.05}},
		{"3peers-loss10", 3, transport.LinkConfig{Latency: 60 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.1, Duplicate: 0.1, Reorder: 0.1}},
		{"3peers-loss20-150ms", 3, transport.LinkConfig{Latency: 150 * time.Millisecond, Jitter: 30 * time.Millisecond, Loss: 0.2, Duplicate: 0.05, Reorder: 0.05}},
		{"4peers-loss20", 4, transport.LinkConfig{Latency: 80 * time.Millisecond, Jitter: 25 * time.Millisecond, Loss: 0.2, Duplicate: 0.1, Reorder: 0.1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 7, Default: tc.link})
				defer net.Close()
				peers := newMatch(t, net, tc.peers, rollback.Config{DesyncInterval: 20, InputDelay: 2})
				runMatch(t, peers, 1200, 10*time.Minute)
				drainMatch(t, peers, 2*time.Second)
				n := compareFinals(t, peers)
				if n < 1100*(tc.peers-1) {
					t.Fatalf("only %d confirmed frame checksums compared", n)
				}
				for i, p := range peers {
					st := p.s.Stats()
					t.Logf("peer %d: %+v", i, st)
					if d := countEvents(p.events, rollback.EventDesyncDetected); d != 0 {
						t.Fatalf("peer %d: %d desync events", i, d)
					}
					if c := countEvents(p.events, rollback.EventDisconnected); c != 0 {
						t.Fatalf("peer %d: %d disconnects", i, c)
					}
				}
			})
		})
	}
}
