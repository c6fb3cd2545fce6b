package rollback_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// TestWaitRecommendationKeepsFastPeerInStep: peer 0's clock runs 5% fast
// (63 ticks per second against 60). It honours each EventWaitRecommendation
// by skipping SkipFrames ticks. Over 40 s it gets recommendations regularly
// and, after the first seconds, never runs more than 2 frames ahead of the
// others. Before, the recommendation never fired (the last-recommendation
// frame started at -MaxInt32 and current-last overflowed int32), so the
// fast peer drifted to the prediction window and stalled there.
func TestWaitRecommendationKeepsFastPeerInStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 17, Default: transport.LinkConfig{Latency: 25 * time.Millisecond, Jitter: 3 * time.Millisecond}})
		defer net.Close()
		peers := newMatch(t, net, 3, rollback.Config{InputDelay: 2})
		periods := []time.Duration{time.Second / 63, time.Second / 60, time.Second / 60}
		next := make([]time.Time, len(peers))
		for i := range next {
			next[i] = time.Now()
		}
		skip := 0
		recs, maxGap, worst := 0, 0, 0
		start := time.Now()
		for time.Since(start) < 40*time.Second {
			// Run the peer whose tick is due first.
			k := 0
			for i := range peers {
				if next[i].Before(next[k]) {
					k = i
				}
			}
			if d := time.Until(next[k]); d > 0 {
				time.Sleep(d)
			}
			next[k] = next[k].Add(periods[k])
			p := peers[k]
			if k == 0 && skip > 0 {
				skip--
				p.s.Poll()
			} else {
				p.step(t)
			}
			for _, e := range p.s.Events() {
				p.events = append(p.events, e)
			}
			if k == 0 {
				for _, e := range p.events {
					if e.Kind == rollback.EventWaitRecommendation {
						recs++
						skip += e.SkipFrames
					}
				}
				p.events = p.events[:0]
			}
			gap := 0
			for _, o := range peers[1:] {
				gap = max(gap, int(peers[0].s.CurrentFrame()-o.s.CurrentFrame()))
			}
			worst = max(worst, gap)
			if time.Since(start) > 5*time.Second {
				maxGap = max(maxGap, gap)
			}
		}
		t.Logf("%d recommendations, largest lead %d after 5 s (%d overall), frames %d/%d/%d, stalls %d",
			recs, maxGap, worst, peers[0].s.CurrentFrame(), peers[1].s.CurrentFrame(), peers[2].s.CurrentFrame(), peers[0].s.Stats().Stalls)
		if recs < 10 {
			t.Errorf("only %d wait recommendations in 40 s for a clock 5%% fast", recs)
		}
		if maxGap > 2 {
			t.Errorf("the fast peer ran %d frames ahead, want at most 2", maxGap)
		}
	})
}
