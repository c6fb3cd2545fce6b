package runner_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/transport"
)

// wrapped is a session wrapper of the kind a game writes (to log or count
// calls): embedding the Session contract forwards every method.
type wrapped struct{ runner.Session }

// TestRunnerFinishesMatch: two peers, each driven by a Runner through a
// wrapper session, play a 240-frame match (Config.EndFrame) over a lossy
// link with desync checks, and Update until the Runners are Finished.
// Confirmed then has been called exactly once for every state 0..240, in
// order, with equal checksums on both peers; the ring depth is the
// session's SnapshotDepth (2*MaxPrediction+4 = 20) through the wrapper.
// Before, the runner found optional methods by type assertion: this wrapper
// got a ring of depth 1 and no checksums, and matches had no end.
func TestRunnerFinishesMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const end = 240
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 5, Default: transport.LinkConfig{
			Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.15}})
		defer net.Close()
		var runners [2]*runner.Runner
		var sums [2][]rollback.Frame
		var vals [2]map[rollback.Frame]uint64
		for i := range 2 {
			conn, err := net.Listen(simAddr(i))
			if err != nil {
				t.Fatal(err)
			}
			s, err := rollback.NewP2P(conn, rollback.Config{NumPlayers: 2, InputDelay: 1, DesyncInterval: 40,
				EndFrame: end, Seed: uint64(i + 1),
				Players: []rollback.Player{{Handle: rollback.PlayerHandle(i), Kind: rollback.Local},
					{Handle: rollback.PlayerHandle(1 - i), Kind: rollback.Remote, Addr: simAddr(1 - i)}}})
			if err != nil {
				t.Fatal(err)
			}
			vals[i] = map[rollback.Frame]uint64{}
			r := markerRunner(t, runner.Config{Session: wrapped{s}, ChecksumAll: true,
				ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) },
				Confirmed: func(f rollback.Frame, sum uint64) {
					sums[i] = append(sums[i], f)
					vals[i][f] = sum
				}},
				func(old int64, ctx *runner.Context) int64 {
					v := old*31 + int64(ctx.Frame)
					for _, in := range ctx.Inputs {
						v = v*7 + int64(len(in.Bytes))
						if len(in.Bytes) > 0 {
							v += int64(in.Bytes[0])
						}
					}
					return v
				})
			if d := r.Ring().Depth(); d != s.SnapshotDepth() || d != 20 {
				t.Fatalf("ring depth %d through the wrapper, session depth %d", d, s.SnapshotDepth())
			}
			runners[i] = r
		}
		for start := time.Now(); !runners[0].Finished() || !runners[1].Finished(); {
			if time.Since(start) > time.Minute {
				t.Fatalf("not finished: frames %d, %d", runners[0].Frame(), runners[1].Frame())
			}
			for _, r := range runners {
				if _, err := r.Update(time.Second / 60); err != nil {
					t.Fatal(err)
				}
				for _, ev := range r.Session().Events() {
					if ev.Kind == rollback.EventDesyncDetected {
						t.Fatalf("desync: %v", ev)
					}
				}
			}
			time.Sleep(time.Second / 60)
		}
		for i := range 2 {
			if len(sums[i]) != end+1 {
				t.Fatalf("peer %d: Confirmed called for %d frames, want %d", i, len(sums[i]), end+1)
			}
			for f, got := range sums[i] {
				if got != rollback.Frame(f) {
					t.Fatalf("peer %d: Confirmed frame #%d is %d", i, f, got)
				}
			}
		}
		for f := rollback.Frame(0); f <= end; f++ {
			if vals[0][f] != vals[1][f] {
				t.Fatalf("frame %d: checksums differ", f)
			}
		}
	})
}

// TestSyncTestRunnerFinishes: a Runner driving a SyncTest session with
// EndFrame reports Finished only after Confirmed was called exactly once
// for every state 0..N, in order; each of the last CheckDistance states was
// re-simulated and compared like the others. Before, a SyncTest session was
// Finished at frame N with its last CheckDistance states never confirmed.
func TestSyncTestRunnerFinishes(t *testing.T) {
	const end = 50
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 2, CheckDistance: 3, EndFrame: end})
	if err != nil {
		t.Fatal(err)
	}
	var confirmed []rollback.Frame
	saves := &countSaves{Session: s, n: map[rollback.Frame]int{}}
	r := markerRunner(t, runner.Config{Session: saves,
		ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) },
		Confirmed: func(f rollback.Frame, _ uint64) { confirmed = append(confirmed, f) }},
		func(old int64, ctx *runner.Context) int64 {
			return old*31 + int64(ctx.Frame) + int64(len(ctx.Inputs[0].Bytes))
		})
	for calls := 0; !r.Finished(); calls++ {
		if calls > end+10 {
			t.Fatalf("not finished after %d frames", calls)
		}
		if err := r.RunFrame(); err != nil {
			t.Fatal(err)
		}
	}
	if len(confirmed) != end+1 {
		t.Fatalf("Confirmed called for %d states, want %d (0..%d)", len(confirmed), end+1, end)
	}
	for i, f := range confirmed {
		if f != rollback.Frame(i) {
			t.Fatalf("Confirmed #%d is frame %d", i, f)
		}
	}
	// Every state after the first CheckDistance ones, the last included,
	// is saved again after a re-simulation, so it is compared.
	for f := rollback.Frame(4); f <= end; f++ {
		if saves.n[f] < 2 {
			t.Fatalf("state %d saved %d times: never compared", f, saves.n[f])
		}
	}
	if s.Checked() == 0 {
		t.Fatal("nothing compared")
	}
}

// countSaves counts the Save requests of each frame.
type countSaves struct {
	runner.Session
	n map[rollback.Frame]int
}

func (c *countSaves) AdvanceFrame() ([]rollback.Request, error) {
	reqs, err := c.Session.AdvanceFrame()
	for _, q := range reqs {
		if q.Kind == rollback.SaveRequest {
			c.n[q.Frame]++
		}
	}
	return reqs, err
}
