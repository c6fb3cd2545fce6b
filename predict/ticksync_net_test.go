package predict_test

import (
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// pathResult is what a client saw on a path (syncOnPath).
type pathResult struct {
	leads             []int32 // true lead over the server's present, each frame after the first second
	snaps             uint64  // snaps after the first second
	inputs, late, mis uint64  // inputs the server simulated after the first second; late, missing
	sync              predict.SyncStats
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
		var in0 []predict.InputStats
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

// TestTickSyncOnLossyPath is issue 20's first figure on the in-memory
// network: 60 ms RTT and 20% loss client-to-server, the library's
// defaults through ClientFrame.
func TestTickSyncOnLossyPath(t *testing.T) {
	up := transport.LinkConfig{Latency: 30 * time.Millisecond, Loss: 0.2}
	down := transport.LinkConfig{Latency: 30 * time.Millisecond}
	res := syncOnPath(t, 1, 4, 1260, up, down)
	_ = res
}

// TestTickSyncOnInternetPath: 150 ms RTT, 10% loss each way, 20 ms jitter.
func TestTickSyncOnInternetPath(t *testing.T) {
	link := transport.LinkConfig{Latency: 75 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.1}
	res := syncOnPath(t, 2, 4, 1260, link, link)
	_ = res
}

var _ = replicate.ClientID(0)
