package replicate_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/transport"
)

// Dice is a per-entity random stream, registered as RNG state.
type Dice struct{ R rng.Rand }

// newRNGProto is newProto with a per-entity RNG component (Dice,
// RNGState) and the world's RNG (rng.Rand, RNG state as such) as a
// replicated resource.
func newRNGProto(t testing.TB) testProto {
	tp := newProto(t)
	if _, err := replicate.Component[Dice](tp.p, replicate.WithOwnRule(), replicate.RNGState()); err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.ReplicateResource[rng.Rand](tp.p); err != nil {
		t.Fatal(err)
	}
	return tp
}

// newRNGRig is a rig of n clients over newRNGProto with 20 entities, each
// with its own Dice stream, and the world's RNG; entities move and draw
// from their streams every tick (stepRNG).
func newRNGRig(t *testing.T, seed uint64, n int, cfg replicate.ServerConfig) (*memRig, []ecs.Entity) {
	r := newMemRigProto(t, transport.MessageNetworkConfig{Seed: seed}, cfg, newRNGProto(t))
	r.ccfg.ChecksumInterval = cfg.ChecksumInterval
	var ents []ecs.Entity
	dice := ecs.Register[Dice](r.sw)
	for i := range 20 {
		e := spawnRep(r.sw, Position{X: float64(i)}, int32(i))
		_ = dice.Set(e, Dice{R: rng.Stream(seed, uint64(i))})
		ents = append(ents, e)
	}
	ecs.RegisterResource[rng.Rand](r.sw).Set(rng.NewSeed(seed))
	r.connect(n, transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond})
	return r, ents
}

// stepRNG steps the rig k ticks: every live entity moves, every third one
// draws from its stream, and the world's RNG draws once; it returns the
// resync events of the server and of each client.
func stepRNG(r *memRig, ents []ecs.Entity, k int) ([]replicate.ServerEvent, [][]replicate.ClientEvent) {
	dice := ecs.StoreOf[Dice](r.sw)
	world := ecs.ResourceOf[rng.Rand](r.sw)
	var srv []replicate.ServerEvent
	cli := make([][]replicate.ClientEvent, len(r.clients))
	for range k {
		for i, e := range ents {
			if !r.sw.Alive(e) {
				continue
			}
			ecs.StoreOf[Position](r.sw).Ptr(e).Y++
			if i%3 == 0 {
				dice.Ptr(e).R.Uint64()
			}
		}
		world.Ptr().Uint64()
		for _, ev := range stepEvents(r, replicate.ClientResync, replicate.EventResync, cli) {
			srv = append(srv, ev)
		}
	}
	return srv, cli
}

// rest lets the rig run 10 ticks with nothing changing: the data in
// flight arrives.
func rest(r *memRig) {
	for range 10 {
		r.step()
	}
}

// stepEvents runs one rig step and returns the server's events of kind
// sk, appending each client's events of kind ck to cli.
func stepEvents(r *memRig, sk replicate.ServerEventKind, ck replicate.ClientEventKind, cli [][]replicate.ClientEvent) []replicate.ServerEvent {
	r.step()
	var srv []replicate.ServerEvent
	for _, ev := range r.srv.Events() {
		if ev.Kind == sk {
			srv = append(srv, ev)
		}
	}
	for i, c := range r.clients {
		for _, ev := range c.Events() {
			if ev.Kind == ck {
				cli[i] = append(cli[i], ev)
			}
		}
	}
	return srv
}

// TestResyncPartial: a partial resync of four named entities replaces
// exactly those on the client (a changed value, a component the server
// does not have, a removed component, an
// entity the client lost, one the server despawned in the same tick),
// leaves a fifth corrupted entity as it is, and reports the kind with its
// reason on both sides.
func TestResyncPartial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newDesyncRig(t, 11, 1, false)
		defer r.close()
		resyncEvents(r, ents, 30)
		checkConverged(t, r)
		cw, c := r.cws[0], r.clients[0]
		ce := func(i int) ecs.Entity { e, _ := c.ClientEntity(ents[i]); return e }
		ecs.StoreOf[Health](cw).Ptr(ce(2)).HP = -2
		_ = ecs.StoreOf[Owner](cw).Set(ce(2), Owner{}) // the server has none: removed
		_ = ecs.StoreOf[Position](cw).Remove(ce(3))
		_ = cw.Despawn(ce(4))
		ecs.StoreOf[Health](cw).Ptr(ce(5)).HP = -5 // not named: stays
		_ = r.sw.Despawn(ents[8])                  // named too: the server has no such entity any more
		if err := r.srv.ResyncEntities(c.ID(), []ecs.Entity{ents[4], ents[2], ents[3], ents[2], ents[8]}, "named"); err != nil {
			t.Fatal(err)
		}
		srv, cli := resyncEvents(r, ents, 10)
		rest(r)
		if len(srv) != 1 || srv[0].Resync != replicate.ResyncPartial || srv[0].Reason != "named" ||
			len(cli[0]) != 1 || cli[0][0].Resync != replicate.ResyncPartial || cli[0][0].Reason != "named" || cli[0][0].Tick != srv[0].Tick {
			t.Fatalf("events: server %+v, client %+v", srv, cli)
		}
		d := r.diff(nil)
		if !strings.Contains(d, "HP:-5") || strings.Count(d, "HP:-") != 1 {
			t.Fatalf("after the partial resync, want only entity 5 corrupted; diff: %s", d)
		}
		ecs.StoreOf[Health](cw).Ptr(ce(5)).HP = 5
		checkConverged(t, r)
		st, _ := r.srv.Stats(c.ID())
		want := replicate.ResyncCounts{Partial: 1}
		if st.Resyncs != 1 || st.ResyncKinds != want || c.Stats().ResyncKinds != want || c.Stats().Resyncs != 1 {
			t.Fatalf("stats: server %+v, client %+v", st, c.Stats())
		}
	})
}

