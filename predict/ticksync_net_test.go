package predict_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/predict/ticksync"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// pathResult is what a client saw on a path (syncOnPath).
type pathResult struct {
	leads             []int32 // true lead over the server's present, each frame after the first second
	snaps             uint64  // snaps after the first second
	inputs, late, mis uint64  // inputs the server simulated after the first second; late, missing
	sync              ticksync.Stats
	redundancy        int
	loss              float64
	estErr            []time.Duration // PresentLead minus the true lead
}

func (p pathResult) pct(q float64) int32 {
	s := slices.Clone(p.leads)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func (p pathResult) missFrac() float64 { return float64(p.mis) / float64(max(p.inputs, 1)) }

// syncOnPath runs n predicting clients (ClientFrame with every default)
// against a ServerFrame for ticks server ticks on the in-memory network,
// up being the client-to-server link and down the other way, with a
// client frame per server tick (render at the tick rate, frameCost the
// extra wall time a frame takes per tick it simulates, 0 for none). It
// returns per client the true lead over the server's present (the
// client's newest tick minus the server's, after both frames), the snaps
// and the inputs late or missing at the server after the first second.
func syncOnPath(t *testing.T, seed uint64, n, ticks int, up, down transport.LinkConfig) []pathResult {
	const step = time.Second / 60
	var out []pathResult
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
		defer net.Close()
		s := newFrameServer(t)
		defer s.srv.Close()
		ln, err := net.Listen(netip.AddrPort{})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		r := &frameRig{t: t, server: s}
		for i := range n {
			conn := dialMem(t, net, ln, s.srv)
			net.SetLink(conn.LocalAddr(), ln.Addr(), up)
			net.SetLink(ln.Addr(), conn.LocalAddr(), down)
			c := newFrameClient(t, i, conn, randomInputs(seed*100+uint64(i)))
			defer c.rc.Close()
			r.clients = append(r.clients, c)
		}
		r.connect(step)
		out = make([]pathResult, n)
		var snaps0 []uint64
		var in0 []input.Stats
		for r.tick < tick.Tick(ticks) {
			r.frame(step)
			if r.tick == 60 {
				for _, c := range r.clients {
					st := c.frame.Sync().Stats()
					snaps0 = append(snaps0, st.SnapsAhead+st.SnapsBack)
					in0 = append(in0, s.frame.Buffer().Stats(c.rc.ID()))
				}
			}
			if r.tick > 60 {
				for i, c := range r.clients {
					lead := c.tl.Now().Sub(r.tick)
					out[i].leads = append(out[i].leads, lead)
					out[i].estErr = append(out[i].estErr, c.frame.PresentLead()-time.Duration(lead)*step)
				}
			}
			time.Sleep(step)
		}
		for i, c := range r.clients {
			st := c.frame.Sync().Stats()
			in := s.frame.Buffer().Stats(c.rc.ID())
			out[i].snaps = st.SnapsAhead + st.SnapsBack - snaps0[i]
			out[i].inputs = uint64(ticks - 60)
			out[i].late, out[i].mis = in.Late-in0[i].Late, in.Missing-in0[i].Missing
			out[i].sync = st
			out[i].redundancy = c.frame.Sender().Redundancy()
			out[i].loss, _ = c.frame.Sync().Loss()
			p := out[i]
			slices.Sort(p.estErr)
			t.Logf("client %d: lead min %d p10 %d p50 %d p90 %d max %d; snaps after 1s %d; inputs missing %d late %d of %d (%.2f%%); loss %.3f K %d margin-jitter %v; est err p10 %v p90 %v; %+v",
				i, p.pct(0), p.pct(0.1), p.pct(0.5), p.pct(0.9), p.pct(1), p.snaps, p.mis, p.late, p.inputs, 100*p.missFrac(),
				p.loss, p.redundancy, c.frame.Sync().Jitter(), p.estErr[len(p.estErr)/10], p.estErr[len(p.estErr)*9/10], st)
		}
	})
	return out
}

// checkSettled asserts issue 20's figures of a settled client: after the
// first second its lead over the server's present is never behind (at
// least one tick), p10..p90 within 3 ticks, no snap, under 1% of its
// inputs missing at the server, and its own estimate of the lead within a
// tick of the truth for 80% of its frames.
func checkSettled(t *testing.T, name string, res []pathResult) {
	t.Helper()
	for i, p := range res {
		est := slices.Clone(p.estErr)
		slices.Sort(est)
		const step = time.Second / 60
		switch {
		case p.pct(0) < 1:
			t.Errorf("%s, client %d: lead %d ticks over the server's present: behind it", name, i, p.pct(0))
		case p.pct(0.9)-p.pct(0.1) > 3:
			t.Errorf("%s, client %d: lead p10 %d, p90 %d: more than 3 ticks apart", name, i, p.pct(0.1), p.pct(0.9))
		case p.snaps != 0:
			t.Errorf("%s, client %d: %d snaps after the first second", name, i, p.snaps)
		case p.missFrac() >= 0.01:
			t.Errorf("%s, client %d: %d of %d inputs missing at the server", name, i, p.mis, p.inputs)
		case est[len(est)/10] < -step || est[len(est)*9/10] > step:
			t.Errorf("%s, client %d: PresentLead off by %v..%v (p10..p90)", name, i, est[len(est)/10], est[len(est)*9/10])
		}
	}
}

