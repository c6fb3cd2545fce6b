package predict_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// connect runs server receive phases and client updates until every
// client is connected, then spawns their ships.
func (r *frameRig) connect(step time.Duration) {
	r.t.Helper()
	for k := 0; ; k++ {
		r.server.srv.Receive()
		all := true
		for _, c := range r.clients {
			c.rc.Update()
			all = all && c.rc.State() == replicate.Connected
		}
		if all {
			break
		}
		if k > 600 {
			r.t.Fatal("clients not connected after 10 s")
		}
		time.Sleep(step)
	}
	r.addShips()
}

// TestChaosClientsConverge is issue 14's chaos test: 4 predicting clients
// with random inputs (held for a few ticks, firing now and then), on
// links losing 15% of their datagrams with 30 ms ± 15 ms of latency, 1200
// server ticks in virtual time. Every client runs the whole frame
// (ClientFrame: tick sync, inputs with redundancy, remote inputs,
// Timeline) against a ServerFrame. After every frame, each client's
// history at every complete server tick it received is compared with the
// server's state at that tick, exactly: the same entities (ships, and
// bullets spawned and despawned by the server), the same bodies.
func TestChaosClientsConverge(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		synctest.Test(t, func(t *testing.T) {
			const step = time.Second / 60
			net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
			defer net.Close()
			s := newFrameServer(t)
			defer s.srv.Close()
			link := transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 15 * time.Millisecond, Loss: 0.15}
			r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 4, link, seed)}
			r.connect(step)
			for r.tick < 1200 {
				r.frame(step)
				time.Sleep(step)
			}
			for _, c := range r.clients {
				st, in := c.tl.Stats(), s.frame.Buffer().Stats(c.rc.ID())
				fs := c.frame.Stats()
				t.Logf("seed %d client %d: checked %d complete ticks (last %v, %d out of the window), rollbacks %d, resimulated %d, mispredictions %d, ahead %d, inputs received %d missing %d late %d, steps %d",
					seed, c.idx, c.checked, c.last, c.stale, st.Rollbacks, st.TicksResimulated, st.Types[0].Mispredictions,
					c.frame.Ahead(), in.Received, in.Missing, in.Late, fs.Steps)
				// A tick completes when its mutation message is not lost:
				// about 85% of ~1190 ticks, 1010 ± 12; 960 is 4 deviations
				// below.
				if c.checked < 960 || c.last < 1150 {
					t.Errorf("client %d checked %d complete ticks, the last %v: want most of the 1200", c.idx, c.checked, c.last)
				}
				if st.Rollbacks == 0 || st.Types[0].Mispredictions == 0 {
					t.Errorf("client %d: no rollback: random remote inputs must be mispredicted", c.idx)
				}
				if st.RangeFaults != 0 {
					t.Errorf("client %d: %d range faults", c.idx, st.RangeFaults)
				}
				if in.Received < 1100 {
					t.Errorf("client %d: the server received %d inputs", c.idx, in.Received)
				}
			}
			if len(s.bullets) == 0 && len(s.states[r.tick]) <= 4 {
				t.Error("no bullet in flight at the end")
			}
		})
	}
}
