package replicate_test

// What a client costs the server's memory, and that the server gives it
// back: heap measured with runtime.ReadMemStats after runtime.GC.

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strings"
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
// 100,000 entities too with REWIND_LONG=1 (CI sets it), not -short or -race.
func memWorldSizes(small int) []int {
	if testing.Short() || raceEnabled || os.Getenv("REWIND_LONG") == "" {
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
// it behind link both ways and returns it with its world and address.
func (r *memRig) dialRaw(link transport.LinkConfig) (*replicate.Client, *ecs.World, netip.AddrPort) {
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
	return c, cw, conn.LocalAddr()
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
	r.srv.Events() // earlier clients' events
	before = heapMiB()
	c, _, _ := r.dialRaw(link)
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

// TestClientCostFollowsClients (issue 21, defect 3; issue 20, item 5): in
// a world of 20,000 entities (100,000 with REWIND_LONG=1, not -short or -race) with one
// client connected, a second client costs the server what
// ConnectionStats.RetainedBytes says, and nothing is left once it leaves.
// Its cost is the heap the server releases when it disconnects the
// client, whose path is cut first so that the client keeps its own world
// (the test's process holds both sides); then the client is released too
// and the heap is back near its level before the client came. (Before:
// the first client allocated entity states for 4 clients, 14 MiB at 100k
// entities against 3.3 MiB reported, and a late joiner cost nothing the
// server would release.)
func TestClientCostFollowsClients(t *testing.T) {
	for _, n := range memWorldSizes(20000) {
		t.Run(fmt.Sprint("entities=", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newMemRig(t, 5, replicate.ServerConfig{})
				defer r.close()
				r.spawnMany(n)
				link := transport.LinkConfig{Latency: 10 * time.Millisecond}
				r.connect(1, link)
				for r.clients[0].Entities() < n {
					r.step()
				}
				for range 30 {
					r.step()
				}
				h0 := heapMiB()
				c, cw, addr := r.dialRaw(link)
				step := func() {
					r.step()
					c.Update()
				}
				for k := 0; c.Entities() < n; k++ {
					if k == 600 {
						t.Fatalf("client holds %d of %d entities", c.Entities(), n)
					}
					step()
				}
				for range 30 {
					step()
				}
				st, err := r.srv.Stats(c.ID())
				if err != nil {
					t.Fatal(err)
				}
				h1 := heapMiB()
				r.net.SetLink(addr, r.ln.Addr(), transport.LinkConfig{Down: true})
				r.net.SetLink(r.ln.Addr(), addr, transport.LinkConfig{Down: true})
				if err := r.srv.Disconnect(c.ID(), "test"); err != nil {
					t.Fatal(err)
				}
				for range 30 {
					r.step()
				}
				h2 := heapMiB()
				if c.Entities() != n {
					t.Fatalf("the client holds %d entities: the measure would not isolate the server", c.Entities())
				}
				runtime.KeepAlive(cw)
				c.Close()
				c, cw = nil, nil
				for range 30 {
					r.step()
				}
				h3 := heapMiB()
				cost, ret := h1-h2, float64(st.RetainedBytes)/(1<<20)
				t.Logf("%d entities: heap %.1f MiB before the client, %.1f with it; the server released %.2f MiB when it left (RetainedBytes %.2f MiB); %.1f MiB once the client was gone too",
					n, h0, h1, cost, ret, h3)
				if cost < 0.8*ret || cost > 1.25*ret+0.25 {
					t.Errorf("the client cost the server %.2f MiB, RetainedBytes says %.2f", cost, ret)
				}
				if h3-h0 > 0.05*(h1-h0)+0.5 {
					t.Errorf("heap %.1f MiB after the client left, %.1f before it came", h3, h0)
				}
			})
		})
	}
}

// TestGhostJoiners (issue 21, defect 3): 50 connections that say hello,
// take the first part of a 20,000-entity world's first update (100,000
// with REWIND_LONG=1, not -short or -race) and vanish (their path cut) leave no lasting
// growth: once they have timed out, the heap is back near its level
// before they came, beside an honest client that stays. While they are
// there, at most MaxJoining (16) of them hold entity states and a first
// update at once; the others wait, holding neither. (Before: the table
// of per-client entity states doubled to 64 columns and stayed, 185 MiB
// at 100k entities, and all 50 held their state at once.)
func TestGhostJoiners(t *testing.T) {
	for _, n := range memWorldSizes(20000) {
		t.Run(fmt.Sprint("entities=", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newMemRigOn(t, transport.MessageNetworkConfig{Seed: 6, IdleTimeout: 2 * time.Second},
					replicate.ServerConfig{HelloTimeout: 30 * time.Second})
				defer r.close()
				r.spawnMany(n)
				link := transport.LinkConfig{Latency: 10 * time.Millisecond}
				r.connect(1, link)
				for r.clients[0].Entities() < n {
					r.step()
				}
				first := r.clients[0].ID()
				// A first wave warms the test network's buffer pool
				// (test machinery, bounded) to what a wave needs.
				hPre := heapMiB()
				r.ghostWave(first)
				h0 := heapMiB()
				peak, maxHeld := r.ghostWave(first + ghosts)
				for k := 0; len(r.srv.Clients()) > 1; k++ {
					if k == 10*60 {
						t.Fatalf("%d clients still connected", len(r.srv.Clients()))
					}
					r.step()
				}
				for range 60 {
					r.step()
				}
				h1 := heapMiB()
				t.Logf("%d entities: heap %.1f MiB before a first wave of %d ghosts, %.1f after it (the network's buffer pool grown); %.1f before the second, peak %.1f among them (at most %d admitted at once), %.1f after they timed out",
					n, hPre, ghosts, h0, h0, peak, maxHeld, h1)
				if maxHeld > replicate.DefaultMaxJoining {
					t.Errorf("%d ghosts held state at once, MaxJoining is %d", maxHeld, replicate.DefaultMaxJoining)
				}
				if h1-h0 > 0.05*(peak-h0)+1 {
					t.Errorf("heap %.1f MiB after the ghosts left, %.1f before", h1, h0)
				}
				// In the small world the test network's pool does not grow
				// (no part waits in it long enough), so the heap is also
				// back at its level before the first wave.
				if n <= 20000 && h1-hPre > 0.05*(peak-hPre)+1 {
					t.Errorf("heap %.1f MiB after two waves of ghosts, %.1f before the first", h1, hPre)
				}
				if d := r.diff(nil); d != "" {
					t.Errorf("the honest client diverged: %s", d)
				}
			})
		})
	}
}

