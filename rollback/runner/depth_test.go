package runner_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/transport"
)

// splitMatch plays 3 runners (MaxPrediction 4, ring depth depth; 0 for the
// session's SnapshotDepth) through a split: peer 2 is cut from peer 0 at
// frame 100 and from everyone at frame 130, and the other two play on to
// frame 400. It returns the first error of a survivor's Runner.
func splitMatch(t *testing.T, seed uint64, depth int) error {
	net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: seed, Default: transport.LinkConfig{
		Latency: 60 * time.Millisecond, Jitter: 30 * time.Millisecond, Loss: 0.2}})
	defer net.Close()
	runners := make([]*runner.Runner, 3)
	for i := range runners {
		conn, err := net.Listen(simAddr(i))
		if err != nil {
			t.Fatal(err)
		}
		cfg := rollback.Config{NumPlayers: 3, MaxPrediction: 4, Seed: uint64(i + 1)}
		for j := range 3 {
			p := rollback.Player{Handle: rollback.PlayerHandle(j), Kind: rollback.Local}
			if j != i {
				p.Kind, p.Addr = rollback.Remote, simAddr(j)
			}
			cfg.Players = append(cfg.Players, p)
		}
		s, err := rollback.NewP2P(conn, cfg)
		if err != nil {
			t.Fatal(err)
		}
		runners[i] = markerRunner(t, runner.Config{Session: s, Depth: depth,
			ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) }},
			func(v int64, ctx *runner.Context) int64 {
				for _, in := range ctx.Inputs {
					if len(in.Bytes) > 0 {
						v = v*3 + int64(in.Bytes[0])
					}
				}
				return v
			})
	}
	live := runners
	for start := time.Now(); runners[0].Frame() < 400 || runners[1].Frame() < 400; {
		if time.Since(start) > time.Minute {
			t.Fatalf("stuck at frames %d, %d", runners[0].Frame(), runners[1].Frame())
		}
		switch {
		case len(live) == 3 && runners[0].Frame() >= 130:
			net.Partition(simAddr(2), simAddr(1))
			live = runners[:2]
		case runners[0].Frame() >= 100:
			net.Partition(simAddr(2), simAddr(0))
		}
		for i, r := range live {
			if _, err := r.Update(time.Second / 60); err != nil {
				if i < 2 {
					return err
				}
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second / 60)
	}
	return nil
}

// TestRingDepthCoversSplit: with the ring depth every session reports
// (SnapshotDepth, 2*MaxPrediction+4 = 12) the survivors of a 3-peer split
// find every state their rollbacks load; with MaxPrediction+2 = 6, the
// depth the runner used to fall back to, a load misses its frame.
func TestRingDepthCoversSplit(t *testing.T) {
	missed := 0
	for seed := uint64(1); seed <= 4; seed++ {
		synctest.Test(t, func(t *testing.T) {
			if err := splitMatch(t, seed, 0); err != nil {
				t.Fatalf("seed %d with SnapshotDepth: %v", seed, err)
			}
			if err := splitMatch(t, seed, 6); err != nil {
				t.Logf("seed %d, ring of 6: %v", seed, err)
				missed++
			}
		})
	}
	if missed == 0 {
		t.Error("no seed needed more than MaxPrediction+2 saved frames: the scenario does not test the bound")
	}
	t.Logf("%d of 4 seeds failed with a ring of MaxPrediction+2", missed)
}
