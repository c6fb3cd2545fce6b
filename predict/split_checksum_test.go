package predict_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// interpolatedSE reports whether the split rigs interpolate server entity
// se: odd indices are interpolated, the others predicted.
func interpolatedSE(se ecs.Entity) bool { return se.Index()%2 == 1 }

// newSplitSumRig is newSumRig (desync detection, resync on a desync) with
// RPos split by AttachSplit: the client interpolates the entities of odd
// server index (their positions go to the returned buffer; without RPos
// in the World, the client does not move them) and predicts the others.
// The game's hooks complete the buffer's ticks and remove despawned
// entities from it.
func newSplitSumRig(t *testing.T, seed uint64, link transport.LinkConfig) (*wireRig, *interp.Buffer[RPos]) {
	t.Helper()
	r := newSumRig(t, seed, link, predict.Config{Window: 60}, 6, true)
	buf := interp.NewBuffer(interp.Config{}, func(a, b RPos, f float64) RPos { return b })
	if err := predict.AttachSplit(r.client, r.pos, buf, func(ce ecs.Entity) bool {
		se, ok := r.client.ServerEntity(ce)
		return ok && interpolatedSE(se)
	}); err != nil {
		t.Fatal(err)
	}
	hooks := predict.Hooks(r.tl)
	despawn, complete := hooks.Despawn, hooks.TickComplete
	hooks.Spawn = func(ce ecs.Entity, _ tick.Tick) {
		se, _ := r.client.ServerEntity(ce)
		r.cliEnt[se] = ce
	}
	hooks.Despawn = func(ce ecs.Entity, t tick.Tick) bool {
		buf.Remove(ce)
		return despawn(ce, t)
	}
	hooks.TickComplete = func(t tick.Tick) {
		complete(t)
		buf.Complete(t)
	}
	r.client.SetClientHooks(hooks)
	return r, buf
}

// skipInterpolated leaves the interpolated entities among ents out of the
// rig's check of the predicted history (they have none).
func (r *wireRig) skipInterpolated(ents []ecs.Entity) {
	if r.skip == nil {
		r.skip = map[ecs.Entity]bool{}
	}
	for _, e := range ents {
		if interpolatedSE(e) {
			r.skip[e] = true
		}
	}
}

// TestChecksumSplitNoFalseDesync: an AttachSplit client interpolating
// half the entities' positions (those live in its Interpolated buffer,
// in neither the World nor the history) and predicting the others, on
// links losing 20% of their datagrams (jitter, duplication, reordering),
// while the server spawns, despawns, moves and teleports entities at
// random, reports every 10 ticks for 600 ticks: every report the server
// checks matches (the position part counts the buffer's value of each
// interpolated entity at the report's tick), and no report is dropped.
func TestChecksumSplitNoFalseDesync(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		synctest.Test(t, func(t *testing.T) {
			link := transport.LinkConfig{Latency: 25 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Duplicate: 0.05, Reorder: 0.1}
			r, buf := newSplitSumRig(t, seed, link)
			defer r.close()
			rnd := rand.New(rand.NewPCG(seed, 7))
			var ents []ecs.Entity
			var ev sumEvents
			change := r.randomChanges(rnd, &ents)
			interpolated := 0 // most interpolated entities alive at once
			r.stepSum(6, nil, &ev)
			r.stepSum(600, func(f tick.Tick) {
				change(f)
				r.skipInterpolated(ents)
				n := 0
				for _, e := range ents {
					if ce, ok := r.client.ClientEntity(e); ok && interpolatedSE(e) && buf.Len(ce) > 0 {
						n++
					}
				}
				interpolated = max(interpolated, n)
			}, &ev)
			r.setLink(transport.LinkConfig{Latency: 25 * time.Millisecond})
			r.stepSum(640, nil, &ev)
			st, _ := r.srv.Stats(r.client.ID())
			ts := r.tl.Stats()
			if len(ev.srv) != 0 || len(ev.cli) != 0 || len(ev.resync) != 0 || st.Desyncs != 0 {
				t.Fatalf("seed %d: desyncs %v, client %v, resyncs %v", seed, ev.srv, ev.cli, ev.resync)
			}
			if interpolated < 2 || ts.Rollbacks < 20 {
				t.Fatalf("seed %d: at most %d interpolated entities, %d rollbacks: the run exercised too little", seed, interpolated, ts.Rollbacks)
			}
			if st.ChecksumsChecked < 30 || ts.ChecksumsReported != r.client.Stats().ChecksumsSent ||
				st.ChecksumsChecked+1 < ts.ChecksumsReported || ts.ChecksumsDropped != 0 {
				t.Fatalf("seed %d: server checked %d reports, client sent %d, timeline reported %d, dropped %d",
					seed, st.ChecksumsChecked, r.client.Stats().ChecksumsSent, ts.ChecksumsReported, ts.ChecksumsDropped)
			}
			t.Logf("seed %d: %d reports checked, %d rollbacks, up to %d interpolated entities",
				seed, st.ChecksumsChecked, ts.Rollbacks, interpolated)
		})
	}
}

