package predict_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// TestRangeFaultsUnderLoss: with the default window (30 ticks, 500 ms at
// 60 Hz), a client 8 ticks ahead on links of 40 ms ± 10 ms losing 20% of
// their datagrams, receiving 400 ticks of moving bullets (one fired every
// 5 ticks), rarely sees a value older than the window. When the
// MessageNetwork retransmitted a lost reliable message after 200 ms
// (now QUIC's probe timeout, 120 ms here) and every late value of a
// held-up batch was a range fault (now those a newer one supersedes are
// not), seeds 1..5 gave 480, 39, 158, 0 and 103 range faults and dropped
// 5, 1, 4, 0 and 2 predicted spawns; with the probe timeout alone, 0, 0,
// 0, 0 and 36 range faults; now 0, 0, 0, 0 and 3, and seed 5 drops one
// spawn (its update, lost twice and held behind another, arrives 31 ticks
// after its tick).
func TestRangeFaultsUnderLoss(t *testing.T) {
	// Range faults and dropped predicted spawns of seeds 1..5.
	want := [...]struct{ faults, dropped uint64 }{{0, 0}, {0, 0}, {0, 0}, {0, 0}, {3, 1}}
	for i, w := range want {
		seed := uint64(i + 1)
		synctest.Test(t, func(t *testing.T) {
			link := transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Reorder: 0.1}
			r := newSpawnRigLink(t, seed, link, 8, 30)
			defer r.close()
			_ = r.ammo.Store().Set(r.gun, Ammo{N: 1000})
			fired := 0
			for f := tick.Tick(30); f <= 200; f += 5 {
				r.clientFires[f], r.serverFires[f] = true, true
				fired++
			}
			r.stepTo(400)
			st := r.tl.Stats()
			t.Logf("seed %d: range faults %d, superseded %d, spawns matched %d dropped %d", seed, st.RangeFaults, st.Superseded, st.PredictedSpawnsMatched, st.PredictedSpawnsDropped)
			if st.RangeFaults != w.faults || st.PredictedSpawnsDropped != w.dropped || st.PredictedSpawnsMatched+w.dropped != uint64(fired) {
				t.Fatalf("seed %d: range faults %d, %d of %d spawns matched, %d dropped; want %d, %d dropped, the others matched",
					seed, st.RangeFaults, st.PredictedSpawnsMatched, fired, st.PredictedSpawnsDropped, w.faults, w.dropped)
			}
		})
	}
}
