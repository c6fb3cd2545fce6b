package rollback_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// TestLoadDepthWithinSnapshotDepth: 3 peers with MaxPrediction 4 split
// apart: peer 2 loses its link to peer 0 first (peer 1 still relays its
// inputs' status), then to everyone, and is disconnected. Over several
// seeds the survivors roll back to the agreed disconnect frame from far
// ahead: loads reach deeper than MaxPrediction+2 frames (the bound
// LoadRequest's doc used to promise) but never deeper than SnapshotDepth =
// 2*MaxPrediction+4.
func TestLoadDepthWithinSnapshotDepth(t *testing.T) {
	deepest := 0
	for seed := uint64(1); seed <= 6; seed++ {
		synctest.Test(t, func(t *testing.T) {
			net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: seed, Default: transport.LinkConfig{
				Latency: 60 * time.Millisecond, Jitter: 30 * time.Millisecond, Loss: 0.2}})
			defer net.Close()
			peers := newMatch(t, net, 3, rollback.Config{MaxPrediction: 4})
			depth := peers[0].s.SnapshotDepth()
			if depth != 2*4+4 {
				t.Fatalf("SnapshotDepth %d, want 12", depth)
			}
			runMatch(t, peers, 100, time.Minute)
			net.Partition(addrOf(2), addrOf(0))
			runMatch(t, peers, 130, time.Minute)
			net.Partition(addrOf(2), addrOf(1))
			runMatch(t, peers[:2], 400, time.Minute)
			for i, p := range peers[:2] {
				if disc, _ := p.s.PlayerStatus(2); !disc {
					t.Fatalf("seed %d: peer %d kept player 2", seed, i)
				}
				if p.g.maxLoad > depth {
					t.Errorf("seed %d: peer %d loaded %d frames back, SnapshotDepth %d", seed, i, p.g.maxLoad, depth)
				}
				deepest = max(deepest, p.g.maxLoad)
			}
		})
	}
	t.Logf("deepest load: %d frames (MaxPrediction 4, SnapshotDepth 12)", deepest)
	if deepest <= 4+2 {
		t.Errorf("deepest load %d frames: the scenario does not exceed MaxPrediction+2", deepest)
	}
}