// TestResyncRNG: an RNG-only resync restores a client's RNG state (a
// per-entity stream and the world's RNG) and nothing else: a corrupted
// non-RNG value stays corrupted.
func TestResyncRNG(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newRNGRig(t, 12, 2, replicate.ServerConfig{})
		defer r.close()
		stepRNG(r, ents, 30)
		checkConverged(t, r)
		cw, c := r.cws[1], r.clients[1]
		e6, _ := c.ClientEntity(ents[6])
		e7, _ := c.ClientEntity(ents[7])
		ecs.StoreOf[Dice](cw).Ptr(e6).R.Uint64()
		ecs.ResourceOf[rng.Rand](cw).Ptr().Uint64()
		ecs.StoreOf[Health](cw).Ptr(e7).HP = -7
		if err := r.srv.ResyncRNG(c.ID(), "dice"); err != nil {
			t.Fatal(err)
		}
		srv, cli := stepRNG(r, ents, 10)
		rest(r)
		if len(srv) != 1 || srv[0].Resync != replicate.ResyncRNG || len(cli[1]) != 1 || cli[1][0].Resync != replicate.ResyncRNG || len(cli[0]) != 0 {
			t.Fatalf("events: server %+v, clients %+v", srv, cli)
		}
		if d := r.diff(nil); !strings.Contains(d, "HP:-7") {
			t.Fatalf("the RNG resync touched a non-RNG value; diff: %q", d)
		}
		sum, parts := r.srv.Checksum(nil)
		_, cparts := c.Checksum(nil)
		for i := range parts {
			differs := parts[i].Sum != cparts[i].Sum
			if differs != strings.HasSuffix(parts[i].Name, ".Health") {
				t.Fatalf("part %s differs: %v (checksum %x)", parts[i].Name, differs, sum)
			}
		}
		ecs.StoreOf[Health](cw).Ptr(e7).HP = 7
		checkConverged(t, r)
		if st, _ := r.srv.Stats(c.ID()); st.ResyncKinds != (replicate.ResyncCounts{RNG: 1}) {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestResyncOnDesyncKinds: ResyncOnDesync picks the kind by what the
// report names: a corrupted RNG stream gets an RNG-only resync, a
// corrupted value or a lost entity a partial one, a component the server
// has on no entity a full one; each repairs the client. (The cases come
// 25 ticks apart: the client's resync budget is set to allow that.)
func TestResyncOnDesyncKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newRNGRig(t, 13, 1, replicate.ServerConfig{ChecksumInterval: desyncInterval, ResyncOnDesync: true,
			ResyncRequestInterval: 100 * time.Millisecond})
		defer r.close()
		stepRNG(r, ents, 30)
		cw, c := r.cws[0], r.clients[0]
		ce := func(i int) ecs.Entity { e, _ := c.ClientEntity(ents[i]); return e }
		for _, tc := range []struct {
			corrupt func()
			want    replicate.ResyncKind
			types   string
		}{
			{func() { ecs.StoreOf[Dice](cw).Ptr(ce(1)).R.Uint64() }, replicate.ResyncRNG, ".Dice"},
			{func() { ecs.StoreOf[Health](cw).Ptr(ce(2)).HP = -2 }, replicate.ResyncPartial, ".Health"},
			// The client lost an entity it still replicates: every type
			// differs, each on every entity (the partial resync respawns it).
			{func() { _ = cw.Despawn(ce(3)) }, replicate.ResyncPartial, ".Position"},
			// A component no server entity has: only a full resync removes it.
			{func() { _ = ecs.StoreOf[Owner](cw).Set(ce(4), Owner{}) }, replicate.ResyncFull, ".Owner"},
		} {
			tc.corrupt()
			srv, cli := stepRNG(r, ents, 2*desyncInterval+5)
			if len(srv) != 1 || srv[0].Resync != tc.want || !strings.Contains(srv[0].Reason, tc.types) ||
				len(cli[0]) != 1 || cli[0][0].Resync != tc.want {
				t.Fatalf("%v: events: server %+v, client %+v", tc.want, srv, cli)
			}
			checkConverged(t, r)
		}
		st, _ := r.srv.Stats(c.ID())
		if want := (replicate.ResyncCounts{Full: 1, Partial: 2, RNG: 1}); st.ResyncKinds != want || c.Stats().ResyncKinds != want {
			t.Fatalf("stats: server %+v, client %+v", st, c.Stats())
		}
	})
}

