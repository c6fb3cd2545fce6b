package predict_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// TestAttachCorrectsUnpredictedChange: a server and a predicting client
// run the same simulation; at tick 40 the server pushes an entity (its
// velocity changes from 1 to 5), which the client, 4 ticks ahead, could
// not predict. The client rolls back to 40, re-simulates, logs the
// correction, and from then on its history at every complete tick equals
// the server's state; the replicated entities and their non-predicted
// components are untouched by the rollback.
func TestAttachCorrectsUnpredictedChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWireRig(t, 1, transport.LinkConfig{Latency: 30 * time.Millisecond}, predict.Config{Window: 16}, 4)
		defer r.close()
		for r.frame < 4 { // the client starts at tick 4
			r.step(nil)
		}
		var a, b ecs.Entity
		r.step(func(tick.Tick) {
			a = r.spawn(0, 1, 1)
			b = r.spawn(100, -1, 2)
		})
		// The spawn is a value for a past tick the history lacks: one
		// rollback to it. Count from when it has settled.
		for r.frame < 20 {
			r.step(nil)
		}
		before := r.tl.Stats()
		var corr []predict.Correction[RPos]
		for r.frame < 60 {
			r.step(func(f tick.Tick) {
				if f == 40 {
					_ = ecs.StoreOf[RVel](r.sw).Set(a, RVel{5})
				}
			})
			corr = append(corr, r.pos.Corrections()...)
		}
		st := r.tl.Stats()
		if before.Rollbacks != 1 || st.Rollbacks != 2 || st.Types[1].Mispredictions-before.Types[1].Mispredictions != 1 {
			t.Fatalf("rollbacks %d for the spawn, %d in all; velocity mispredictions since %d; want 1, 2, 1",
				before.Rollbacks, st.Rollbacks, st.Types[1].Mispredictions-before.Types[1].Mispredictions)
		}
		ca := r.cliEnt[a]
		if len(corr) != 1 || corr[0].Entity != ca || corr[0].After.X-corr[0].Before.X != 4*int64(corr[0].Tick.Sub(40)) {
			t.Fatalf("corrections %+v, want one for entity %v moved by 4 per tick since 40", corr, ca)
		}
		// The client, lead ticks ahead, holds the server's motion extrapolated.
		sp, _ := ecs.StoreOf[RPos](r.sw).Get(a)
		cp, _ := r.pos.Store().Get(ca)
		if cp.X != sp.X+5*int64(r.tl.Now().Sub(r.frame)) {
			t.Fatalf("client position %v at %v, server %v at %v", cp, r.tl.Now(), sp, r.frame)
		}
		if r.client.Entities() != 2 || !r.cw.Alive(r.cliEnt[b]) {
			t.Fatalf("client replicates %d entities, want 2", r.client.Entities())
		}
		if r.complete < 40 || r.checked < 80 {
			t.Fatalf("compared %d complete ticks (%d entity values), want most of the run", r.complete, r.checked)
		}
	})
}

// TestAttachRandomCorrectionsUnderLoss is the property test of the wiring:
// on links losing 20% of their datagrams (with jitter, duplication and
// reordering), the server spawns and despawns entities, changes their
// velocities and positions at random (nothing the client can predict) and
// their non-predicted tags. After every client step, the replicated
// entities are alive and mapped with their tags, and the client's history
// at every complete tick equals the server's state at that tick. Forced
// mode, on the same seeded traffic, ends in the same state with more
// rollbacks.
func TestAttachRandomCorrectionsUnderLoss(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		normal, ns := wireProperty(t, seed, false)
		forced, fs := wireProperty(t, seed, true)
		if !slices.Equal(normal, forced) {
			t.Fatalf("seed %d: forced mode ended with %v, normal with %v", seed, forced, normal)
		}
		if ns.Rollbacks == 0 || fs.Rollbacks <= ns.Rollbacks {
			t.Fatalf("seed %d: rollbacks normal %d forced %d; want 0 < normal < forced", seed, ns.Rollbacks, fs.Rollbacks)
		}
	}
}