// TestTickSyncOnLossyPath is issue 20's first figure on the in-memory
// network: 60 ms RTT and 20% loss client-to-server, the library's
// defaults through ClientFrame, 4 clients, 20 s, three seeds. Measured
// the tick sync raised redundancy to 5 or 6 inputs per message (loss
// measured 19-23%: 3 ticks of loss margin), and 0-1 of 1200 inputs per
// client went missing after the first second (it was 3.8-4.4% with the
// lead over complete ticks and a fixed redundancy of 3).
func TestTickSyncOnLossyPath(t *testing.T) {
	up := transport.LinkConfig{Latency: 30 * time.Millisecond, Loss: 0.2}
	down := transport.LinkConfig{Latency: 30 * time.Millisecond}
	for seed := uint64(1); seed <= 3; seed++ {
		res := syncOnPath(t, seed, 4, 1260, up, down)
		checkSettled(t, fmt.Sprintf("seed %d", seed), res)
		for i, p := range res {
			if p.redundancy < 5 || p.loss < 0.12 || p.loss > 0.3 {
				t.Errorf("seed %d, client %d: redundancy %d at a measured loss of %.3f", seed, i, p.redundancy, p.loss)
			}
		}
	}
}

// TestTickSyncOnInternetPath: 150 ms RTT, 10% loss each way and 20 ms
// jitter (uniform, each datagram), 4 clients, 20 s, three seeds: the
// "internet" preset of rewind demo predict, on the in-memory network.
func TestTickSyncOnInternetPath(t *testing.T) {
	link := transport.LinkConfig{Latency: 75 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.1}
	for seed := uint64(1); seed <= 3; seed++ {
		checkSettled(t, fmt.Sprintf("seed %d", seed), syncOnPath(t, seed, 4, 1260, link, link))
	}
}

// TestTickSyncOnCleanPath: no loss, no jitter, 1 ms each way (the
// loopback case where a client used to settle exactly on its target
// while every input reached the server a tick late): no input missing
// after the first second.
func TestTickSyncOnCleanPath(t *testing.T) {
	link := transport.LinkConfig{Latency: time.Millisecond}
	for seed := uint64(1); seed <= 3; seed++ {
		res := syncOnPath(t, seed, 2, 660, link, link)
		checkSettled(t, fmt.Sprintf("seed %d", seed), res)
		for i, p := range res {
			if p.mis != 0 || p.late != 0 {
				t.Errorf("seed %d, client %d: %d missing, %d late after the first second", seed, i, p.mis, p.late)
			}
		}
	}
}

// TestTickSyncServerStall: the server stalls for a second (a long GC, a
// descheduled process) and then ticks on from where it was, without
// catching up: its ticks are now 60 behind the clients' clocks. Each
// client sees its inputs arrive a second early, waits (one or two snaps
// ahead: the messages sent during the stall arrive at once, a ramp of
// offsets), and settles at the lead it had; it does not wait again and
// again (a wait the error did not account for as it elapsed made
// clients wait without end), nor snap back, and after two seconds it
// does not snap at all.
func TestTickSyncServerStall(t *testing.T) {
	const step = time.Second / 60
	link := transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 5 * time.Millisecond}
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 4})
		defer net.Close()
		s := newFrameServer(t)
		defer s.srv.Close()
		r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 2, link, 4)}
		r.connect(step)
		var before []int32
		for r.tick < 300 {
			r.frame(step)
			time.Sleep(step)
		}
		for _, c := range r.clients {
			before = append(before, c.tl.Now().Sub(r.tick))
		}
		// A second without server ticks; the clients render on.
		for range 60 {
			for _, c := range r.clients {
				c.frame.Frame(step, c.input, c.sim)
			}
			time.Sleep(step)
		}
		var mid []ticksync.Stats
		for r.tick < 900 {
			r.frame(step)
			if r.tick == 420 {
				for _, c := range r.clients {
					mid = append(mid, c.frame.Sync().Stats())
				}
			}
			time.Sleep(step)
		}
		for i, c := range r.clients {
			st := c.frame.Sync().Stats()
			lead := c.tl.Now().Sub(r.tick)
			t.Logf("client %d: lead %d before the stall, %d at the end; %+v", i, before[i], lead, st)
			if st.SnapsAhead < 1 || st.SnapsAhead > 2 || st.SnapsBack != 1 || lead < before[i]-1 || lead > before[i]+1 {
				t.Fatalf("client %d: %d snaps ahead, %d back, lead %d (was %d): want a wait or two, the first sync's snap back, the same lead", i, st.SnapsAhead, st.SnapsBack, lead, before[i])
			}
			if st.SnapsAhead != mid[i].SnapsAhead {
				t.Fatalf("client %d snapped after tick 420: %+v, then %+v", i, mid[i], st)
			}
		}
	})
}