// TestResyncRequest: a client's resync request gets a full resync with
// its reason; the client sends no second request while the first is
// unanswered, and the server refuses requests closer than its interval.
func TestResyncRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newDesyncRig(t, 14, 1, false)
		defer r.close()
		resyncEvents(r, ents, 10)
		c := r.clients[0]
		if err := c.RequestResync("range fault at tick 3"); err != nil {
			t.Fatal(err)
		}
		if err := c.RequestResync("again"); err != nil || c.Stats().ResyncRequests != 1 {
			t.Fatalf("second request: %v, %d sent", err, c.Stats().ResyncRequests)
		}
		srv, cli := resyncEvents(r, ents, 10)
		if len(srv) != 1 || srv[0].Reason != "client request: range fault at tick 3" || srv[0].Resync != replicate.ResyncFull || len(cli[0]) != 1 {
			t.Fatalf("events: server %+v, clients %+v", srv, cli)
		}
		// Within the server's interval: refused.
		if err := c.RequestResync("soon"); err != nil {
			t.Fatal(err)
		}
		srv, _ = resyncEvents(r, ents, 10)
		st, _ := r.srv.Stats(c.ID())
		if len(srv) != 0 || st.ResyncRequests != 1 || st.ResyncRequestsRefused != 1 {
			t.Fatalf("request within the interval: events %+v, stats %+v", srv, st)
		}
		time.Sleep(replicate.DefaultResyncRequestInterval)
		_ = c.RequestResync("later")
		srv, _ = resyncEvents(r, ents, 10)
		if len(srv) != 1 || srv[0].Reason != "client request: later" {
			t.Fatalf("request after the interval: events %+v", srv)
		}
		checkConverged(t, r)
	})
}

// TestResyncAfterPartition: one of two clients is cut off from the server
// for 3 seconds (virtual time) while entities move, spawn and despawn;
// when the path heals, the client, silent for longer than
// ResyncAfterSilence, asks for a resync, gets a full one with the
// interruption as its reason, and holds the server's state; the other
// client never resyncs.
func TestResyncAfterPartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMemRig(t, 15, replicate.ServerConfig{})
		r.ccfg.ResyncAfterSilence = 500 * time.Millisecond
		defer r.close()
		var ents []ecs.Entity
		for i := range 20 {
			ents = append(ents, spawnRep(r.sw, Position{X: float64(i)}, int32(i)))
		}
		r.connect(2, transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond})
		resyncEvents(r, ents, 30)
		checkConverged(t, r)
		r.net.Partition(r.addrs[0], r.ln.Addr())
		for k := range 180 { // 3 s
			if k%20 == 0 {
				_ = r.sw.Despawn(ents[k/20])
				ents = append(ents, spawnRep(r.sw, Position{X: float64(k)}, int32(k)))
			}
			resyncEvents(r, ents, 1)
		}
		r.net.Heal(r.addrs[0], r.ln.Addr())
		srv, cli := resyncEvents(r, ents, 30)
		checkConverged(t, r)
		if len(srv) != 1 || srv[0].Resync != replicate.ResyncFull || !strings.HasPrefix(srv[0].Reason, "client request: network interruption: nothing received for 3.") ||
			len(cli[0]) != 1 || cli[0][0].Reason != srv[0].Reason || len(cli[1]) != 0 {
			t.Fatalf("events: server %+v, clients %+v", srv, cli)
		}
		if r.clients[0].Stats().ResyncRequests != 1 || r.clients[0].Stats().Resyncs != 1 || r.clients[1].Stats().Resyncs != 0 {
			t.Fatalf("stats: %+v, %+v", r.clients[0].Stats(), r.clients[1].Stats())
		}
	})
}

// TestResyncRNGTooManyEntities: an RNG-only resync naming more entities
// than a Resync message may carry (the client refuses more than 65,536)
// falls back to a full resync, which the client applies, instead of a
// message the client drops as malformed.
func TestResyncRNGTooManyEntities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newRNGRig(t, 14, 1, replicate.ServerConfig{})
		defer r.close()
		dice := ecs.StoreOf[Dice](r.sw)
		for i := range 1<<16 + 1 {
			e := r.sw.Spawn()
			_ = ecs.StoreOf[replicate.Replicated](r.sw).Set(e, replicate.Replicated{})
			_ = dice.Set(e, Dice{R: rng.Stream(14, uint64(100+i))})
		}
		checkConverged(t, r)
		c := r.clients[0]
		if err := r.srv.ResyncRNG(c.ID(), "many dice"); err != nil {
			t.Fatal(err)
		}
		checkConverged(t, r)
		if st := c.Stats(); st.ResyncKinds != (replicate.ResyncCounts{Full: 1}) || st.Malformed != 0 {
			t.Fatalf("client counters %+v", st)
		}
	})
}