// wireProperty runs one seed of the property test and returns the
// client's final predicted state (by server entity, in spawn order) and
// its stats.
func wireProperty(t *testing.T, seed uint64, forced bool) (final []entState, st predict.Stats) {
	synctest.Test(t, func(t *testing.T) {
		link := transport.LinkConfig{Latency: 25 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Duplicate: 0.05, Reorder: 0.1}
		r := newWireRig(t, seed, link, predict.Config{Window: 60, Forced: forced}, 6)
		defer r.close()
		rnd := rand.New(rand.NewPCG(seed, 7))
		for r.frame < 6 {
			r.step(nil)
		}
		var ents []ecs.Entity
		nonzero := func() int64 { return int64(rnd.IntN(7)) - 3 | 1 } // odd: never 0, so every entity moves each tick
		change := func(tick.Tick) {
			switch x := rnd.IntN(100); {
			case x < 6 || len(ents) < 3:
				ents = append(ents, r.spawn(int64(rnd.IntN(100)), nonzero(), int32(len(ents))))
			case x < 10 && len(ents) > 3:
				k := rnd.IntN(len(ents))
				_ = r.sw.Despawn(ents[k])
				ents = slices.Delete(ents, k, k+1)
			case x < 30:
				_ = ecs.StoreOf[RVel](r.sw).Set(ents[rnd.IntN(len(ents))], RVel{nonzero()})
			case x < 40:
				_ = ecs.StoreOf[RPos](r.sw).Set(ents[rnd.IntN(len(ents))], RPos{int64(rnd.IntN(1000))})
			case x < 45:
				_ = ecs.StoreOf[RTag](r.sw).Set(ents[rnd.IntN(len(ents))], RTag{int32(rnd.IntN(1000))})
			}
		}
		for r.frame < 300 {
			r.step(change)
		}
		r.setLink(transport.LinkConfig{Latency: 25 * time.Millisecond})
		for r.frame < 360 {
			r.step(nil)
		}
		st = r.tl.Stats()
		if r.complete < 200 || r.checked < 1000 {
			t.Fatalf("seed %d: compared %d complete ticks (%d entity values), want most of the run", seed, r.complete, r.checked)
		}
		if st.RangeFaults != 0 {
			t.Fatalf("seed %d: %d range faults: the window does not cover the link's delays", seed, st.RangeFaults)
		}
		if st.Types[0].Mispredictions == 0 || st.Types[1].Mispredictions == 0 || st.Corrections == 0 {
			t.Fatalf("seed %d: stats %+v: the run corrected nothing", seed, st)
		}
		if r.client.Entities() != len(ents) {
			t.Fatalf("seed %d: client replicates %d entities, server has %d", seed, r.client.Entities(), len(ents))
		}
		for _, e := range ents {
			ce := r.cliEnt[e]
			want, _ := ecs.StoreOf[RTag](r.sw).Get(e)
			if got, _ := ecs.StoreOf[RTag](r.cw).Get(ce); got != want {
				t.Fatalf("seed %d: tag of %v is %v, server %v", seed, e, got, want)
			}
			p, _ := r.pos.Store().Get(ce)
			v, _ := r.vel.Store().Get(ce)
			final = append(final, entState{se: e, pos: p, vel: v})
		}
		t.Logf("seed %d forced %v: %d entities, %d checks of a complete tick, rollbacks %d, resimulated %d, range faults %d",
			seed, forced, len(ents), r.complete, st.Rollbacks, st.TicksResimulated, st.RangeFaults)
	})
	return final, st
}

// TestAttachRemappedReference: a predicted reference to an entity hidden
// from the client is none until the entity is shown at tick 20; then the
// reference resolves from tick 20 on, in the current state and in the
// history, as a change from that tick: no misprediction is counted and
// the history before 20 keeps none (replicate no longer hands the value
// over again as an authoritative value of its old tick).
func TestAttachRemappedReference(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWireRig(t, 1, transport.LinkConfig{Latency: 20 * time.Millisecond}, predict.Config{Window: 16}, 4)
		defer r.close()
		for r.frame < 4 {
			r.step(nil)
		}
		var target, holder ecs.Entity
		r.step(func(tick.Tick) {
			target = r.spawn(0, 1, 1)
			holder = r.spawn(50, 1, 2)
			_ = ecs.Register[RTarget](r.sw).Set(holder, RTarget{E: target})
			_ = r.srv.SetVisible(r.client.ID(), target, false)
			r.skip = map[ecs.Entity]bool{target: true}
		})
		for r.frame < 19 {
			r.step(nil)
		}
		ch := r.cliEnt[holder]
		if v, ok := r.tgt.Store().Get(ch); !ok || v.E != 0 {
			t.Fatalf("reference to a hidden entity: %v (%v), want none", v, ok)
		}
		before := r.tl.Stats().Types[2].Mispredictions
		r.step(func(tick.Tick) { _ = r.srv.SetVisible(r.client.ID(), target, true) })
		for r.frame < 30 {
			r.step(nil)
		}
		ct, ok := r.client.ClientEntity(target)
		if !ok {
			t.Fatal("target not shown")
		}
		if v, _ := r.tgt.Store().Get(ch); v.E != ct {
			t.Fatalf("current reference %v, want the target's client entity %v", v.E, ct)
		}
		for tk := r.tl.Now().Add(-int32(r.tl.Window())); tk.Before(r.tl.Now()); tk++ {
			v, ok := r.tgt.At(ch, tk)
			want := ecs.Entity(0)
			if !tk.Before(20) {
				want = ct
			}
			if !ok || v.E != want {
				t.Fatalf("reference at tick %v: %v (%v), want %v", tk, v.E, ok, want)
			}
		}
		if n := r.tl.Stats().Types[2].Mispredictions - before; n != 0 {
			t.Fatalf("%d mispredictions of the reference: the remap looked like a correction", n)
		}
	})
}
