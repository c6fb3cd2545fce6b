package predict_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// sumInterval is the checksum report interval of the desync tests.
const sumInterval = 10

// newSumRig is newWireRig with desync detection: both sides check
// checksums every sumInterval ticks, the server resyncs on a desync, and
// the client is wired by Attach (its checksum source included). held
// false leaves the client's reports to replicate alone (the World's
// predicted values), as before AttachChecksum.
func newSumRig(t *testing.T, seed uint64, link transport.LinkConfig, cfg predict.Config, lead int, held bool, posOpts ...predict.Option) *wireRig {
	t.Helper()
	r := &wireRig{t: t, memServer: newMemServer(t, seed, replicate.ServerConfig{Protocol: wireProtocol(t),
		ChecksumInterval: sumInterval, ResyncOnDesync: held}),
		cw: ecs.New(), cliEnt: map[ecs.Entity]ecs.Entity{}, states: map[tick.Tick][]entState{}}
	var err error
	r.ssim = moveQuery(r.sw)
	if r.client, err = replicate.NewClient(replicate.ClientConfig{World: r.cw, Protocol: wireProtocol(t),
		ChecksumInterval: sumInterval}); err != nil {
		t.Fatal(err)
	}
	r.start = tick.Tick(lead)
	r.tl = predict.New(r.cw, r.start, cfg)
	if r.pos, err = predict.Register[RPos](r.tl, posOpts...); err != nil {
		t.Fatal(err)
	}
	if r.vel, err = predict.Register[RVel](r.tl); err != nil {
		t.Fatal(err)
	}
	if r.tgt, err = predict.Register[RTarget](r.tl); err != nil {
		t.Fatal(err)
	}
	predict.Attach(r.client, r.tl)
	if !held {
		r.client.HoldChecksums(nil)
	}
	hooks := predict.Hooks(r.tl) // Attach's, with the test's record of every mapping
	hooks.Spawn = func(ce ecs.Entity, _ tick.Tick) {
		se, _ := r.client.ServerEntity(ce)
		r.cliEnt[se] = ce
	}
	r.client.SetClientHooks(hooks)
	for _, err := range []error{
		predict.AttachComponent(r.client, r.pos),
		predict.AttachComponent(r.client, r.vel),
		predict.AttachComponent(r.client, r.tgt),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	r.csim = moveQuery(r.cw)
	conn := dialMem(t, r.net, r.ln, r.srv)
	if err := r.client.Connect(conn); err != nil {
		t.Fatal(err)
	}
	r.caddr = conn.LocalAddr()
	r.setLink(link)
	return r
}

// sumEvents are the desync and resync events of a run.
type sumEvents struct {
	srv    []replicate.ServerEvent // ClientDesync
	cli    []replicate.ClientEvent // EventDesync
	resync []replicate.ServerEvent // ClientResync
}

// stepSum steps the rig until frame to, collecting the events.
func (r *wireRig) stepSum(to tick.Tick, change func(tick.Tick), ev *sumEvents) {
	r.t.Helper()
	for r.frame < to {
		r.step(change)
		for _, e := range r.srv.Events() {
			switch e.Kind {
			case replicate.ClientDesync:
				ev.srv = append(ev.srv, e)
			case replicate.ClientResync:
				ev.resync = append(ev.resync, e)
			}
		}
		for _, e := range r.client.Events() {
			if e.Kind == replicate.EventDesync {
				ev.cli = append(ev.cli, e)
			}
		}
	}
}

// randomChanges is the server's unpredictable play of the property test:
// spawns, despawns, new velocities and positions, new tags.
func (r *wireRig) randomChanges(rnd *rand.Rand, ents *[]ecs.Entity) func(tick.Tick) {
	nonzero := func() int64 { return int64(rnd.IntN(7)) - 3 | 1 }
	return func(tick.Tick) {
		switch x := rnd.IntN(100); {
		case x < 6 || len(*ents) < 3:
			*ents = append(*ents, r.spawn(int64(rnd.IntN(100)), nonzero(), int32(len(*ents))))
		case x < 10 && len(*ents) > 3:
			k := rnd.IntN(len(*ents))
			_ = r.sw.Despawn((*ents)[k])
			*ents = slices.Delete(*ents, k, k+1)
		case x < 30:
			_ = ecs.StoreOf[RVel](r.sw).Set((*ents)[rnd.IntN(len(*ents))], RVel{nonzero()})
		case x < 40:
			_ = ecs.StoreOf[RPos](r.sw).Set((*ents)[rnd.IntN(len(*ents))], RPos{int64(rnd.IntN(1000))})
		case x < 45:
			_ = ecs.StoreOf[RTag](r.sw).Set((*ents)[rnd.IntN(len(*ents))], RTag{int32(rnd.IntN(1000))})
		}
	}
}

// TestChecksumPredictingNoFalseDesync: a client predicting 6 ticks ahead
// on links losing 20% of their datagrams (jitter, duplication,
// reordering), while the server spawns, despawns and changes entities at
// random (mispredictions and rollbacks every few ticks), reports the
// checksum of its confirmed state every 10 ticks: over 600 ticks every
// report the server checks matches (no desync, no resync), and most
// report ticks are checked. Without the checksum source (replicate
// summing the World, which holds predictions), the same run reports
// desyncs: the test sees the difference.
func TestChecksumPredictingNoFalseDesync(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		for _, held := range []bool{true, false} {
			synctest.Test(t, func(t *testing.T) {
				link := transport.LinkConfig{Latency: 25 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Duplicate: 0.05, Reorder: 0.1}
				r := newSumRig(t, seed, link, predict.Config{Window: 60}, 6, held)
				defer r.close()
				rnd := rand.New(rand.NewPCG(seed, 7))
				var ents []ecs.Entity
				var ev sumEvents
				r.stepSum(6, nil, &ev)
				r.stepSum(600, r.randomChanges(rnd, &ents), &ev)
				r.setLink(transport.LinkConfig{Latency: 25 * time.Millisecond})
				r.stepSum(640, nil, &ev)
				st, _ := r.srv.Stats(r.client.ID())
				ts := r.tl.Stats()
				if !held {
					if st.Desyncs == 0 {
						t.Fatalf("seed %d: the World's checksum of a predicting client matched: stats %+v", seed, st)
					}
					t.Logf("seed %d without the source: %d of %d reports differ", seed, st.Desyncs, st.ChecksumsChecked)
					return
				}
				if len(ev.srv) != 0 || len(ev.cli) != 0 || len(ev.resync) != 0 || st.Desyncs != 0 {
					t.Fatalf("seed %d: desyncs %v, client %v, resyncs %v", seed, ev.srv, ev.cli, ev.resync)
				}
				if ts.Rollbacks < 50 || ts.Types[0].Mispredictions == 0 {
					t.Fatalf("seed %d: %d rollbacks: the run mispredicted too little", seed, ts.Rollbacks)
				}
				// 64 report ticks; a report tick whose data is overtaken
				// by a later tick's under loss is skipped.
				if st.ChecksumsChecked < 30 || ts.ChecksumsReported != r.client.Stats().ChecksumsSent ||
					st.ChecksumsChecked+1 < ts.ChecksumsReported || ts.ChecksumsDropped != 0 {
					t.Fatalf("seed %d: server checked %d reports, client sent %d, timeline reported %d, dropped %d",
						seed, st.ChecksumsChecked, r.client.Stats().ChecksumsSent, ts.ChecksumsReported, ts.ChecksumsDropped)
				}
				t.Logf("seed %d: %d reports checked, %d rollbacks, %d entities, %d despawned entities",
					seed, st.ChecksumsChecked, ts.Rollbacks, len(ents), len(r.cliEnt)-len(ents))
			})
		}
	}
}

