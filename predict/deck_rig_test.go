package predict_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// The card game of the RNG tests: each player has a deck (a fixed-size
// array) and a random stream of its own; a player who draws shuffles the
// deck with the stream and takes the top card. The server decides outside
// the simulation how many times each player draws in a tick (Wants, like
// an input the clients learn late, so they mispredict and roll back); the
// world's RNG (rng.Rand, a resource) rolls one to three times per tick
// (as it decides) and keeps the last roll in Roll.
const deckSize = 20

type (
	Wants  struct{ N uint8 }
	Stream struct{ R rng.Rand }
	Deck   struct {
		Cards [deckSize]uint8
		Drawn uint32
		Top   uint8
	}
	Roll struct{ V uint64 }
)

// deckProtocol replicates the game: Stream is RNG state (RNGState), the
// world's rng.Rand is RNG state as such.
func deckProtocol(t testing.TB) *replicate.Protocol {
	t.Helper()
	p := replicate.NewProtocol()
	for _, err := range []error{
		second(replicate.Component[Wants](p, replicate.WithOwnRule())),
		second(replicate.Component[Stream](p, replicate.WithOwnRule(), replicate.RNGState())),
		second(replicate.Component[Deck](p, replicate.WithOwnRule())),
		second(replicate.ReplicateResource[rng.Rand](p)),
		second(replicate.ReplicateResource[Roll](p)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// deckSim is the simulation both sides run.
func deckSim(w *ecs.World) func(tick.Tick) {
	q := ecs.NewQuery3(ecs.Register[Wants](w).Read(), ecs.Register[Stream](w).Write(), ecs.Register[Deck](w).Write())
	world, roll := ecs.RegisterResource[rng.Rand](w), ecs.RegisterResource[Roll](w)
	return func(tick.Tick) {
		for _, r := range q.All() {
			d := r.C
			for range r.A.N {
				r.B.R.Shuffle(deckSize, func(i, j int) { d.Cards[i], d.Cards[j] = d.Cards[j], d.Cards[i] })
				d.Drawn++
				d.Top = d.Cards[0]
			}
		}
		if g, ok := world.Get(); ok {
			// A data-dependent pattern: one to three draws, the last kept.
			var v uint64
			for range 1 + g.IntN(3) {
				v = g.Uint64()
			}
			world.Set(g)
			roll.Set(Roll{V: v})
		}
	}
}

// playerState is a player's predicted state at a tick.
type playerState struct {
	Stream Stream
	Deck   Deck
}

// tickState is the state of the game at the end of a tick.
type tickState struct {
	players []playerState
	world   rng.Rand
	roll    Roll
}

// deckClient is one predicting client of a deckRig.
type deckClient struct {
	addr   netip.AddrPort
	cw     *ecs.World
	c      *replicate.Client
	tl     *predict.Timeline
	sim    func(tick.Tick)
	wants  *predict.Component[Wants]
	stream *predict.Component[Stream]
	deck   *predict.Component[Deck]
	world  *predict.Resource[rng.Rand]
	roll   *predict.Resource[Roll]
	paused bool // no Update: a client that stalls
	// first is the state each tick was first predicted with (outside
	// rollbacks): the client's first guess.
	first map[tick.Tick]tickState
}

// deckRig is a server and predicting clients on a
// transport.MessageNetwork, built inside synctest.Test (virtual time).
type deckRig struct {
	t       *testing.T
	net     *transport.MessageNetwork
	ln      *transport.MessageNetworkListener
	sw      *ecs.World
	srv     *replicate.Server
	ssim    func(tick.Tick)
	players []ecs.Entity
	clients []*deckClient
	// wants decides how often player i draws in tick F (server side).
	wants  func(f tick.Tick, i int) uint8
	states map[tick.Tick]tickState // the server's state at the end of each tick
	ccfg   replicate.ClientConfig
	pcfg   predict.Config
	lead   int
	cancel context.CancelFunc
	served chan error
}

// newDeckRig starts a server with n players seeded from seed; the clients
// predict lead ticks ahead with the window of pcfg.
func newDeckRig(t *testing.T, seed uint64, n int, pcfg predict.Config, lead int) *deckRig {
	t.Helper()
	r := &deckRig{t: t, sw: ecs.New(), states: map[tick.Tick]tickState{}, pcfg: pcfg, lead: lead, served: make(chan error, 1)}
	r.net = transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
	var err error
	if r.ln, err = r.net.Listen(netip.AddrPort{}); err != nil {
		t.Fatal(err)
	}
	if r.srv, err = replicate.NewServer(replicate.ServerConfig{World: r.sw, Protocol: deckProtocol(t)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.served <- r.srv.Serve(ctx, r.ln) }()
	r.ssim = deckSim(r.sw)
	for i := range n {
		e := r.sw.Spawn()
		_ = ecs.Register[replicate.Replicated](r.sw).Set(e, replicate.Replicated{})
		var d Deck
		for k := range d.Cards {
			d.Cards[k] = uint8(k)
		}
		_ = ecs.StoreOf[Deck](r.sw).Set(e, d)
		_ = ecs.StoreOf[Stream](r.sw).Set(e, Stream{R: rng.Stream(seed, uint64(i))})
		_ = ecs.StoreOf[Wants](r.sw).Set(e, Wants{})
		r.players = append(r.players, e)
	}
	ecs.ResourceOf[rng.Rand](r.sw).Set(rng.NewSeed(seed))
	hidden := rand.New(rand.NewPCG(seed, 99))
	r.wants = func(tick.Tick, int) uint8 { return uint8(hidden.IntN(4) / 2) } // half the time one draw
	return r
}

// connect dials a client behind link (both directions).
func (r *deckRig) connect(link transport.LinkConfig) *deckClient {
	r.t.Helper()
	conn, err := r.net.Dial(context.Background(), r.ln.Addr())
	if err != nil {
		r.t.Fatal(err)
	}
	dc := &deckClient{addr: conn.LocalAddr(), cw: ecs.New(), first: map[tick.Tick]tickState{}}
	cfg := r.ccfg
	cfg.World, cfg.Protocol = dc.cw, deckProtocol(r.t)
	if dc.c, err = replicate.NewClient(cfg); err != nil {
		r.t.Fatal(err)
	}
	if err := dc.c.Connect(conn); err != nil {
		r.t.Fatal(err)
	}
	setLinks(r.net, dc.addr, r.ln.Addr(), link)
	r.clients = append(r.clients, dc)
	return dc
}

// startTimeline begins dc's prediction at the tick of its first update
// (the World holds the server's state of that tick), then predicts lead
// ticks ahead.
func (r *deckRig) startTimeline(dc *deckClient) {
	t := r.t
	dc.tl = predict.New(dc.cw, dc.c.UpdateTick(), r.pcfg)
	var err error
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	dc.wants, err = predict.Register[Wants](dc.tl)
	must(err)
	dc.stream, err = predict.Register[Stream](dc.tl)
	must(err)
	dc.deck, err = predict.Register[Deck](dc.tl)
	must(err)
	dc.world, err = predict.RegisterResource[rng.Rand](dc.tl)
	must(err)
	dc.roll, err = predict.RegisterResource[Roll](dc.tl)
	must(err)
	predict.Attach(dc.c, dc.tl)
	must(predict.AttachComponent(dc.c, dc.wants))
	must(predict.AttachComponent(dc.c, dc.stream))
	must(predict.AttachComponent(dc.c, dc.deck))
	must(predict.AttachResource(dc.c, dc.world))
	must(predict.AttachResource(dc.c, dc.roll))
	base := deckSim(dc.cw)
	dc.sim = func(f tick.Tick) {
		base(f)
		if !dc.tl.InRollback() {
			dc.first[f] = r.clientState(dc, f, true)
		}
	}
	for range r.lead {
		dc.tl.Step(dc.sim)
	}
}

// step runs one frame: the server receives, decides the draws, simulates
// tick F and sends it; every client that is not paused receives, and
// every client with a timeline steps; then one tick of time passes.
func (r *deckRig) step() {
	r.srv.Receive()
	f := r.srv.Tick() + 1
	wants := ecs.StoreOf[Wants](r.sw)
	for i, e := range r.players {
		if n := r.wants(f, i); n != wants.Ptr(e).N {
			wants.Ptr(e).N = n
		}
	}
	r.ssim(f)
	r.states[f] = r.serverState()
	if err := r.srv.SendTick(f); err != nil {
		r.t.Fatal(err)
	}
	for _, dc := range r.clients {
		if !dc.paused {
			dc.c.Update()
		}
		if dc.tl == nil && dc.c.State() == replicate.Connected && dc.c.UpdateTick() != 0 {
			r.startTimeline(dc)
		} else if dc.tl != nil {
			dc.tl.Step(dc.sim)
		}
	}
	time.Sleep(time.Second / 60)
}

// run steps k frames.
func (r *deckRig) run(k int) {
	for range k {
		r.step()
	}
}

func (r *deckRig) serverState() tickState {
	var s tickState
	for _, e := range r.players {
		st, _ := ecs.StoreOf[Stream](r.sw).Get(e)
		d, _ := ecs.StoreOf[Deck](r.sw).Get(e)
		s.players = append(s.players, playerState{Stream: st, Deck: d})
	}
	s.world, _ = ecs.ResourceOf[rng.Rand](r.sw).Get()
	s.roll, _ = ecs.ResourceOf[Roll](r.sw).Get()
	return s
}

// clientState is dc's state of tick f: the World's (live, during the
// simulation of f) or the history's.
func (r *deckRig) clientState(dc *deckClient, f tick.Tick, live bool) tickState {
	var s tickState
	for _, se := range r.players {
		ce, _ := dc.c.ClientEntity(se)
		var p playerState
		if live {
			p.Stream, _ = ecs.StoreOf[Stream](dc.cw).Get(ce)
			p.Deck, _ = ecs.StoreOf[Deck](dc.cw).Get(ce)
		} else {
			p.Stream, _ = dc.stream.At(ce, f)
			p.Deck, _ = dc.deck.At(ce, f)
		}
		s.players = append(s.players, p)
	}
	if live {
		s.world, _ = ecs.ResourceOf[rng.Rand](dc.cw).Get()
		s.roll, _ = ecs.ResourceOf[Roll](dc.cw).Get()
	} else {
		s.world, _ = dc.world.At(f)
		s.roll, _ = dc.roll.At(f)
	}
	return s
}

// commonTick is the newest tick complete on every client and held in
// every client's history.
func (r *deckRig) commonTick() tick.Tick {
	for f := r.srv.Tick(); f > 0; f-- {
		ok := true
		for _, dc := range r.clients {
			_, held := dc.roll.At(f)
			ok = ok && held && dc.c.TickComplete(f) && !f.Before(dc.tl.Now()-tick.Tick(dc.tl.Window()))
		}
		if ok {
			return f
		}
	}
	r.t.Fatal("no tick complete on every client")
	return 0
}

// diffAt describes how client i's state of tick f differs from the
// server's ("" when equal, card for card).
func (r *deckRig) diffAt(i int, f tick.Tick) string {
	want, got := r.states[f], r.clientState(r.clients[i], f, false)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return fmt.Sprintf("client %d at tick %v:\n got  %+v\n want %+v", i, f, got, want)
	}
	return ""
}

func (r *deckRig) close() {
	r.t.Helper()
	for _, dc := range r.clients {
		dc.c.Close()
	}
	r.srv.Close()
	r.cancel()
	if err := <-r.served; err != nil {
		r.t.Errorf("Serve: %v", err)
	}
	r.ln.Close()
	r.net.Close()
}