// ghosts is the number of connections in a wave of ghost joiners.
const ghosts = 50

// ghostWave dials 50 clients that say hello and, a tick after the
// server admits each, vanish (their path cut both ways); the server
// numbers them from base+1 in dial order. It returns when all were
// admitted and cut, with the peak heap seen and the most ghosts the
// server held as clients at once.
func (r *memRig) ghostWave(base replicate.ClientID) (peak float64, maxHeld int) {
	r.t.Helper()
	link := transport.LinkConfig{Latency: 10 * time.Millisecond}
	addrs := make([]netip.AddrPort, ghosts)
	for g := range ghosts {
		conn, err := r.net.Dial(context.Background(), r.ln.Addr())
		if err != nil {
			r.t.Fatal(err)
		}
		addrs[g] = conn.LocalAddr()
		r.net.SetLink(conn.LocalAddr(), r.ln.Addr(), link)
		r.net.SetLink(r.ln.Addr(), conn.LocalAddr(), link)
		ghost, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: r.tp.p})
		if err != nil {
			r.t.Fatal(err)
		}
		if err := ghost.Connect(conn); err != nil {
			r.t.Fatal(err)
		}
	}
	cutAt := make([]int, ghosts) // tick at which ghost g vanishes (0: not admitted yet)
	admitted, cut := 0, 0
	for k := 1; cut < ghosts; k++ {
		if k == 60*60 {
			r.t.Fatalf("%d of %d ghosts admitted after a minute", admitted, ghosts)
		}
		r.step()
		for _, ev := range r.srv.Events() {
			if g := int(ev.Client - base - 1); ev.Kind == replicate.ClientConnected && ev.Client > base && g < ghosts {
				cutAt[g] = k + 1
				admitted++
			}
		}
		for g, at := range cutAt {
			if at == k {
				r.net.SetLink(addrs[g], r.ln.Addr(), transport.LinkConfig{Down: true})
				r.net.SetLink(r.ln.Addr(), addrs[g], transport.LinkConfig{Down: true})
				cut++
			}
		}
		maxHeld = max(maxHeld, len(r.srv.Clients())-1)
		if k%30 == 0 {
			peak = max(peak, heapMiB())
		}
	}
	for k := 0; len(r.srv.Clients()) > 1; k++ {
		if k == 10*60 {
			r.t.Fatalf("%d clients still connected", len(r.srv.Clients()))
		}
		r.step()
	}
	return peak, maxHeld
}