// TestChecksumPredictingDesyncRepaired: a predicting client whose
// confirmed state is corrupted (a predicted velocity the server never
// sends again, a non-predicted tag) reports the difference at the next
// report tick: the server and the client name the corrupted type alone,
// the server resyncs the client partially, and every later report is
// clean, the client's history again equal to the server's.
func TestChecksumPredictingDesyncRepaired(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(r *wireRig, ce ecs.Entity)
		part    string
		// server reports the tick whose report first holds the
		// corruption: the predicted history from the client's Now on,
		// the World's other types from the server tick not yet
		// complete on the client.
		server bool
	}{
		{"predicted", func(r *wireRig, ce ecs.Entity) {
			// A write the server never makes: kept through every
			// rollback, since the server never sends the velocity again.
			if err := r.vel.Insert(ce, r.tl.Now(), RVel{X: 7}); err != nil {
				r.t.Fatal(err)
			}
		}, name[RVel](t), false},
		{"replicated", func(r *wireRig, ce ecs.Entity) {
			_ = ecs.StoreOf[RTag](r.cw).Set(ce, RTag{ID: 99})
		}, name[RTag](t), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// No loss: every report tick is reported (under loss, a
				// tick overtaken by a later one's data is skipped).
				link := transport.LinkConfig{Latency: 25 * time.Millisecond}
				r := newSumRig(t, 2, link, predict.Config{Window: 60}, 6, true)
				defer r.close()
				var ev sumEvents
				var ents []ecs.Entity
				r.stepSum(6, nil, &ev)
				r.stepSum(7, func(tick.Tick) {
					for i := range 4 {
						ents = append(ents, r.spawn(int64(10*i), int64(i+1), int32(i)))
					}
				}, &ev)
				r.stepSum(100, nil, &ev)
				st, _ := r.srv.Stats(r.client.ID())
				if len(ev.srv)+len(ev.cli)+len(ev.resync) != 0 || st.ChecksumsChecked < 7 {
					t.Fatalf("before the corruption: events %+v, server stats %+v", ev, st)
				}
				ce, _ := r.client.ClientEntity(ents[2])
				r.skip = map[ecs.Entity]bool{ents[2]: true} // wrong until repaired, and in the window then
				tc.corrupt(r, ce)
				at := r.tl.Now()
				if tc.server {
					at = r.frame
				}
				r.stepSum(200, nil, &ev)
				if len(ev.srv) != 1 || len(ev.cli) != 1 || len(ev.resync) != 1 {
					t.Fatalf("after the corruption at %v: desyncs %+v, client %+v, resyncs %+v", at, ev.srv, ev.cli, ev.resync)
				}
				d := ev.srv[0]
				// The first report tick from the corruption's tick on.
				first := (at + sumInterval - 1) / sumInterval * sumInterval
				if d.Tick != first || !slices.Equal(d.Types, []string{tc.part}) {
					t.Fatalf("desync %+v after a corruption at %v, want tick %v naming %q", d, at, first, tc.part)
				}
				if c := ev.cli[0]; c.Tick != d.Tick || !slices.Equal(c.Types, d.Types) {
					t.Fatalf("client event %+v, server %+v", c, d)
				}
				if rs := ev.resync[0]; rs.Resync != replicate.ResyncPartial || rs.Tick.Before(d.Tick) {
					t.Fatalf("resync %+v, want a partial one after tick %v", rs, d.Tick)
				}
				// The repair reached the history: once the corrupted ticks
				// left the window, check compares the entity again.
				r.skip = nil
				r.stepSum(240, nil, &ev)
				after, _ := r.srv.Stats(r.client.ID())
				if len(ev.srv) != 1 || after.Desyncs != 1 || after.ChecksumsChecked < st.ChecksumsChecked+10 || after.ResyncKinds.Partial != 1 {
					t.Fatalf("server stats %+v: want one desync, one partial resync and clean reports since", after)
				}
				// The tag is the World's: equal to the server's again.
				for _, e := range ents {
					ce, _ := r.client.ClientEntity(e)
					want, _ := ecs.StoreOf[RTag](r.sw).Get(e)
					if got, _ := ecs.StoreOf[RTag](r.cw).Get(ce); got != want {
						t.Fatalf("tag of %v is %v, server %v", e, got, want)
					}
				}
			})
		})
	}
}

