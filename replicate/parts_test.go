package replicate_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// lateJoinEntities is the world size of TestLateJoinLargeWorld: smaller
// under the race detector, which slows the test about tenfold, and still a
// first update over the 1 MiB message limit.
var lateJoinEntities = raceSize(100_000, 40_000)

// raceSize is n, or raceN under the race detector.
func raceSize(n, raceN int) int {
	if raceEnabled {
		return raceN
	}
	return n
}

// TestLateJoinLargeWorld: a client joining a world of lateJoinEntities
// entities (100,000 without the race detector; its first update is several
// MiB, far over the transport's 1 MiB message limit) on the in-memory
// network with latency and loss gets the whole world, applied atomically:
// at every tick it holds either no entity or all of them, and then exactly
// the server's state, references included.
func TestLateJoinLargeWorld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMemRig(t, 11, replicate.ServerConfig{})
		defer r.close()
		owners := ecs.Register[Owner](r.sw)
		ents := make([]ecs.Entity, lateJoinEntities)
		for i := range ents {
			ents[i] = spawnRep(r.sw, Position{X: float64(i), Y: 1}, int32(i))
			if i > 0 {
				_ = owners.Set(ents[i], Owner{E: ents[i-1]})
			}
		}
		r.srv.Send() // the world exists before the client connects
		r.connect(1, transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 0.05})
		c := r.clients[0]
		// The world keeps changing while the first update travels: the
		// updates and mutations that follow it wait for it.
		pos := ecs.StoreOf[Position](r.sw)
		for k := 0; ; k++ {
			switch n := c.Entities(); {
			case c.State() != replicate.Connected:
				t.Fatalf("client disconnected after %d ticks: %v", k, c.Err())
			case n != 0 && n < lateJoinEntities:
				t.Fatalf("tick %d: client holds %d of %d entities: the first update was not applied atomically", k, n, lateJoinEntities)
			case n != 0:
				t.Logf("joined after %d ticks", k)
			}
			if c.Entities() != 0 {
				break
			}
			if k == 600 {
				t.Fatalf("no first update after %d ticks", k)
			}
			pos.Ptr(ents[(k*997)%len(ents)]).X = -1
			spawnRep(r.sw, Position{X: float64(k)}, 1)
			r.step()
		}
		// Mutations lost or timed out while the first update travelled are
		// resent (after a backed-off timeout).
		for k := 1; ; k++ {
			r.step()
			if k%10 != 0 {
				continue
			}
			d := r.diff(nil)
			if d == "" {
				t.Logf("converged %d ticks after joining", k)
				break
			}
			if k == 300 {
				t.Fatal(d)
			}
		}
		if st := c.Stats(); st.BytesIn <= transport.DefaultMaxMessageSize {
			t.Fatalf("the client received %d bytes: the first update was not larger than a message", st.BytesIn)
		} else {
			t.Logf("%d entities: %d bytes received", lateJoinEntities, st.BytesIn)
		}
	})
}

// TestUpdatePartsFitSmallMessages: with conns (and ServerConfig) limited to
// 4 KiB messages, a first update of about 100 KB travels in parts that each
// fit, and the late joiner converges instead of being dropped by a refused
// send.
func TestUpdatePartsFitSmallMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 4 << 10
		r := newMemRigOn(t, transport.MessageNetworkConfig{Seed: 5, Limits: transport.MessageLimits{MaxMessageSize: limit}},
			replicate.ServerConfig{MaxMessageSize: limit})
		defer r.close()
		for i := range 3000 {
			spawnRep(r.sw, Position{X: float64(i), Y: 2}, int32(i))
		}
		r.srv.Send()
		r.connect(1, transport.LinkConfig{Latency: 10 * time.Millisecond})
		c := r.clients[0]
		for k := 1; ; k++ {
			r.step()
			if c.State() != replicate.Connected {
				t.Fatalf("client dropped after %d ticks: %v", k, c.Err())
			}
			if c.Entities() == 3000 && r.diff(nil) == "" {
				break
			}
			if k == 300 {
				t.Fatalf("not converged after %d ticks: %s", k, r.diff(nil))
			}
		}
		if st := c.Stats(); st.BytesIn < 10*limit {
			t.Fatalf("the first update was only %d bytes; the test needs one far over the %d-byte limit", st.BytesIn, limit)
		}
	})
}

// TestUpdateBacklogBounded: the update bytes a server queues for a client
// are capped by MaxUpdateBacklog: a first update over the cap disconnects
// that client as not keeping up; under the cap it arrives.
func TestUpdateBacklogBounded(t *testing.T) {
	for _, tc := range []struct {
		backlog int
		joins   bool
	}{{50 << 10, false}, {1 << 20, true}} {
		h := newHarness(t, newProto(t), replicate.ServerConfig{MaxUpdateBacklog: tc.backlog})
		for i := range 3000 { // a first update of about 100 KB
			spawnRep(h.sw, Position{X: float64(i)}, 1)
		}
		c := h.connect(nil)
		for range 4 {
			h.exchange()
		}
		var reason string
		for _, ev := range h.srv.Events() {
			if ev.Kind == replicate.ClientDisconnected {
				reason = ev.Reason
			}
		}
		if tc.joins {
			if c.Entities() != 3000 || reason != "" {
				t.Fatalf("backlog cap %d: client has %d entities, disconnect %q", tc.backlog, c.Entities(), reason)
			}
			continue
		}
		if c.State() != replicate.Disconnected || !strings.Contains(reason, "not keeping up") {
			t.Fatalf("backlog cap %d: client %v, disconnect reason %q", tc.backlog, c.State(), reason)
		}
	}
}
