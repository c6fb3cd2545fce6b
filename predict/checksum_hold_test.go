package predict_test

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// TestChecksumHeldRollbacks: two predicting clients whose frames come
// every 4 ticks (15 frames a second at 60 Hz: overloaded, so ClientFrame
// holds their rollbacks, SlowFrame) report a checksum every 10 ticks. A
// report of tick T then waits through the held frames, several ticks,
// and bullets the server despawns after T (their FBody replicated Once,
// left out of the checksums on both sides) are no longer mapped by
// replicate when it is sent. Over 480 ticks the clients' history equals
// the server's state at every tick they confirm, and no report differs
// from the server's (it used to: the bodies of those bullets were counted
// in the report's FBody part: 23 and 22 of 46 reports, seed 1). Then
// client 0's bullet markers are corrupted, a real divergence the server
// never repairs (a marker is sent once): its reports, held the same way,
// name FBullet, and client 1's stay clean. The same with the overload
// protection off ("off", SlowFrame -1): a frame's Update then receives
// several ticks, despawns after T among them, before the Step that sends
// T's report (it used to give 7 false desyncs of 47, seed 1).
func TestChecksumHeldRollbacks(t *testing.T) {
	for _, tc := range []struct {
		name string
		slow time.Duration // ClientFrameConfig.SlowFrame
		seed uint64
	}{{"held", 0, 1}, {"held", 0, 2}, {"held", 0, 3}, {"off", -1, 1}, {"off", -1, 2}, {"off", -1, 3}} {
		seed := tc.seed
		synctest.Test(t, func(t *testing.T) {
			const step = time.Second / 60
			net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
			defer net.Close()
			s := newFrameServerOf(t, frameProtocolOnce, func(c *replicate.ServerConfig) { c.ChecksumInterval = 10 })
			defer s.srv.Close()
			s.slowFrame = tc.slow
			link := transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 5 * time.Millisecond}
			r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 2, link, seed, func(c *replicate.ClientConfig) { c.ChecksumInterval = 10 })}
			r.connect(step)
			desyncs := map[replicate.ClientID][]string{} // the types each desync named
			// run plays n server ticks, a frame of every client each 4th
			// (elapsed 4 ticks), checking a client's history after each
			// frame that did not hold its rollbacks; corrupt, when set,
			// runs before every frame of client 0.
			run := func(n int, corrupt func(c *frameClient)) {
				for k := range n {
					r.tick++
					if err := s.step(r.tick); err != nil {
						t.Fatal(err)
					}
					for _, ev := range s.srv.Events() {
						if ev.Kind == replicate.ClientDesync {
							desyncs[ev.Client] = append(desyncs[ev.Client], ev.Types...)
						}
					}
					if k%4 == 3 {
						for i, c := range r.clients {
							if i == 0 && corrupt != nil {
								corrupt(c)
							}
							held := c.frame.Stats().HeldFrames
							if c.frame.Frame(4*step, c.input, c.sim) > 0 && c.frame.Stats().HeldFrames == held && (i != 0 || corrupt == nil) {
								if err := c.check(s); err != nil {
									t.Fatal(err)
								}
							}
						}
					}
					time.Sleep(step)
				}
			}
			run(480, nil)
			for i, c := range r.clients {
				ss, _ := s.srv.Stats(c.rc.ID())
				ts, fs := c.tl.Stats(), c.frame.Stats()
				t.Logf("%s, seed %d, client %d: %d ticks confirmed, %d frames held of %d; %d reports sent (%d dropped), server checked %d: %d desyncs",
					tc.name, seed, i, c.checked, fs.HeldFrames, fs.Frames, ts.ChecksumsReported, ts.ChecksumsDropped, ss.ChecksumsChecked, ss.Desyncs)
				if held := fs.HeldFrames >= fs.Frames/4; held != (tc.slow == 0) {
					t.Fatalf("%s: client %d: %d of %d frames held their rollbacks: not the case tested", tc.name, i, fs.HeldFrames, fs.Frames)
				}
				if c.checked < 200 {
					t.Fatalf("client %d: %d ticks confirmed and compared, want at least 200", i, c.checked)
				}
				if ss.Desyncs != 0 || ss.ChecksumsChecked < 40 {
					t.Errorf("client %d: %d desyncs (%q) of %d reports checked; want none of at least 40", i, ss.Desyncs, slices.Compact(slices.Clone(desyncs[c.rc.ID()])), ss.ChecksumsChecked)
				}
			}
			// A real divergence: client 0's bullets get a marker the
			// server never had, a change from Now on (Insert).
			const bad = 1 << 30
			var bullets []ecs.Entity
			run(120, func(c *frameClient) {
				bullets = bullets[:0]
				for e, b := range ecs.StoreOf[FBullet](c.w).Values() {
					if b.Born < bad {
						bullets = append(bullets, e)
					}
				}
				for _, e := range bullets {
					b, _ := ecs.StoreOf[FBullet](c.w).Get(e)
					if err := c.bullet.Insert(e, c.tl.Now(), FBullet{Born: b.Born | bad}); err != nil {
						t.Fatal(err)
					}
				}
			})
			c0, c1 := r.clients[0], r.clients[1]
			got := desyncs[c0.rc.ID()]
			if len(got) == 0 {
				t.Fatalf("client 0, markers corrupted: no desync reported (%d reports sent)", c0.tl.Stats().ChecksumsReported)
			}
			for _, ty := range got {
				if !strings.HasSuffix(ty, ".FBullet") {
					t.Fatalf("client 0, markers corrupted: desyncs name %q, want FBullet only", got)
				}
			}
			if ss, _ := s.srv.Stats(c1.rc.ID()); ss.Desyncs != 0 {
				t.Fatalf("client 1: %d desyncs (%q)", ss.Desyncs, slices.Compact(slices.Clone(desyncs[c1.rc.ID()])))
			}
			t.Logf("%s, seed %d, markers corrupted: client 0: %d desyncs, naming %q", tc.name, seed, len(got), slices.Compact(slices.Clone(got)))
		})
	}
}