// name is the checksum part name of component T (replicate's name of T).
func name[T any](t *testing.T) string {
	t.Helper()
	c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: wireProtocol(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := replicate.NewComponentSummer[T](c)
	if err != nil {
		t.Fatal(err)
	}
	return s.Name()
}

// TestChecksumClientFrame: ClientFrame wires the checksum source by
// default. Three clients with random inputs (each mispredicts the
// others' ships and bullets, spawned and despawned by the server) on
// links losing 10% of their datagrams report every 10 ticks for 900
// ticks: every report checked matches.
func TestChecksumClientFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step = time.Second / 60
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 3})
		defer net.Close()
		s := newFrameServer(t, func(c *replicate.ServerConfig) { c.ChecksumInterval = sumInterval })
		defer s.srv.Close()
		link := transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1}
		r := &frameRig{t: t, server: s, clients: connectMem(t, net, s, 3, link, 3,
			func(c *replicate.ClientConfig) { c.ChecksumInterval = sumInterval })}
		r.connect(step)
		for r.tick < 900 {
			r.frame(step)
			time.Sleep(step)
		}
		for _, ev := range s.srv.Events() {
			if ev.Kind == replicate.ClientDesync {
				t.Fatalf("desync: %+v", ev)
			}
		}
		for _, c := range r.clients {
			st, _ := s.srv.Stats(c.rc.ID())
			ts := c.tl.Stats()
			t.Logf("client %d: %d reports checked, %d rollbacks, %d mispredictions", c.idx, st.ChecksumsChecked, ts.Rollbacks, ts.Types[0].Mispredictions)
			if st.Desyncs != 0 || st.ChecksumsChecked < 50 || ts.Rollbacks == 0 || ts.ChecksumsReported != c.rc.Stats().ChecksumsSent {
				t.Fatalf("client %d: server stats %+v, timeline %+v", c.idx, st, ts)
			}
		}
	})
}