// TestJoinAdmission: with MaxJoining 2, three connections that say hello
// and then never read (their path stays up) and an honest client behind
// them: two ghosts are admitted, the third and the honest client wait
// for admission without entity states; the admitted ghosts are
// disconnected JoinTimeout after their first update went out ("join
// timeout"), which admits the waiting ones, and the honest client, once
// admitted, proves itself and converges while the last ghost times out.
func TestJoinAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMemRig(t, 7, replicate.ServerConfig{MaxJoining: 2, JoinTimeout: 2 * time.Second, HelloTimeout: 20 * time.Second})
		defer r.close()
		r.spawnMany(2000)
		link := transport.LinkConfig{Latency: 10 * time.Millisecond}
		for range 3 {
			g, _, _ := r.dialRaw(link)
			_ = g // never updated: it never reads nor acknowledges
		}
		for range 3 {
			r.step()
		}
		conn, err := r.net.Dial(context.Background(), r.ln.Addr())
		if err != nil {
			t.Fatal(err)
		}
		r.net.SetLink(conn.LocalAddr(), r.ln.Addr(), link)
		r.net.SetLink(r.ln.Addr(), conn.LocalAddr(), link)
		cw := ecs.New()
		c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: r.tp.p})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		r.clients, r.cws = append(r.clients, c), append(r.cws, cw)
		var connected, timedOut []replicate.ClientID
		maxHeld := 0
		for k := 0; k < 10*60; k++ {
			r.step()
			for _, ev := range r.srv.Events() {
				switch {
				case ev.Kind == replicate.ClientConnected:
					connected = append(connected, ev.Client)
				case ev.Kind == replicate.ClientDisconnected && strings.Contains(ev.Reason, "join timeout"):
					timedOut = append(timedOut, ev.Client)
				}
			}
			maxHeld = max(maxHeld, len(r.srv.Clients()))
			if k == 30 && (len(connected) != 2 || c.State() == replicate.Connected) {
				t.Fatalf("after 30 ticks: connected %v, honest client %v", connected, c.State())
			}
		}
		t.Logf("connected %v, timed out %v, at most %d admitted at once", connected, timedOut, maxHeld)
		if len(connected) != 4 || len(timedOut) != 3 || maxHeld > 3 {
			t.Fatalf("connected %v, timed out %v, at most %d admitted at once", connected, timedOut, maxHeld)
		}
		if c.State() != replicate.Connected || c.Entities() != 2000 {
			t.Fatalf("honest client %v with %d entities", c.State(), c.Entities())
		}
		if d := r.diff(nil); d != "" {
			t.Fatal(d)
		}
	})
}
