package predict_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

func TestClientFrameNeedsRTT(t *testing.T) {
	_, in := frameProtocol(t)
	if _, err := predict.NewClientFrame[FInput](nil, nil, in, predict.ClientFrameConfig{}); !errors.Is(err, predict.ErrNoRTT) {
		t.Fatalf("err %v, want ErrNoRTT", err)
	}
}

// TestClientFrameRunsAhead: a client steps nothing (and sends no input)
// before the first complete server tick; then it catches up and, steered
// by the server's input reports, holds its inputs' arrival margin at the
// target: one tick of Safety and one of loss margin (none measured) with
// no jitter, 2 ticks. 30 ms each way is 1.8 ticks up and 1.8 down, so it
// runs 4 ticks ahead of the server's present and 6 of the newest
// complete tick, every frame. It sends one input per tick simulated, and
// the game's hooks are called after the Timeline's.
func TestClientFrameRunsAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = time.Second / 60
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 3})
		defer net.Close()
		s := newFrameServer(t)
		defer s.srv.Close()
		r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 1, transport.LinkConfig{Latency: 30 * time.Millisecond}, 3)}
		r.connect(step)
		c := r.clients[0]
		for range 5 {
			if n := c.frame.Frame(step, c.input, c.sim); n != 0 {
				t.Fatalf("stepped %d ticks before any server tick", n)
			}
			time.Sleep(step)
		}
		if st := c.frame.Stats(); st.Steps != 0 || st.Inputs != 0 || st.Frames != 5 || c.tl.Now() != 0 {
			t.Fatalf("before the server ticks: %+v, now %v", st, c.tl.Now())
		}
		var aheads, leads []int32
		var settled predict.SyncStats
		for r.tick < 300 {
			r.frame(step)
			if r.tick == 120 {
				settled = c.frame.Sync().Stats()
			}
			if r.tick > 120 {
				aheads = append(aheads, c.frame.Ahead())
				leads = append(leads, c.tl.Now().Sub(r.tick))
				est := c.frame.PresentLead() - time.Duration(c.tl.Now().Sub(r.tick))*step
				if est < -step || est > step {
					t.Fatalf("tick %v: PresentLead off by %v", r.tick, est)
				}
			}
			time.Sleep(step)
		}
		for i, a := range aheads {
			if a != 6 || leads[i] != 4 {
				t.Fatalf("ahead %v of the newest complete tick and %v of the server, want 6 and 4 (all: %v, %v)", a, leads[i], aheads, leads)
			}
		}
		// The inputs sent while catching up at the start are late (the
		// server simulated their ticks already); none after that.
		if ss := c.frame.Sync().Stats(); !c.frame.Sync().Steering() || ss.Missing != settled.Missing || ss.Missing > 8 || ss.Lost != 0 || ss.SnapsAhead+ss.SnapsBack != 1 {
			t.Fatalf("sync stats %+v (at tick 120: %+v): want steering by reports, one snap (the first sample), nothing lost, nothing missing after the start", ss, settled)
		}
		st := c.frame.Stats()
		if st.Inputs != st.Steps || uint64(c.tl.Now()) != st.Steps || st.InputErrors != 0 || st.Samples < 250 {
			t.Fatalf("stats %+v, now %v: want one input per step, a sample per server tick", st, c.tl.Now())
		}
		t.Logf("stats %+v, ahead %v..%v, %d bytes per input message", st, slices.Min(aheads), slices.Max(aheads), st.InputBytes/st.Inputs)
		// Each message carries 3 inputs of 2 bytes, the tick and headers.
		if per := st.InputBytes / st.Inputs; per < 8 || per > 16 {
			t.Fatalf("%d bytes per input message", per)
		}
		if c.checked < 250 || c.frame.Jitter() != 0 {
			t.Fatalf("checked %d ticks through the game's TickComplete hook; jitter %v on a link without", c.checked, c.frame.Jitter())
		}
	})
}

// TestClientFrameResyncOnRangeFault: NewClientFrame, like Attach, makes
// the Timeline's range faults ask the server for a resync. The client's
// link to the server is cut for 200 ticks (its window is 120) while both
// keep ticking and the ships keep firing; when it heals, the server's
// updates held up in the meantime bring values older than the window:
// range faults, one resync request naming the first (the next ones are
// within the request interval), one full resync, and the client's
// history at complete ticks equals the server's again.
func TestClientFrameResyncOnRangeFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = time.Second / 60
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 5})
		defer net.Close()
		s := newFrameServer(t)
		defer s.srv.Close()
		r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 1, transport.LinkConfig{Latency: 20 * time.Millisecond}, 5)}
		r.connect(step)
		c := r.clients[0]
		for range 60 {
			r.frame(step)
			time.Sleep(step)
		}
		srvAddr := c.conn.RemoteAddr()
		net.Partition(c.conn.LocalAddr(), srvAddr)
		var reasons []string
		run := func(n int) {
			for range n {
				r.tick++
				if err := s.step(r.tick); err != nil {
					t.Fatal(err)
				}
				c.frame.Frame(step, c.input, c.sim)
				for _, ev := range s.srv.Events() {
					if ev.Kind == replicate.ClientResync {
						reasons = append(reasons, ev.Reason)
					}
				}
				time.Sleep(step)
			}
		}
		run(200)
		if st := c.tl.Stats(); st.RangeFaults != 0 || len(reasons) != 0 {
			t.Fatalf("during the cut: %d range faults, resyncs %q", st.RangeFaults, reasons)
		}
		net.Heal(c.conn.LocalAddr(), srvAddr)
		run(120)
		st := c.tl.Stats()
		if st.RangeFaults == 0 || st.Resyncs != 1 || c.rc.Stats().ResyncRequests != 1 || len(reasons) != 1 || !strings.HasPrefix(reasons[0], "client request: range fault at tick ") {
			t.Fatalf("after the cut: timeline %+v, %d requests sent, server resyncs %q; want range faults, one request, one resync", st, c.rc.Stats().ResyncRequests, reasons)
		}
		// Compare again from the resync on (the range faults are known).
		c.pending, c.faults = c.pending[:0], st.RangeFaults
		before := c.checked
		for range 60 {
			r.frame(step)
			time.Sleep(step)
		}
		if c.checked < before+50 {
			t.Fatalf("%d complete ticks compared after the resync, want at least 50", c.checked-before)
		}
		t.Logf("range faults %d (last %v), resync at %v, %d ticks compared after", st.RangeFaults, st.LastRangeFault, st.LastResync, c.checked-before)
	})
}
