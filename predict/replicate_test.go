package predict_test

import (
	"math/rand/v2"
	"net/netip"
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

// Replicated components of the wiring tests: RPos, RVel and RTarget are
// predicted on the client, RTag is replicated but not predicted.
type (
	RPos    struct{ X int64 }
	RVel    struct{ X int64 }
	RTag    struct{ ID int32 }
	RTarget struct{ E ecs.Entity } // an entity reference
)

// MapEntities maps the reference (replicate maps it server to client).
func (t *RTarget) MapEntities(m ecs.EntityMapper) { t.E = m.MapEntity(t.E) }

func wireProtocol(t testing.TB) *replicate.Protocol {
	t.Helper()
	p := replicate.NewProtocol()
	for _, err := range []error{
		second(replicate.Component[RPos](p, replicate.WithOwnRule())),
		second(replicate.Component[RVel](p, replicate.WithOwnRule())),
		second(replicate.Component[RTag](p, replicate.WithOwnRule())),
		second(replicate.Component[RTarget](p, replicate.WithOwnRule())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func second[A any](_ A, err error) error { return err }

// moveQuery is the simulation both sides run: every entity with a
// position and a velocity moves by its velocity.
func moveQuery(w *ecs.World) func(tick.Tick) {
	q := ecs.NewQuery2(ecs.Register[RPos](w).Write(), ecs.Register[RVel](w).Read())
	return func(tick.Tick) {
		for _, r := range q.All() {
			r.A.X += r.B.X
		}
	}
}

// entState is one server entity's predicted values at a tick.
type entState struct {
	se  ecs.Entity
	pos RPos
	vel RVel
}

// wireRig is a server and one predicting client on a
// transport.MessageNetwork, built inside synctest.Test (virtual time).
type wireRig struct {
	t     *testing.T
	net   *transport.MessageNetwork
	ln    *transport.MessageNetworkListener
	caddr netip.AddrPort // the client's address
	sw    *ecs.World
	srv   *replicate.Server
	ssim  func(tick.Tick)
	frame tick.Tick
	start tick.Tick // the timeline's first tick

	cw       *ecs.World
	client   *replicate.Client
	tl       *predict.Timeline
	pos      *predict.Component[RPos]
	vel      *predict.Component[RVel]
	tgt      *predict.Component[RTarget]
	skip     map[ecs.Entity]bool // server entities check leaves out (hidden from the client)
	csim     func(tick.Tick)
	cliEnt   map[ecs.Entity]ecs.Entity // every server entity the client mapped
	states   map[tick.Tick][]entState  // the server's state at the end of each tick
	checked  int                       // (tick, entity) pairs compared
	complete int                       // complete ticks compared
}

const wireTick = time.Second / 60

// newWireRig connects a client predicting lead ticks ahead of the server,
// on links configured by link.
func newWireRig(t *testing.T, seed uint64, link transport.LinkConfig, cfg predict.Config, lead int) *wireRig {
	t.Helper()
	r := &wireRig{t: t, sw: ecs.New(), cw: ecs.New(), cliEnt: map[ecs.Entity]ecs.Entity{}, states: map[tick.Tick][]entState{}}
	r.net = transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
	var err error
	if r.ln, err = r.net.Listen(netip.AddrPort{}); err != nil {
		t.Fatal(err)
	}
	if r.srv, err = replicate.NewServer(replicate.ServerConfig{World: r.sw, Protocol: wireProtocol(t)}); err != nil {
		t.Fatal(err)
	}
	r.ssim = moveQuery(r.sw)
	if r.client, err = replicate.NewClient(replicate.ClientConfig{World: r.cw, Protocol: wireProtocol(t)}); err != nil {
		t.Fatal(err)
	}
	r.start = tick.Tick(lead)
	r.tl = predict.New(r.cw, r.start, cfg)
	if r.pos, err = predict.Register[RPos](r.tl, predict.LogCorrections()); err != nil {
		t.Fatal(err)
	}
	if r.vel, err = predict.Register[RVel](r.tl); err != nil {
		t.Fatal(err)
	}
	if r.tgt, err = predict.Register[RTarget](r.tl); err != nil {
		t.Fatal(err)
	}
	hooks := predict.Hooks(r.tl)
	hooks.Spawn = func(ce ecs.Entity, _ tick.Tick) { // every mapping, even of entities gone by the check
		se, _ := r.client.ServerEntity(ce)
		r.cliEnt[se] = ce
	}
	r.client.SetClientHooks(hooks)
	if err := predict.AttachComponent(r.client, r.pos); err != nil {
		t.Fatal(err)
	}
	if err := predict.AttachComponent(r.client, r.vel); err != nil {
		t.Fatal(err)
	}
	if err := predict.AttachComponent(r.client, r.tgt); err != nil {
		t.Fatal(err)
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

func (r *wireRig) setLink(link transport.LinkConfig) {
	setLinks(r.net, r.caddr, r.ln.Addr(), link)
}

func (r *wireRig) close() {
	r.client.Close()
	r.srv.Close()
	r.ln.Close()
	r.net.Close()
}

// step runs one server frame (receive, simulate with change, send) and one
// client frame (receive phase, predicted step), checks the client, then
// lets one tick of virtual time pass.
func (r *wireRig) step(change func(f tick.Tick)) {
	r.t.Helper()
	r.frame++
	f := r.frame
	r.srv.Receive()
	r.ssim(f)
	if change != nil {
		change(f)
	}
	r.record(f)
	if err := r.srv.SendTick(f); err != nil {
		r.t.Fatal(err)
	}
	r.client.Update()
	r.tl.Step(r.csim)
	r.check()
	time.Sleep(wireTick)
}

// record keeps the server's state at the end of tick f.
func (r *wireRig) record(f tick.Tick) {
	var s []entState
	for e, row := range ecs.NewQuery2(ecs.StoreOf[RPos](r.sw).Read(), ecs.StoreOf[RVel](r.sw).Read()).All() {
		s = append(s, entState{se: e, pos: *row.A, vel: *row.B})
	}
	r.states[f] = s
	delete(r.states, f-64)
}

// check verifies, after a client step: every replicated entity is alive
// and mapped in the client World with its non-predicted RTag (replication
// structure survives rollbacks), and at every complete server tick held in the
// history, the predicted values equal the server's state at that tick:
// the same entities, the same values.
func (r *wireRig) check() {
	r.t.Helper()
	for _, e := range ecs.StoreOf[replicate.Replicated](r.sw).Column().Entities {
		ce, ok := r.client.ClientEntity(e)
		if !ok {
			continue
		}
		r.cliEnt[e] = ce
		if !r.cw.Alive(ce) {
			r.t.Fatalf("tick %v: replicated entity %v (client %v) is dead on the client", r.tl.Now(), e, ce)
		}
		if _, ok := r.client.ServerEntity(ce); !ok {
			r.t.Fatalf("tick %v: client entity %v lost its mapping", r.tl.Now(), ce)
		}
		if !ecs.StoreOf[RTag](r.cw).Has(ce) {
			r.t.Fatalf("tick %v: replicated entity %v lost its tag on the client", r.tl.Now(), e)
		}
	}
	low := r.tl.Now().Add(-int32(r.tl.Window()))
	if low.Before(r.start) {
		low = r.start
	}
	for tk := low; tk.Before(r.tl.Now()); tk++ {
		states, ok := r.states[tk]
		if !ok || !r.client.TickComplete(tk) {
			continue
		}
		r.complete++
		alive := map[ecs.Entity]bool{}
		for _, s := range states {
			if r.skip[s.se] {
				continue
			}
			alive[s.se] = true
			ce, ok := r.cliEnt[s.se]
			if !ok {
				r.t.Fatalf("tick %v complete but server entity %v never reached the client", tk, s.se)
			}
			p, okp := r.pos.At(ce, tk)
			v, okv := r.vel.At(ce, tk)
			if !okp || !okv || p != s.pos || v != s.vel {
				r.t.Fatalf("now %v: complete tick %v, entity %v (client %v): client %v/%v (%v %v), server %v/%v",
					r.tl.Now(), tk, s.se, ce, p, v, okp, okv, s.pos, s.vel)
			}
			r.checked++
		}
		for se, ce := range r.cliEnt {
			if alive[se] || r.skip[se] {
				continue
			}
			if p, ok := r.pos.At(ce, tk); ok {
				r.t.Fatalf("now %v: complete tick %v: entity %v absent on the server has %v on the client", r.tl.Now(), tk, se, p)
			}
		}
	}
}

// spawn spawns a moving replicated entity on the server.
func (r *wireRig) spawn(x, v int64, id int32) ecs.Entity {
	e := r.sw.Spawn()
	_ = ecs.Register[replicate.Replicated](r.sw).Set(e, replicate.Replicated{})
	_ = ecs.StoreOf[RPos](r.sw).Set(e, RPos{x})
	_ = ecs.StoreOf[RVel](r.sw).Set(e, RVel{v})
	_ = ecs.Register[RTag](r.sw).Set(e, RTag{id})
	return e
}

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
