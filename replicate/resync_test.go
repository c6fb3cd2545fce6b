package replicate_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/transport"
)

// resyncEvents steps the rig k ticks (entities moving) and returns the
// server's ClientResync events and each client's EventResync events.
func resyncEvents(r *memRig, ents []ecs.Entity, k int) ([]replicate.ServerEvent, [][]replicate.ClientEvent) {
	return stepCollecting(r, ents, k, replicate.ClientResync, replicate.EventResync)
}

// checkConverged lets the world rest for 10 ticks (the data in flight
// arrives), then fails unless every client holds the server's state and
// checksum.
func checkConverged(t *testing.T, r *memRig) {
	t.Helper()
	for range 10 {
		r.step()
	}
	if d := r.diff(nil); d != "" {
		t.Fatal(d)
	}
	sum, parts := r.srv.Checksum(nil)
	for i, c := range r.clients {
		if csum, cparts := c.Checksum(nil); csum != sum {
			t.Fatalf("client %d: checksum differs in %v", i, snapshot.Diff(parts, cparts))
		}
	}
}

// TestResync: a client whose replicated state was corrupted (a value
// changed, a component removed, an entity despawned on the client) and
// that misses a server despawn's effect holds exactly the server's state
// again after Server.Resync, with the reason in events and stats on both
// sides; the other client is untouched.
func TestResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newDesyncRig(t, 5, 2, false)
		defer r.close()
		resyncEvents(r, ents, 30)
		checkConverged(t, r)

		cw, c := r.cws[1], r.clients[1]
		e7, _ := c.ClientEntity(ents[7])
		ecs.StoreOf[Health](cw).Ptr(e7).HP += 100
		e8, _ := c.ClientEntity(ents[8])
		ecs.StoreOf[Position](cw).Remove(e8)
		e9, _ := c.ClientEntity(ents[9])
		cw.Despawn(e9)
		r.sw.Despawn(ents[3]) // despawned in the tick of the resync
		if d := r.diff(nil); d == "" {
			t.Fatal("corruption not visible")
		}
		if err := r.srv.Resync(c.ID(), "test"); err != nil {
			t.Fatal(err)
		}
		srv, cli := resyncEvents(r, ents, 10)
		checkConverged(t, r)
		if len(srv) != 1 || srv[0].Client != c.ID() || srv[0].Reason != "test" ||
			len(cli[1]) != 1 || cli[1][0].Reason != "test" || cli[1][0].Tick != srv[0].Tick || len(cli[0]) != 0 {
			t.Fatalf("events: server %+v, clients %+v", srv, cli)
		}
		st, _ := r.srv.Stats(c.ID())
		if st.Resyncs != 1 || c.Stats().Resyncs != 1 || r.clients[0].Stats().Resyncs != 0 {
			t.Fatalf("stats: server %+v, client %+v", st, c.Stats())
		}
		// Replication goes on as before.
		resyncEvents(r, ents, 30)
		checkConverged(t, r)
		if err := r.srv.Resync(999, "x"); err == nil {
			t.Fatal("resync of an unknown client succeeded")
		}
	})
}

// TestResyncOnDesync: with ServerConfig.ResyncOnDesync, a corrupted
// client is detected at its next report, resynced with the desync as the
// reason, and holds the server's state again; it reports no further
// desync.
func TestResyncOnDesync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newDesyncRig(t, 6, 1, true)
		defer r.close()
		resyncEvents(r, ents, 30)
		c := r.clients[0]
		ce, _ := c.ClientEntity(ents[4])
		ecs.StoreOf[Health](r.cws[0]).Ptr(ce).HP = -1
		srv, cli := resyncEvents(r, ents, 2*desyncInterval+5)
		if len(srv) != 1 || len(cli[0]) != 1 || !strings.Contains(srv[0].Reason, ".Health") || cli[0][0].Reason != srv[0].Reason {
			t.Fatalf("events: server %+v, client %+v", srv, cli)
		}
		checkConverged(t, r)
		st, _ := r.srv.Stats(c.ID())
		desyncs := st.Desyncs
		srv, cli = resyncEvents(r, ents, 4*desyncInterval)
		checkConverged(t, r)
		if st, _ = r.srv.Stats(c.ID()); len(srv)+len(cli[0]) != 0 || st.Desyncs != desyncs || desyncs != 1 || st.Resyncs != 1 {
			t.Fatalf("after the resync: events %+v %+v, stats %+v", srv, cli, st)
		}
	})
}

// TestResyncLargeWorld: a resync of a 5,000-entity world (an update of
// about 170 KB, sent in parts) replaces a corrupted client's state
// atomically: until the whole update has arrived the client keeps its old
// state (nothing cleared), and then holds the server's.
func TestResyncLargeWorld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMemRig(t, 8, replicate.ServerConfig{})
		defer r.close()
		var ents []ecs.Entity
		for i := range 5000 {
			ents = append(ents, spawnRep(r.sw, Position{X: float64(i)}, int32(i)))
		}
		r.connect(1, transport.LinkConfig{Latency: 20 * time.Millisecond})
		checkConverged(t, r)
		c, cw := r.clients[0], r.cws[0]
		for _, e := range ents[:100] {
			ce, _ := c.ClientEntity(e)
			ecs.StoreOf[Health](cw).Ptr(ce).HP = -1
		}
		// 1 MB/s: the update's parts arrive over several ticks.
		r.setLinks(transport.LinkConfig{Latency: 20 * time.Millisecond, BandwidthBytesPerSec: 1 << 20})
		if err := r.srv.Resync(c.ID(), "large"); err != nil {
			t.Fatal(err)
		}
		sawParts := false
		for k := 0; c.Stats().Resyncs == 0; k++ {
			if k == 60 {
				t.Fatal("resync not applied after 60 ticks")
			}
			r.step()
			if replicate.UpdatePartBytes(c) > 0 {
				sawParts = true
				if c.Entities() != len(ents) {
					t.Fatalf("client holds %d entities while the resync arrives", c.Entities())
				}
			}
		}
		if !sawParts {
			t.Fatal("the resync did not travel in parts")
		}
		checkConverged(t, r)
	})
}
