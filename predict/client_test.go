package predict_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/ticksync"
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
		var settled ticksync.Stats
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
// the Timeline's range faults ask the server for a resync, and the
// history between the reconnect and the resync is what Confirmed says.
// Two clients on a lossy link (20 ms ± 5 ms, 10% loss); client 0's link
// to the server is cut for 200 ticks (its window is 120) while the server
// and client 1 keep ticking and the ships keep firing. When it heals, the
// server's updates held up in the meantime bring values and despawns
// older than the window: range faults, one resync request naming the
// first (the next ones are within the request interval), one full
// resync. Every complete tick client 0 checks between the reconnect and
// the resync is not Confirmed, and its history there already holds the
// server's entities, each bullet's FBullet (predicted, sent once in its
// spawn's update, like a velocity given at spawn) and no entity the
// server despawned (the old spawn values and despawns apply from the
// oldest tick held; applied at Now, they fail this test);
// from the resync's tick on, every complete tick is Confirmed and equals
// the server's state; client 1 is never disturbed. No checksum report
// (every 10 ticks) differs.
func TestClientFrameResyncOnRangeFault(t *testing.T) {
	unconfirmed := 0 // over the seeds: how many ticks the stretch held depends on them
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				unconfirmed += resyncAfterCut(t, seed)
			})
		})
	}
	// The stretch is short: 8 ticks over the 6 seeds. (It was 20 and more
	// while acks were reliable: the resync request waited behind the acks
	// client 0 queued during the cut. Since wire version 7 they travel
	// unreliably and are lost with the cut.)
	if unconfirmed < 5 {
		t.Fatalf("%d complete ticks unconfirmed between the reconnects and the resyncs over 6 seeds, want at least 5", unconfirmed)
	}
}

// resyncAfterCut runs TestClientFrameResyncOnRangeFault with a seed and
// returns the number of unconfirmed complete ticks client 0 checked.
func resyncAfterCut(t *testing.T, seed uint64) int {
	{
		const step = time.Second / 60
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
		defer net.Close()
		s := newFrameServer(t, func(c *replicate.ServerConfig) { c.ChecksumInterval = 10 })
		defer s.srv.Close()
		link := transport.LinkConfig{Latency: 60 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.1}
		r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 2, link, seed, func(c *replicate.ClientConfig) { c.ChecksumInterval = 10 })}
		r.connect(step)
		c, other := r.clients[0], r.clients[1]
		var reasons []string
		run := func(n int) {
			for range n {
				r.frame(step)
				for _, ev := range s.srv.Events() {
					if ev.Kind == replicate.ClientResync {
						reasons = append(reasons, ev.Reason)
					}
				}
				time.Sleep(step)
			}
		}
		run(60)
		srvAddr := c.conn.RemoteAddr()
		net.Partition(c.conn.LocalAddr(), srvAddr)
		run(200)
		if st := c.tl.Stats(); st.RangeFaults != 0 || len(reasons) != 0 {
			t.Fatalf("during the cut: %d range faults, resyncs %q", st.RangeFaults, reasons)
		}
		healed, before := c.tl.Now(), c.checked
		net.Heal(c.conn.LocalAddr(), srvAddr)
		c.cut = true
		run(180)
		st := c.tl.Stats()
		if st.RangeFaults == 0 || st.Resyncs != 1 || c.rc.Stats().ResyncRequests != 1 || len(reasons) != 1 || !strings.HasPrefix(reasons[0], "client request: range fault at tick ") {
			t.Fatalf("after the cut: timeline %+v, %d requests sent, server resyncs %q; want range faults, one request, one resync", st, c.rc.Stats().ResyncRequests, reasons)
		}
		if c.unconfirmed > 0 && !c.lastUnconf.Before(st.LastResync) {
			t.Fatalf("%d complete ticks unconfirmed, the newest %v, resync at %v: want all before the resync", c.unconfirmed, c.lastUnconf, st.LastResync)
		}
		if c.checked < before+100 || !c.last.After(st.LastResync) {
			t.Fatalf("%d complete ticks confirmed after the cut (newest %v, resync at %v), want at least 100", c.checked-before, c.last, st.LastResync)
		}
		if n := other.tl.Stats().RangeFaults; n != 0 || other.unconfirmed != 0 || other.checked < 350 {
			t.Fatalf("client 1: %d range faults, %d unconfirmed ticks, %d confirmed", n, other.unconfirmed, other.checked)
		}
		// Checksum reports (every 10 ticks) describe the confirmed state:
		// none differs, before the cut or after the resync.
		for i, fc := range r.clients {
			ss, _ := s.srv.Stats(fc.rc.ID())
			if ts := fc.tl.Stats(); ss.Desyncs != 0 || ts.ChecksumsReported < 10 {
				t.Fatalf("client %d: %d desyncs, %d checksum reports sent, %d dropped", i, ss.Desyncs, ts.ChecksumsReported, ts.ChecksumsDropped)
			}
		}
		t.Logf("healed at %v; range faults %d (last %v), superseded %d, resync at %v; %d ticks unconfirmed (%d bodies differed), %d confirmed after",
			healed, st.RangeFaults, st.LastRangeFault, st.Superseded, st.LastResync, c.unconfirmed, c.bodyDiffs, c.checked-before)
		return c.unconfirmed
	}
}

// TestServerEntityAfterDespawn: replicate forgets a client entity's
// server id when the server despawns it, but the Timeline keeps the World
// entity (its despawn marker) for the window, and its history still holds
// it at the ticks before the despawn: Timeline.ServerEntity still gives
// the id, the right one, until the entity leaves the World.
func TestServerEntityAfterDespawn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = time.Second / 60
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 2})
		defer net.Close()
		s := newFrameServer(t)
		defer s.srv.Close()
		r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 1, transport.LinkConfig{Latency: 30 * time.Millisecond, Loss: 0.05}, 2)}
		r.connect(step)
		c := r.clients[0]
		kept, left := 0, 0
		for range 300 {
			r.frame(step)
			time.Sleep(step)
			for se, ce := range c.cliEnt {
				if _, mapped := c.rc.ServerEntity(ce); mapped {
					continue
				}
				got, ok := c.tl.ServerEntity(ce)
				switch {
				case c.w.Alive(ce) && (!ok || got != se):
					t.Fatalf("entity %v, despawned by the server, still in the World: ServerEntity %v %v, want %v", ce, got, ok, se)
				case !c.w.Alive(ce) && ok:
					t.Fatalf("entity %v gone from the World: ServerEntity %v, want none", ce, got)
				case ok:
					kept++
				default:
					left++
				}
			}
		}
		if kept == 0 || left == 0 {
			t.Fatalf("%d checks of despawned entities still held, %d of entities gone: want both", kept, left)
		}
		t.Logf("%d checks of despawned entities still held, %d of entities gone", kept, left)
	})
}
