package metrics_test

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

type pos struct{ X, Y float32 }

func newProtocol() *replicate.Protocol {
	p := replicate.NewProtocol()
	if _, err := replicate.Component[pos](p, replicate.WithOwnRule()); err != nil {
		panic(err)
	}
	return p
}

// rig is a server with entities moving every tick and clients on the
// in-memory network, stepped one tick at a time.
type rig struct {
	t       testing.TB
	net     *transport.MessageNetwork
	ln      *transport.MessageNetworkListener
	world   *ecs.World
	srv     *replicate.Server
	ents    []ecs.Entity
	clients []*replicate.Client
	n       int
}

func newRig(t testing.TB, entities int) *rig {
	r := &rig{t: t, net: transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1,
		Default: transport.LinkConfig{Latency: 20 * time.Millisecond}})}
	var err error
	if r.ln, err = r.net.Listen(netip.AddrPort{}); err != nil {
		t.Fatal(err)
	}
	r.world = ecs.New()
	if r.srv, err = replicate.NewServer(replicate.ServerConfig{World: r.world, Protocol: newProtocol(), TickRate: 60}); err != nil {
		t.Fatal(err)
	}
	for i := range entities {
		e := r.world.Spawn()
		_ = ecs.Register[replicate.Replicated](r.world).Set(e, replicate.Replicated{})
		_ = ecs.Register[pos](r.world).Set(e, pos{X: float32(i)})
		r.ents = append(r.ents, e)
	}
	t.Cleanup(func() {
		for _, c := range r.clients {
			c.Close()
		}
		r.srv.Close()
		r.net.Close()
	})
	return r
}

// join connects a client and waits for its hello to reach the server
// (read at the next tick).
func (r *rig) join() *replicate.Client {
	ctx := context.Background()
	c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: newProtocol()})
	if err != nil {
		r.t.Fatal(err)
	}
	conn, err := r.net.Dial(ctx, r.ln.Addr())
	if err != nil {
		r.t.Fatal(err)
	}
	sconn, err := r.ln.Accept(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	r.srv.AddConn(sconn)
	if err := c.Connect(conn); err != nil {
		r.t.Fatal(err)
	}
	if err := sconn.WaitReceive(ctx); err != nil { // the hello
		r.t.Fatal(err)
	}
	r.clients = append(r.clients, c)
	return c
}

// tick runs one 60 Hz tick of virtual time: the server moves every
// entity and sends, every client updates.
func (r *rig) tick() {
	r.n++
	r.srv.Receive()
	st := ecs.StoreOf[pos](r.world)
	for _, e := range r.ents {
		p, _ := st.Get(e)
		p.X++
		_ = st.Set(e, p)
	}
	r.srv.Send()
	for _, c := range r.clients {
		c.Update()
	}
	time.Sleep(time.Second / 60) // virtual time inside synctest
	synctest.Wait()
}