// TestChecksumCompareTolerance: a predicted type with a compare function
// keeps a prediction the compare accepts (a server nudge of one unit
// under a tolerance of two: no rollback), so the history differs from the
// server's values; the report sums the authoritative values of its tick
// instead, and no desync is reported.
func TestChecksumCompareTolerance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		near := predict.Compare(func(a, b RPos) bool { return max(a.X-b.X, b.X-a.X) <= 2 })
		r := newSumRig(t, 1, transport.LinkConfig{Latency: 25 * time.Millisecond}, predict.Config{Window: 30}, 6, true, near)
		defer r.close()
		var ev sumEvents
		var e ecs.Entity
		r.stepSum(6, nil, &ev)
		r.stepSum(7, func(tick.Tick) { e = r.spawn(0, 1, 1) }, &ev)
		r.stepSum(50, nil, &ev)
		r.skip = map[ecs.Entity]bool{e: true} // its history keeps the prediction
		rollbacks := r.tl.Stats().Rollbacks
		r.stepSum(51, func(tick.Tick) { ecs.StoreOf[RPos](r.sw).Ptr(e).X++ }, &ev)
		r.stepSum(150, nil, &ev)
		ce, _ := r.client.ClientEntity(e)
		got, _ := r.pos.At(ce, 140)
		var want RPos
		for _, s := range r.states[140] {
			if s.se == e {
				want = s.pos
			}
		}
		st, _ := r.srv.Stats(r.client.ID())
		if got.X != want.X-1 || r.tl.Stats().Rollbacks != rollbacks {
			t.Fatalf("history at 140 %v, server %v, rollbacks %d then %d: want the prediction kept, one unit behind",
				got, want, rollbacks, r.tl.Stats().Rollbacks)
		}
		if len(ev.srv) != 0 || st.Desyncs != 0 || st.ChecksumsChecked < 14 {
			t.Fatalf("desyncs %+v, server stats %+v", ev.srv, st)
		}
	})
}
