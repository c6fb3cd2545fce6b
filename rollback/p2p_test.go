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
		net := transport.NewNetwork(transport.NetworkConfig{Seed: 1, Default: transport.LinkConfig{Latency: 30 * time.Millisecond}})
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
