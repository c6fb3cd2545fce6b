package metrics_test

import (
	"testing"
	"time"

	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/rollback"
)

type fakeNet map[rollback.PlayerHandle]rollback.NetworkStats

func (f fakeNet) NetworkStats(h rollback.PlayerHandle) (rollback.NetworkStats, error) {
	if ns, ok := f[h]; ok {
		return ns, nil
	}
	return rollback.NetworkStats{}, rollback.ErrInvalidHandle
}

// Rollback depths come from the counters' growth between samples; peers
// without stats are skipped.
func TestSessionFigures(t *testing.T) {
	m := metrics.NewSession(metrics.SessionConfig{Name: "p0", RTTEvery: 1})
	net := fakeNet{1: {Ping: 40 * time.Millisecond, BytesSent: 100}}
	peers := []rollback.PlayerHandle{1, 2}
	m.Sample(rollback.SessionStats{Frame: 10}, net, peers)
	m.Sample(rollback.SessionStats{Frame: 11, Rollbacks: 1, RollbackFrames: 3}, net, peers)
	m.Sample(rollback.SessionStats{Frame: 12, Rollbacks: 3, RollbackFrames: 5}, net, peers)
	var f metrics.SessionFigures
	m.Read(&f)
	if f.Name != "p0" || f.Rollbacks != 3 || f.Depth.Count != 3 || f.Depth.Sum != 5 {
		t.Fatalf("figures %+v", f)
	}
	if len(f.Peers) != 1 || f.Peers[0].Handle != 1 || f.Ping.Count != 3 {
		t.Fatalf("peers %+v, ping %+v", f.Peers, f.Ping)
	}
	if a := testing.AllocsPerRun(100, func() { m.Sample(rollback.SessionStats{Frame: 13}, net, peers) }); a != 0 {
		t.Fatalf("Sample: %v allocations", a)
	}
}
