package replicate_test

// What a client costs the server's memory, and that the server gives it
// back: heap measured with runtime.ReadMemStats after runtime.GC.

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// heapMiB is the live heap after two collections, in MiB.
func heapMiB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// memWorldSizes are the world sizes of the memory tests: small always,
// 100,000 entities too unless -short or -race.
func memWorldSizes(small int) []int {
	if testing.Short() || raceEnabled {
		return []int{small}
	}
	return []int{small, 100000}
}

// spawnMany spawns n replicated entities on the rig's server.
func (r *memRig) spawnMany(n int) []ecs.Entity {
	ents := make([]ecs.Entity, 0, n)
	for i := range n {
		ents = append(ents, spawnRep(r.sw, Position{X: float64(i)}, int32(i)))
	}
	return ents
}

// dialRaw dials a client the rig does not keep (its caller owns it), puts
// it behind link both ways and returns it with its world.
func (r *memRig) dialRaw(link transport.LinkConfig) (*replicate.Client, *ecs.World) {
	r.t.Helper()
	conn, err := r.net.Dial(context.Background(), r.ln.Addr())
	if err != nil {
		r.t.Fatal(err)
	}
	cw := ecs.New()
	c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: r.tp.p})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := c.Connect(conn); err != nil {
		r.t.Fatal(err)
	}
	r.net.SetLink(conn.LocalAddr(), r.ln.Addr(), link)
	r.net.SetLink(r.ln.Addr(), conn.LocalAddr(), link)
	return c, cw
}

// TestDroppedClientReleased (issue 21, defect 2): a client that joins a
// large world over a slow link, so that its first update still waits in
// its backlog, and is then disconnected, leaves nothing behind: the heap
// after a collection is back near its level before the client joined.
// The client joins last, after another one: the server used to keep the
// freed tail slot of its client list, and with it the departed client and
// its backlog, until someone else connected.
func TestDroppedClientReleased(t *testing.T) {
	for _, n := range memWorldSizes(50000) {
		t.Run(fmt.Sprint("entities=", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newMemRig(t, 3, replicate.ServerConfig{})
				defer r.close()
				r.spawnMany(n)
				// The first client joins over the same slow link, so the
				// network's buffer pool has grown to its size before the
				// measure.
				slow := transport.LinkConfig{Latency: 10 * time.Millisecond, BandwidthBytesPerSec: 1 << 20}
				r.connect(1, slow)
				for r.clients[0].Entities() < n {
					r.step()
				}
				before, joined, after, st := r.joinAndLeave(slow, n)
				t.Logf("%d entities: heap %.1f MiB before the client, %.1f with it (RetainedBytes %.1f MiB), %.1f after it left",
					n, before, joined, float64(st.RetainedBytes)/(1<<20), after)
				// The client's first update was still queued for it
				// (RetainedBytes counts it); what it held must be gone.
				if ret := float64(st.RetainedBytes) / (1 << 20); after-before > max(0.5, 0.15*ret) {
					t.Fatalf("heap %.1f MiB after the client left, %.1f before it joined (it retained %.1f MiB)", after, before, ret)
				}
			})
		})
	}
}

// joinAndLeave connects a client over link to the rig's world of n
// entities, runs until the server has accepted it (and sent the first
// MiB of its first update, the rest waiting in its backlog), disconnects it and runs four seconds of ticks. It returns the heap before
// the client dialled, while connected, and after it left, and the
// client's stats while connected.
func (r *memRig) joinAndLeave(link transport.LinkConfig, n int) (before, joined, after float64, st replicate.ConnectionStats) {
	r.t.Helper()
	before = heapMiB()
	c, _ := r.dialRaw(link)
	var id replicate.ClientID
	for k := 0; id == 0; k++ {
		if k == 60 {
			r.t.Fatal("no connection after 60 ticks")
		}
		r.step()
		for _, ev := range r.srv.Events() {
			if ev.Kind == replicate.ClientConnected {
				id = ev.Client
			}
		}
	}
	st, err := r.srv.Stats(id)
	if err != nil {
		r.t.Fatal(err)
	}
	joined = heapMiB()
	if err := r.srv.Disconnect(id, "test"); err != nil {
		r.t.Fatal(err)
	}
	c.Close()
	for range 240 { // what was in flight to it drains from the network
		r.step()
	}
	return before, joined, heapMiB(), st
}
