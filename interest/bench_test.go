package interest_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/interest"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// The benchmark world: 10,000 entities moving every tick in a 2000 × 2000
// square (bouncing off its sides, up to 2 units per tick), 64 clients
// whose foci follow the first 64 entities, view radius 100, margin 10,
// cells of 100. A client sees about 80 entities.
const (
	benchEnts    = 10000
	benchClients = 64
	benchSide    = 2000.0
	benchRadius  = 100.0
	benchMargin  = 10.0
)

type walkers struct {
	x, y, vx, vy []float64
}

func newWalkers(n int) *walkers {
	rnd := rand.New(rand.NewPCG(1, 2))
	w := &walkers{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
	for i := range n {
		w.x[i], w.y[i] = rnd.Float64()*benchSide, rnd.Float64()*benchSide
		w.vx[i], w.vy[i] = rnd.Float64()*4-2, rnd.Float64()*4-2
	}
	return w
}

func (w *walkers) step() {
	for i := range w.x {
		w.x[i] += w.vx[i]
		if w.x[i] < 0 || w.x[i] > benchSide {
			w.vx[i] = -w.vx[i]
			w.x[i] += 2 * w.vx[i]
		}
		w.y[i] += w.vy[i]
		if w.y[i] < 0 || w.y[i] > benchSide {
			w.vy[i] = -w.vy[i]
			w.y[i] += 2 * w.vy[i]
		}
	}
}

// counter is a Visibility that counts its calls.
type counter struct{ n int }

func (c *counter) SetVisible(replicate.ClientID, ecs.Entity, bool) error {
	c.n++
	return nil
}

// BenchmarkGrid: one tick of the benchmark world. "grid" is Grid's
// per-tick cost: 10,000 Moves, 64 SetFocus and Apply (into a counting
// Visibility; apply-ns/tick is Apply's share). "naive" is the floor of the all-pairs alternative: every
// entity's distance to every client's focus, with the same hysteresis
// and the same calls. Both include moving the walkers (the same for
// both). calls/tick is the SetVisible calls per tick.
func BenchmarkGrid(b *testing.B) {
	ents := make([]ecs.Entity, benchEnts)
	for i := range ents {
		ents[i] = ecs.Entity(uint64(1)<<32 | uint64(i))
	}
	b.Run("grid", func(b *testing.B) {
		w := newWalkers(benchEnts)
		g, err := interest.NewGrid(interest.GridConfig{Radius: benchRadius, Margin: benchMargin, CellSize: benchRadius})
		if err != nil {
			b.Fatal(err)
		}
		v := &counter{}
		var inApply time.Duration
		tick := func() {
			w.step()
			for i, e := range ents {
				g.Move(e, w.x[i], w.y[i])
			}
			for c := range benchClients {
				g.SetFocus(replicate.ClientID(c+1), w.x[c], w.y[c])
			}
			t0 := time.Now()
			_ = g.Apply(v)
			inApply += time.Since(t0)
		}
		for range 200 { // lists at their steady size
			tick()
		}
		v.n, inApply = 0, 0
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			tick()
		}
		b.ReportMetric(float64(v.n)/float64(b.N), "calls/tick")
		b.ReportMetric(float64(inApply.Nanoseconds())/float64(b.N), "apply-ns/tick")
	})
	b.Run("naive", func(b *testing.B) {
		w := newWalkers(benchEnts)
		shown := make([][]bool, benchClients)
		for c := range shown {
			shown[c] = make([]bool, benchEnts)
		}
		v := &counter{}
		in, out := benchRadius*benchRadius, (benchRadius+benchMargin)*(benchRadius+benchMargin)
		tick := func() {
			w.step()
			for c := range benchClients {
				fx, fy, s := w.x[c], w.y[c], shown[c]
				for i, e := range ents {
					dx, dy := w.x[i]-fx, w.y[i]-fy
					d := dx*dx + dy*dy
					switch {
					case !s[i] && d <= in:
						s[i] = true
						_ = v.SetVisible(replicate.ClientID(c+1), e, true)
					case s[i] && d > out:
						s[i] = false
						_ = v.SetVisible(replicate.ClientID(c+1), e, false)
					}
				}
			}
		}
		for range 200 {
			tick()
		}
		v.n = 0
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			tick()
		}
		b.ReportMetric(float64(v.n)/float64(b.N), "calls/tick")
	})
}

// BenchmarkSend: replicate's Server.Send of the benchmark world (every
// entity's Position changes every tick) to 64 real clients over in-process
// conns that deliver everything, with every entity visible ("all") and
// with the grid deciding visibility ("grid": HiddenByDefault, Grid.Apply
// into the server before each Send). The timed part is the server's
// tick: writing the positions, Grid.Apply (grid only) and Send; the
// clients' Update runs with the timer stopped. B/client/tick is what the
// server sends a client per tick, all channels.
func BenchmarkSend(b *testing.B) {
	for _, useGrid := range []bool{false, true} {
		name := "all"
		if useGrid {
			name = "grid"
		}
		b.Run(name, func(b *testing.B) { benchSend(b, useGrid) })
	}
}

