package predict_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// slowClient is a frameClient whose frames take time: cost per tick
// simulated or re-simulated, on virtual time.
type slowClient struct {
	*frameClient
	free    time.Duration // when its current frame's work is done
	last    time.Duration // when its previous frame began
	resim   uint64        // Timeline.Stats().TicksResimulated at the last frame
	work    []int         // ticks simulated + re-simulated per frame
	elapsed []time.Duration
}

// runSlow plays ticks server ticks on virtual time with the clients'
// frames costing cost per tick of work: a client starts a frame at the
// next vsync (every step) once its previous frame's work is done.
func runSlow(t *testing.T, r *frameRig, clients []*slowClient, ticks int, cost time.Duration) {
	const step = time.Second / 60
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	for r.tick < tick.Tick(ticks) {
		r.tick++
		if err := r.server.step(r.tick); err != nil {
			t.Fatal(err)
		}
		for _, c := range clients {
			if now() < c.free {
				continue
			}
			el := now() - c.last
			c.last = now()
			held := c.frame.Stats().HeldFrames
			n := c.frame.Frame(el, c.input, c.sim)
			rs := c.tl.Stats().TicksResimulated
			w := n + int(rs-c.resim)
			c.resim = rs
			c.work = append(c.work, w)
			c.elapsed = append(c.elapsed, el)
			c.free = now() + time.Duration(w)*cost
			// The history equals the server's at the complete ticks once
			// a Step has checked them: not while rollbacks are held.
			if n > 0 && c.frame.Stats().HeldFrames == held {
				if err := c.check(r.server); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(step)
	}
}

func meanInts(v []int) float64 {
	s := 0
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(max(len(v), 1))
}

// TestNoDeathSpiral: on a 150 ms RTT path with 10% loss and 20 ms of
// jitter, two clients whose frames cost time per tick simulated or
// re-simulated, on virtual time. At 1.5 ms a tick, a frame that rolls
// back the ~17 ticks the lead asks for costs about 1.5 times the 16.7 ms
// tick budget; at 5 ms, about 6 times, and a frame is slower than a tick
// however it is cut. The work per frame does not climb (the same in the
// last third of the run as in the one before), the clients stay ahead of
// the server, and at 1.5 ms under 1% of their inputs are missing at the
// server (those of the first second included), at 5 ms under 5% (the
// clients are overloaded: ClientFrame holds rollbacks until as many new
// ticks were simulated, carries the steps a frame cannot run to the next
// frames, and the tick sync widens the margin by the gap between frames,
// whose inputs go out together). Without those, at 5 ms a client fell
// behind the server's clock (19% missing), and at 8 ms it collapsed:
// lead -4, 30 snaps back, 80% missing. Their history at every complete
// tick, once checked, is the server's.
func TestNoDeathSpiral(t *testing.T) {
	link := transport.LinkConfig{Latency: 75 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.1}
	for _, tc := range []struct {
		cost    time.Duration
		missing float64
	}{{1500 * time.Microsecond, 0.01}, {5 * time.Millisecond, 0.05}} {
		synctest.Test(t, func(t *testing.T) {
			const step = time.Second / 60
			net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 9})
			defer net.Close()
			s := newFrameServer(t)
			defer s.srv.Close()
			r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 2, link, 9)}
			r.connect(step)
			var slow []*slowClient
			for _, c := range r.clients {
				slow = append(slow, &slowClient{frameClient: c})
			}
			runSlow(t, r, slow, 1500, tc.cost)
			for i, c := range slow {
				n := len(c.work)
				mid, end := meanInts(c.work[n/3:2*n/3]), meanInts(c.work[2*n/3:])
				st := c.tl.Stats()
				in := s.frame.Buffer().Stats(c.rc.ID())
				lead := c.tl.Now().Sub(r.tick)
				t.Logf("%v a tick: client %d: %d frames, work per frame %.1f then %.1f ticks, lead %d, rollbacks %d (%d resimulated), inputs missing %d of %d, frame %+v",
					tc.cost, i, n, mid, end, lead, st.Rollbacks, st.TicksResimulated, in.Missing, r.tick, c.frame.Stats())
				if end > 1.3*mid || end > 40 {
					t.Errorf("%v: client %d: work per frame grew from %.1f to %.1f ticks", tc.cost, i, mid, end)
				}
				if lead < 1 || lead > 40 {
					t.Errorf("%v: client %d: lead %d over the server's present", tc.cost, i, lead)
				}
				if float64(in.Missing) > tc.missing*float64(r.tick) {
					t.Errorf("%v: client %d: %d of %d inputs missing", tc.cost, i, in.Missing, r.tick)
				}
			}
		})
	}
}
