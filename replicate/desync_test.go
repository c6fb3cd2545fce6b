package replicate_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// desyncInterval is the report interval of the desync tests.
const desyncInterval = 10

// newDesyncRig is a rig whose server and clients check checksums every
// desyncInterval ticks, with 20 entities moving every tick.
// (ResyncOnDesync as given)
func newDesyncRig(t *testing.T, seed uint64, n int, resync bool) (*memRig, []ecs.Entity) {
	r := newMemRig(t, seed, replicate.ServerConfig{ChecksumInterval: desyncInterval, ResyncOnDesync: resync})
	r.ccfg.ChecksumInterval = desyncInterval
	var ents []ecs.Entity
	for i := range 20 {
		ents = append(ents, spawnRep(r.sw, Position{X: float64(i)}, int32(i)))
	}
	r.connect(n, transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond})
	return r, ents
}

// runDesync steps the rig k ticks, moving every entity each tick, and
// returns the server's ClientDesync events and each client's EventDesync
// events.
func runDesync(r *memRig, ents []ecs.Entity, k int) ([]replicate.ServerEvent, [][]replicate.ClientEvent) {
	return stepCollecting(r, ents, k, replicate.ClientDesync, replicate.EventDesync)
}

// stepCollecting steps the rig k ticks, moving every live entity of ents
// each tick, and returns the server's events of kind sk and each client's
// events of kind ck.
func stepCollecting(r *memRig, ents []ecs.Entity, k int, sk replicate.ServerEventKind, ck replicate.ClientEventKind) (srv []replicate.ServerEvent, cli [][]replicate.ClientEvent) {
	cli = make([][]replicate.ClientEvent, len(r.clients))
	pos := ecs.StoreOf[Position](r.sw)
	for range k {
		for _, e := range ents {
			if r.sw.Alive(e) {
				pos.Ptr(e).Y++
			}
		}
		r.step()
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
	}
	return srv, cli
}

// TestDesyncDetection: clients that converge report no desync; once one
// client's copy of a component value is corrupted, every report interval
// (a report tick) raises exactly one ClientDesync on the server and one
// EventDesync on that client, naming the tick and the corrupted type alone, and the other
// client stays in sync.
func TestDesyncDetection(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { desyncDetection(t, seed) })
		})
	}
}

func desyncDetection(t *testing.T, seed uint64) {
	r, ents := newDesyncRig(t, seed, 2, false)
	defer r.close()
	srv, cli := runDesync(r, ents, 60)
	if len(srv)+len(cli[0])+len(cli[1]) > 0 {
		t.Fatalf("converged clients: server events %v, client events %v", srv, cli)
	}
	checked := make([]uint64, 2)
	for i, c := range r.clients {
		st, _ := r.srv.Stats(c.ID())
		// The verdict of the last report may still be on its way.
		if st.ChecksumsChecked < 4 || st.Desyncs != 0 || st.ChecksumsChecked-c.Stats().ChecksumsChecked > 1 {
			t.Fatalf("client %d: server stats %+v, client %+v", i, st, c.Stats())
		}
		checked[i] = st.ChecksumsChecked
	}
	sent := r.clients[1].Stats().ChecksumsSent // reports of the state before the corruption

	// Corrupt client 1's Health of one entity: the server never changes
	// it, so nothing repairs it.
	ce, _ := r.clients[1].ClientEntity(ents[7])
	ecs.StoreOf[Health](r.cws[1]).Ptr(ce).HP += 100
	srv, cli = runDesync(r, ents, 60)
	st, _ := r.srv.Stats(r.clients[1].ID())
	reports := st.ChecksumsChecked - sent
	// The verdict of the last report may still be on its way to the client.
	if reports < 5 || uint64(len(srv)) != reports || len(srv)-len(cli[1]) > 1 || uint64(len(cli[1])) != r.clients[1].Stats().Desyncs ||
		len(cli[0]) != 0 || st.Desyncs != reports {
		t.Fatalf("%d reports checked: %d server events, client events %d and %d, stats %+v", reports, len(srv), len(cli[1]), len(cli[0]), st)
	}
	var last tick.Tick
	for i, ev := range srv {
		if ev.Client != r.clients[1].ID() || len(ev.Types) != 1 || !strings.HasSuffix(ev.Types[0], ".Health") ||
			uint64(ev.Tick)%desyncInterval != 0 || (i > 0 && !ev.Tick.After(last)) {
			t.Fatalf("server event %d: %+v", i, ev)
		}
		last = ev.Tick
		if i >= len(cli[1]) {
			continue
		}
		if c := cli[1][i]; c.Tick != ev.Tick || len(c.Types) != 1 || c.Types[0] != ev.Types[0] {
			t.Fatalf("client event %d %+v, server %+v", i, c, ev)
		}
	}
	if st0, _ := r.srv.Stats(r.clients[0].ID()); st0.Desyncs != 0 || st0.ChecksumsChecked < checked[0]+5 {
		t.Fatalf("client 0 stats %+v", st0)
	}
}

// TestDesyncFilteredClient: a client shown less than the whole world is
// not checked (its checksum cannot match): its reports are counted as
// unchecked and raise no event, though its state differs from the
// server's.
func TestDesyncFilteredClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, ents := newDesyncRig(t, 3, 1, false)
		defer r.close()
		id := r.clients[0].ID()
		if err := r.srv.SetVisible(id, ents[2], false); err != nil {
			t.Fatal(err)
		}
		srv, cli := runDesync(r, ents, 60)
		st, _ := r.srv.Stats(id)
		if len(srv)+len(cli[0]) != 0 || st.ChecksumsChecked > 1 || st.ChecksumsUnchecked < 5 {
			t.Fatalf("filtered client: events %v %v, stats %+v", srv, cli, st)
		}
	})
}