func benchSend(b *testing.B, useGrid bool) {
	p := newProtocol(b)
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: p, HiddenByDefault: useGrid, MaxJoining: benchClients})
	if err != nil {
		b.Fatal(err)
	}
	w := newWalkers(benchEnts)
	ents := make([]ecs.Entity, benchEnts)
	for i := range ents {
		ents[i] = spawn(sw, w.x[i], w.y[i])
	}
	pos := ecs.StoreOf[Position](sw)
	var g *interest.Grid
	if useGrid {
		if g, err = interest.NewGrid(interest.GridConfig{Radius: benchRadius, Margin: benchMargin, CellSize: benchRadius}); err != nil {
			b.Fatal(err)
		}
	}
	var clients []*replicate.Client
	var sEnds, cEnds []*pipeEnd
	for range benchClients {
		c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: p})
		if err != nil {
			b.Fatal(err)
		}
		se, ce := newPipe()
		srv.AddConn(se)
		if err := c.Connect(ce); err != nil {
			b.Fatal(err)
		}
		clients, sEnds, cEnds = append(clients, c), append(sEnds, se), append(cEnds, ce)
	}
	serverTick := func() {
		w.step()
		for i, e := range ents {
			_ = pos.Set(e, Position{w.x[i], w.y[i]})
			if g != nil {
				g.Move(e, w.x[i], w.y[i])
			}
		}
		if g != nil {
			for c, cl := range clients {
				if cl.State() == replicate.Connected {
					g.SetFocus(cl.ID(), w.x[c], w.y[c])
				}
			}
			if err := g.Apply(srv); err != nil {
				b.Fatal(err)
			}
		}
		srv.Send()
	}
	clientsTick := func() {
		for i, c := range clients {
			sEnds[i].flow()
			c.Update()
			cEnds[i].flow()
		}
	}
	for k := 0; ; k++ { // connect, then let the first updates land
		serverTick()
		clientsTick()
		done := true
		for _, c := range clients {
			done = done && c.State() == replicate.Connected
		}
		if done && k >= 30 {
			break
		}
		if k == 600 {
			b.Fatal("clients not connected")
		}
	}
	var before uint64
	for _, se := range sEnds {
		before += se.sent
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		serverTick()
		b.StopTimer()
		clientsTick()
		b.StartTimer()
	}
	b.StopTimer()
	var sent uint64
	for _, se := range sEnds {
		sent += se.sent
	}
	b.ReportMetric(float64(sent-before)/float64(b.N)/benchClients, "B/client/tick")
	var held int
	for _, c := range clients {
		held += c.Entities()
	}
	b.ReportMetric(float64(held)/benchClients, "entities/client")
}

// pipeEnd is one end of an in-process MessageConn: Send copies into the
// end's outbox and flow into the peer's inbox, both made of reused slots,
// so the conns allocate nothing in steady state.
type pipeEnd struct {
	peer      *pipeEnd
	out, in   []pipeMsg
	nOut, nIn int
	rd        int
	sent      uint64
	done      chan struct{}
}

type pipeMsg struct {
	ch   transport.Channel
	data []byte
}

func newPipe() (*pipeEnd, *pipeEnd) {
	a, b := &pipeEnd{done: make(chan struct{})}, &pipeEnd{done: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func push(q []pipeMsg, n *int, ch transport.Channel, data []byte) []pipeMsg {
	if *n == len(q) {
		q = append(q, pipeMsg{})
	}
	m := &q[*n]
	m.ch, m.data = ch, append(m.data[:0], data...)
	*n++
	return q
}

func (p *pipeEnd) Send(ch transport.Channel, msg []byte) error {
	if ch == transport.Unreliable && len(msg) > transport.DefaultMaxUnreliableSize {
		return transport.ErrTooLarge
	}
	p.sent += uint64(len(msg))
	p.out = push(p.out, &p.nOut, ch, msg)
	return nil
}

func (p *pipeEnd) flow() {
	q := p.peer
	for _, m := range p.out[:p.nOut] {
		q.in = push(q.in, &q.nIn, m.ch, m.data)
	}
	p.nOut = 0
}

func (p *pipeEnd) Receive() (transport.Channel, []byte, bool) {
	if p.rd == p.nIn {
		p.rd, p.nIn = 0, 0
		return 0, nil, false
	}
	m := p.in[p.rd]
	p.rd++
	return m.ch, m.data, true
}

func (p *pipeEnd) WaitReceive(context.Context) error { return errors.New("unsupported") }
func (p *pipeEnd) LocalAddr() netip.AddrPort         { return netip.AddrPort{} }
func (p *pipeEnd) RemoteAddr() netip.AddrPort        { return netip.AddrPort{} }
func (p *pipeEnd) Stats() transport.MessageStats {
	return transport.MessageStats{RTT: 50 * time.Millisecond}
}
func (p *pipeEnd) MaxUnreliableSize() int       { return transport.DefaultMaxUnreliableSize }
func (p *pipeEnd) Close() error                 { return nil }
func (p *pipeEnd) CloseWithReason(string) error { return nil }
func (p *pipeEnd) Done() <-chan struct{}        { return p.done }
func (p *pipeEnd) Err() error                   { return nil }