// TestChecksumSplitDesyncNamed: an interpolated entity's value is never
// simulated by the client, so it can only differ from the server's by a
// value the server never sent: here a position pushed into the buffer by
// the client, for an entity at rest that the server never sends again.
// The next report tick names the position type alone, the server resyncs
// the client partially, its value reaches the buffer again, and every
// later report is clean.
func TestChecksumSplitDesyncNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, buf := newSplitSumRig(t, 2, transport.LinkConfig{Latency: 25 * time.Millisecond})
		defer r.close()
		var ev sumEvents
		var ents []ecs.Entity
		var rest ecs.Entity // interpolated, without velocity: never changes
		r.stepSum(6, nil, &ev)
		r.stepSum(7, func(tick.Tick) {
			for i := range 4 {
				ents = append(ents, r.spawn(int64(10*i), int64(i+1), int32(i)))
			}
			for !interpolatedSE(rest) {
				rest = r.sw.Spawn()
				_ = ecs.Register[replicate.Replicated](r.sw).Set(rest, replicate.Replicated{})
				_ = ecs.StoreOf[RPos](r.sw).Set(rest, RPos{500})
				_ = ecs.Register[RTag](r.sw).Set(rest, RTag{9})
				ents = append(ents, rest)
			}
			r.skipInterpolated(ents)
			for _, e := range ents[4:] {
				r.skip[e] = true // no velocity: the rig's record leaves it out
			}
		}, &ev)
		r.stepSum(100, nil, &ev)
		st, _ := r.srv.Stats(r.client.ID())
		if len(ev.srv)+len(ev.cli)+len(ev.resync) != 0 || st.ChecksumsChecked < 7 {
			t.Fatalf("before the corruption: events %+v, server stats %+v", ev, st)
		}
		ce, _ := r.client.ClientEntity(rest)
		at, _ := buf.Latest()
		if v, ok := buf.At(ce, at, 0); !ok || v != (RPos{500}) {
			t.Fatalf("entity at rest interpolated at %v: %v (%v), want {500}", at, v, ok)
		}
		buf.Push(ce, at, RPos{501})
		r.stepSum(200, nil, &ev)
		if len(ev.srv) != 1 || len(ev.cli) != 1 || len(ev.resync) != 1 {
			t.Fatalf("after the corruption at %v: desyncs %+v, client %+v, resyncs %+v", at, ev.srv, ev.cli, ev.resync)
		}
		d := ev.srv[0]
		// The first report tick after the corrupted tick (a report of at
		// itself was summed when at completed, before the push).
		first := (at/sumInterval + 1) * sumInterval
		if d.Tick != first || !slices.Equal(d.Types, []string{name[RPos](t)}) {
			t.Fatalf("desync %+v after a corruption at %v, want tick %v naming %q", d, at, first, name[RPos](t))
		}
		if c := ev.cli[0]; c.Tick != d.Tick || !slices.Equal(c.Types, d.Types) {
			t.Fatalf("client event %+v, server %+v", c, d)
		}
		if rs := ev.resync[0]; rs.Resync != replicate.ResyncPartial || rs.Tick.Before(d.Tick) {
			t.Fatalf("resync %+v, want a partial one after tick %v", rs, d.Tick)
		}
		now, _ := buf.Latest()
		if v, ok := buf.At(ce, now, 0); !ok || v != (RPos{500}) {
			t.Fatalf("entity at rest after the resync: %v (%v), want the server's {500}", v, ok)
		}
		r.stepSum(240, nil, &ev)
		after, _ := r.srv.Stats(r.client.ID())
		if len(ev.srv) != 1 || after.Desyncs != 1 || after.ChecksumsChecked < st.ChecksumsChecked+10 || after.ResyncKinds.Partial != 1 {
			t.Fatalf("server stats %+v: want one desync, one partial resync and clean reports since", after)
		}
	})
}