func TestServerFigures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 20)
		m := metrics.NewServer(r.srv, metrics.ServerConfig{RTTEvery: 10, Reports: 2})
		a, b := r.join(), r.join()
		for range 120 {
			r.tick()
			m.Events(r.srv.Events())
			m.Sample(2 * time.Millisecond)
		}
		var f metrics.ServerFigures
		m.Read(&f)
		if len(f.Clients) != 2 || f.Connects != 2 || f.Disconnects != 0 {
			t.Fatalf("clients %d, connects %d, disconnects %d; want 2, 2, 0", len(f.Clients), f.Connects, f.Disconnects)
		}
		for _, c := range f.Clients {
			if c.Out.Updates == 0 || c.Out.Mutations == 0 || c.In.Acks == 0 || c.Entities != 20 {
				t.Fatalf("client %d: out %+v in %+v entities %d", c.ID, c.Out, c.In, c.Entities)
			}
			if c.RTT < 30*time.Millisecond || c.RTT > 60*time.Millisecond {
				t.Fatalf("client %d: rtt %v on a 20 ms link", c.ID, c.RTT)
			}
		}
		if f.Out.Mutations != f.Clients[0].Out.Mutations+f.Clients[1].Out.Mutations {
			t.Fatalf("total mutation bytes %d, not the sum of the clients'", f.Out.Mutations)
		}
		if f.TickDuration.Count != 120 || f.TickDuration.Quantile(0.5) <= 0.001 || f.TickDuration.Quantile(0.5) > 0.002 {
			t.Fatalf("tick duration: %d samples, median %v", f.TickDuration.Count, f.TickDuration.Quantile(0.5))
		}
		if q := f.RTT.Quantile(0.5); f.RTT.Count == 0 || q < 0.03 || q > 0.075 {
			t.Fatalf("rtt histogram: %d samples, median %v", f.RTT.Count, f.RTT.Quantile(0.5))
		}

		// Resyncs are reported and counted; only the newest Reports kept.
		for range 3 {
			if err := r.srv.Resync(a.ID(), "test"); err != nil {
				t.Fatal(err)
			}
			r.tick()
			m.Events(r.srv.Events())
			m.Sample(0)
		}
		before := f.Out
		m.Read(&f)
		if len(f.Reports) != 2 || f.Reports[1].Kind != replicate.ClientResync || f.Reports[1].Client != a.ID() {
			t.Fatalf("reports %+v, want the last 2 resyncs of client %d", f.Reports, a.ID())
		}
		if f.Resyncs.Total() != 3 || f.Clients[0].Resyncs.Total() != 3 {
			t.Fatalf("resyncs %+v, client %+v: want 3", f.Resyncs, f.Clients[0].Resyncs)
		}

		// A client that leaves stays in the totals: counters only grow.
		b.Close()
		for range 30 {
			r.tick()
			m.Sample(time.Millisecond)
		}
		m.Read(&f)
		if len(f.Clients) != 1 || f.Disconnects != 1 {
			t.Fatalf("after a client left: %d clients, %d disconnects", len(f.Clients), f.Disconnects)
		}
		if f.Out.Mutations < before.Mutations || f.Out.Updates < before.Updates {
			t.Fatalf("totals went down: %+v after %+v", f.Out, before)
		}
	})
}

// Sampling a server of 8 clients allocates nothing per tick.
func BenchmarkServerSample(b *testing.B) {
	r := newRig(b, 300)
	m := metrics.NewServer(r.srv, metrics.ServerConfig{})
	for range 8 {
		r.join()
	}
	r.srv.Receive()
	r.srv.Send()
	if n := len(r.srv.Clients()); n != 8 {
		b.Fatalf("%d clients connected, want 8", n)
	}
	m.Sample(time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.Sample(time.Millisecond)
	}
}

func TestServerSampleAllocatesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 50)
		m := metrics.NewServer(r.srv, metrics.ServerConfig{})
		for range 4 {
			r.join()
		}
		for range 30 {
			r.tick()
			m.Sample(time.Millisecond)
		}
		if n := len(r.srv.Clients()); n != 4 {
			t.Fatalf("%d clients connected, want 4", n)
		}
		if a := testing.AllocsPerRun(200, func() { m.Sample(time.Millisecond) }); a != 0 {
			t.Fatalf("Sample: %v allocations, want 0", a)
		}
	})
}

func TestHistogramQuantile(t *testing.T) {
	h := metrics.NewHistogram([]float64{1, 2, 4})
	for _, v := range []float64{0.5, 1.5, 1.5, 3, 10} {
		h.Observe(v)
	}
	if h.Count != 5 || h.Sum != 16.5 || h.Counts[0] != 1 || h.Counts[1] != 2 || h.Counts[2] != 1 || h.Counts[3] != 1 {
		t.Fatalf("histogram %+v", h)
	}
	if q := h.Quantile(0.5); q < 1 || q > 2 {
		t.Fatalf("median %v, want within (1, 2]", q)
	}
	if q := h.Quantile(1); q != 4 {
		t.Fatalf("max %v, want the highest bound 4", q)
	}
	if a := testing.AllocsPerRun(100, func() { h.Observe(1) }); a != 0 {
		t.Fatalf("Observe: %v allocations", a)
	}
}
