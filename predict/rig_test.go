package predict_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// The test rigs of package predict, in one place, simplest first:
//
//   - rig (newRig): a Timeline over a World predicting Health and Shield,
//     no network. Tests drive it by hand (Authoritative, Complete, Step):
//     every tick an entity with Health and no Shield loses 1.
//   - server: the reference server runProperty plays a client against.
//   - memServer (newMemServer): the server half of the network rigs
//     below (deckRig, wireRig and spawnRig embed it); dialMem, setLinks:
//     the in-memory message network; Move,
//     inputProtocol: the input type of the tests that send inputs.
//   - frameRig (frameServer, frameClient, connectMem): the whole frame,
//     ServerFrame and ClientFrames over the in-memory network, with ships
//     and bullets (FShip, FBody, FBullet, FInput); newFrameServerOf with
//     frameProtocolOnce replicates a bullet's FBody Once.
//   - wireRig (newWireRig): a replicate.Server and one predicting client
//     attached to it (Attach, AttachComponent), no inputs, with a record
//     of the server's state at every tick to check the client's history
//     against (RPos, RVel, RTag, RTarget); checksum_test.go's newSumRig
//     and split_checksum_test.go's newSplitSumRig build on it.
//   - spawnRig (newSpawnRig): the same for predicted spawns: bullets
//     fired from a gun with a predicted Ammo (spawn_wire_test.go).
//   - deckRig: a card game over the network, for RNG prediction across
//     disruptions (Deck, Wants, Stream).

// Health is the base rig's predicted component: it loses 1 a tick
// unless the entity has a Shield.
type Health int32

// Shield, predicted too, stops the loss of Health.
type Shield struct{ Strength int32 }

// rig is the base test rig: a Timeline over a World, no network.
type rig struct {
	t      *testing.T
	w      *ecs.World
	tl     *predict.Timeline
	health *predict.Component[Health]
	shield *predict.Component[Shield]
	hs     *ecs.Store[Health]
	q      *ecs.Query1[Health]
	// extra runs after the damage system, inside the simulation
	extra func(t tick.Tick)
}

func newRig(t *testing.T, cfg predict.Config, opts ...predict.Option) *rig {
	t.Helper()
	if cfg.Window == 0 {
		cfg.Window = 10 // timewarp's tests use 10
	}
	w := ecs.New()
	g := &rig{t: t, w: w, tl: predict.New(w, 0, cfg)}
	var err error
	if g.health, err = predict.Register[Health](g.tl, opts...); err != nil {
		t.Fatal(err)
	}
	if g.shield, err = predict.Register[Shield](g.tl); err != nil {
		t.Fatal(err)
	}
	g.hs = g.health.Store()
	g.q = ecs.NewQuery1(g.hs.Write()).Without(g.shield.Store())
	return g
}

func (g *rig) sim(t tick.Tick) {
	for _, h := range g.q.All() {
		*h--
	}
	if g.extra != nil {
		g.extra(t)
	}
}

// steps runs Steps until Now is to.
func (g *rig) stepTo(to tick.Tick) {
	for g.tl.Now().Before(to) {
		g.tl.Step(g.sim)
	}
}

// spawn spawns an entity with health h, as a change at Now.
func (g *rig) spawn(h Health) ecs.Entity {
	g.t.Helper()
	e := g.w.Spawn()
	if err := g.health.Insert(e, g.tl.Now(), h); err != nil {
		g.t.Fatal(err)
	}
	return e
}

func (g *rig) must(err error) {
	g.t.Helper()
	if err != nil {
		g.t.Fatal(err)
	}
}

// at returns e's health at tick t from the history (-1 when absent).
func (g *rig) at(e ecs.Entity, t tick.Tick) Health {
	g.t.Helper()
	if v, ok := g.health.At(e, t); ok {
		return v
	}
	return -1
}

// now returns e's current health (-1 when absent).
func (g *rig) now(e ecs.Entity) Health {
	if v, ok := g.hs.Get(e); ok {
		return v
	}
	return -1
}

func (g *rig) wantRollbacks(n uint64) {
	g.t.Helper()
	if got := g.tl.Stats().Rollbacks; got != n {
		g.t.Fatalf("rollbacks = %d, want %d", got, n)
	}
}

// dialMem dials ln on the in-memory network and gives the server's end of
// the conn to srv. The test's client connects on the returned conn (on a
// clean link: condition it after with setLinks).
func dialMem(t testing.TB, net *transport.MessageNetwork, ln *transport.MessageNetworkListener, srv *replicate.Server) *transport.MessageNetworkConn {
	t.Helper()
	conn, err := net.Dial(context.Background(), ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	sconn, err := ln.Accept(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv.AddConn(sconn)
	return conn
}

// memServer is the server half of the network rigs (deckRig, wireRig,
// spawnRig): an in-memory message network seeded for the test, its
// listener, and a replication server of world sw, whose simulation is
// ssim. Its fields are the rigs' own (embedded).
type memServer struct {
	net    *transport.MessageNetwork
	ln     *transport.MessageNetworkListener
	sw     *ecs.World
	srv    *replicate.Server
	ssim   func(tick.Tick)
	cancel context.CancelFunc // serve's accept loop, if serving
	served chan error
}

// newMemServer makes the network, the listener and the server (cfg, with
// its protocol; the World is new).
func newMemServer(t testing.TB, seed uint64, cfg replicate.ServerConfig) memServer {
	t.Helper()
	m := memServer{net: transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed}), sw: ecs.New()}
	var err error
	if m.ln, err = m.net.Listen(netip.AddrPort{}); err != nil {
		t.Fatal(err)
	}
	cfg.World = m.sw
	if m.srv, err = replicate.NewServer(cfg); err != nil {
		t.Fatal(err)
	}
	return m
}

// serve runs the server's accept loop (clients then dial the listener
// themselves) until closeServer.
func (m *memServer) serve() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.served = cancel, make(chan error, 1)
	go func() { m.served <- m.srv.Serve(ctx, m.ln) }()
}

// closeServer closes the server, ends the accept loop (checking it ended
// cleanly), then the listener and the network.
func (m *memServer) closeServer(t testing.TB) {
	t.Helper()
	m.srv.Close()
	if m.cancel != nil {
		m.cancel()
		if err := <-m.served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	m.ln.Close()
	m.net.Close()
}

// setLinks conditions both directions between a and b with link.
func setLinks(net *transport.MessageNetwork, a, b netip.AddrPort, link transport.LinkConfig) {
	net.SetLink(a, b, link)
	net.SetLink(b, a, link)
}

// Move is a game input: 3 bytes with the default encoding.
type Move struct {
	DX, DY int8
	Fire   bool
}

// moveAt is the input a test client sends for tick t.
func moveAt(t tick.Tick, player int) Move {
	return Move{DX: int8(t), DY: int8(player), Fire: t%3 == 0}
}

func inputProtocol(t testing.TB, cfg input.Config) (*replicate.Protocol, *input.Type[Move]) {
	t.Helper()
	p := replicate.NewProtocol()
	in, err := input.Register[Move](p, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, in
}

// server is an authoritative simulation of the same game plus events the
// client cannot predict (random heals, shields and removals): the source
// of the authoritative values of the property tests.
type server struct {
	g   *rig
	rnd *rand.Rand
}

func (s *server) step() {
	s.g.tl.Step(func(t tick.Tick) {
		s.g.sim(t)
		for _, e := range s.g.hs.Column().Entities {
			if s.rnd.IntN(8) == 0 {
				*s.g.hs.Ptr(e) += Health(s.rnd.IntN(5))
			}
		}
	})
	w := s.g.w
	for e := range w.Entities() {
		if s.rnd.IntN(20) == 0 {
			if s.g.shield.Store().Has(e) {
				_ = s.g.shield.Store().Remove(e)
			} else {
				_ = s.g.shield.Store().Set(e, Shield{1})
			}
		}
	}
}

const fTTL = 20

// frameProto builds the frame rig's protocol (frameProtocol or
// frameProtocolOnce), the same on server and clients.
type frameProto func(testing.TB) (*replicate.Protocol, *input.Type[FInput])

func frameProtocol(t testing.TB) (*replicate.Protocol, *input.Type[FInput]) {
	t.Helper()
	p := replicate.NewProtocol()
	for _, err := range []error{ // markers first: a spawn writes them before the body
		second(replicate.Component[FShip](p, replicate.WithOwnRule())),
		second(replicate.Component[FBullet](p, replicate.WithOwnRule())),
		second(replicate.Component[FBody](p, replicate.WithOwnRule())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return p, frameInputs(t, p)
}

// frameProtocolOnce is frameProtocol with a bullet's FBody replicated
// Once (with its spawn only; a Rule with Mode Once), as internal/shooter
// does: the client predicts its flight, and the bodies of bullets do not
// enter the checksums (replicate.ComponentSummer.Counts).
func frameProtocolOnce(t testing.TB) (*replicate.Protocol, *input.Type[FInput]) {
	t.Helper()
	p := replicate.NewProtocol()
	once := replicate.Once
	var body replicate.ComponentIndex
	var err error
	for _, err := range []error{
		second(replicate.Component[FShip](p, replicate.WithOwnRule())),
		second(replicate.Component[FBullet](p, replicate.WithOwnRule())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if body, err = replicate.Component[FBody](p); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(
		p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{body}, Filters: []replicate.Filter{replicate.With[FShip]()}}),
		p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{body}, Filters: []replicate.Filter{replicate.With[FBullet]()}, Mode: &once}),
	); err != nil {
		t.Fatal(err)
	}
	return p, frameInputs(t, p)
}

// frameInputs registers the frame rig's input type with p.
func frameInputs(t testing.TB, p *replicate.Protocol) *input.Type[FInput] {
	t.Helper()
	in, err := input.Register[FInput](p, nil, input.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// steerShip and flyBullet are the simulation, shared by server and
// clients.
func steerShip(b *FBody, in FInput) { b.V = int64(in.Dir); b.X += b.V }

func flyBullet(b *FBody) { b.X += b.V }

// frameServer is the authoritative side.
type frameServer struct {
	w       *ecs.World
	srv     *replicate.Server
	frame   *predict.ServerFrame[FInput]
	ships   []ecs.Entity
	bullets []ecs.Entity
	states  map[tick.Tick]map[ecs.Entity]FBody   // the bodies at the end of each tick
	marks   map[tick.Tick]map[ecs.Entity]FBullet // the bullets' markers at the end of each tick
	proto   frameProto                           // its protocol, which connectMem gives the clients
	// slowFrame is the ClientFrameConfig.SlowFrame connectMem gives the
	// clients (0: the default).
	slowFrame time.Duration
}

func (s *frameServer) step(t tick.Tick) error {
	return s.frame.Frame(t, func(t tick.Tick, input func(replicate.ClientID) FInput) {
		body, bullet := ecs.StoreOf[FBody](s.w), ecs.StoreOf[FBullet](s.w)
		kept := s.bullets[:0]
		for _, e := range s.bullets {
			if b, _ := bullet.Get(e); t.Sub(tick.Tick(b.Born)) >= fTTL {
				_ = s.w.Despawn(e)
				continue
			}
			flyBullet(body.Ptr(e))
			kept = append(kept, e)
		}
		s.bullets = kept
		for _, e := range s.ships {
			sh, _ := ecs.StoreOf[FShip](s.w).Get(e)
			in := input(replicate.ClientID(sh.Player))
			b := body.Ptr(e)
			steerShip(b, in)
			if in.Fire && t%4 == 0 {
				be := s.w.Spawn()
				_ = ecs.Register[replicate.Replicated](s.w).Set(be, replicate.Replicated{})
				_ = bullet.Set(be, FBullet{Born: uint32(t)})
				_ = body.Set(be, FBody{X: b.X, V: 3 * b.V})
				s.bullets = append(s.bullets, be)
			}
		}
		st := map[ecs.Entity]FBody{}
		for e, b := range body.Values() {
			st[e] = b
		}
		s.states[t] = st
		delete(s.states, t-200)
		mk := map[ecs.Entity]FBullet{}
		for e, b := range bullet.Values() {
			mk[e] = b
		}
		s.marks[t] = mk
		delete(s.marks, t-200)
	})
}

// frameClient is one predicting client.
type frameClient struct {
	idx     int
	conn    transport.MessageConn
	w       *ecs.World
	rc      *replicate.Client
	tl      *predict.Timeline
	body    *predict.Component[FBody]
	bullet  *predict.Component[FBullet] // predicted, sent once (in the spawn's update)
	frame   *predict.ClientFrame[FInput]
	sim     func(tick.Tick)
	input   func(tick.Tick) FInput
	cliEnt  map[ecs.Entity]ecs.Entity // every server entity mapped, even despawned since
	pending []tick.Tick               // complete ticks not checked yet
	checked int
	last    tick.Tick // newest tick checked
	stale   int       // complete ticks that left the window before a check
	faults  uint64    // range faults expected (a test that makes them)
	// cut: the test cuts the client off for longer than the window, so
	// range faults happen and ticks stay unconfirmed until the resync
	// (unconfirmed counts those checked, bodyDiffs their bodies that
	// differed from the server's).
	cut                    bool
	unconfirmed, bodyDiffs int
	lastUnconf             tick.Tick // newest unconfirmed tick checked
}

func newFrameClient(t testing.TB, idx int, conn transport.MessageConn, input func(tick.Tick) FInput, opts ...func(*replicate.ClientConfig)) *frameClient {
	t.Helper()
	return newFrameClientOf(t, frameProtocol, 0, idx, conn, input, opts...)
}

// newFrameClientOf is newFrameClient with the protocol proto and the
// frame's ClientFrameConfig.SlowFrame slowFrame.
func newFrameClientOf(t testing.TB, proto frameProto, slowFrame time.Duration, idx int, conn transport.MessageConn, input func(tick.Tick) FInput, opts ...func(*replicate.ClientConfig)) *frameClient {
	t.Helper()
	p, in := proto(t)
	c := &frameClient{idx: idx, conn: conn, w: ecs.New(), input: input, cliEnt: map[ecs.Entity]ecs.Entity{}}
	var err error
	ccfg := replicate.ClientConfig{World: c.w, Protocol: p}
	for _, o := range opts {
		o(&ccfg)
	}
	if c.rc, err = replicate.NewClient(ccfg); err != nil {
		t.Fatal(err)
	}
	c.tl = predict.New(c.w, 0, predict.Config{Window: 120})
	if c.body, err = predict.Register[FBody](c.tl); err != nil {
		t.Fatal(err)
	}
	if err := predict.AttachComponent(c.rc, c.body); err != nil {
		t.Fatal(err)
	}
	if c.bullet, err = predict.Register[FBullet](c.tl); err != nil {
		t.Fatal(err)
	}
	if err := predict.AttachComponent(c.rc, c.bullet); err != nil {
		t.Fatal(err)
	}
	c.frame, err = predict.NewClientFrame(c.rc, c.tl, in, predict.ClientFrameConfig{
		RTT:       func() time.Duration { return conn.Stats().RTT },
		SlowFrame: slowFrame,
		Hooks: replicate.ClientHooks{
			Spawn: func(ce ecs.Entity, _ tick.Tick) {
				se, _ := c.rc.ServerEntity(ce)
				c.cliEnt[se] = ce
			},
			TickComplete: func(t tick.Tick) { c.pending = append(c.pending, t) },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ships := ecs.NewQuery2(ecs.Register[FBody](c.w).Write(), ecs.Register[FShip](c.w).Read())
	bullets := ecs.NewQuery2(ecs.Register[FBody](c.w).Write(), ecs.Register[FBullet](c.w).Read())
	c.sim = func(t tick.Tick) {
		for _, r := range ships.All() {
			var in FInput
			if id := replicate.ClientID(r.B.Player); id == c.rc.ID() {
				in, _ = c.frame.Sender().Input(t)
			} else {
				in, _ = c.frame.Remote().Input(id, t)
			}
			steerShip(r.A, in)
		}
		for _, r := range bullets.All() {
			flyBullet(r.A)
		}
	}
	if err := c.rc.Connect(conn); err != nil {
		t.Fatal(err)
	}
	return c
}

// check compares the client's history at every complete tick received
// before its last Step (the Step applies them), older than Now, held, and
// not checked yet with the server's state at that tick. At a Confirmed
// tick: the same entities, the same bodies. At a tick a range fault left
// unconfirmed (only when the test expects range faults, cut set): the
// same entities, what predict promises until the resync (every value and
// despawn the server sent, those older than the window from the oldest
// tick held); the bodies are compared too, and a difference only counted
// (bodyDiffs). It returns the first difference.
func (c *frameClient) check(s *frameServer) error {
	if n := c.tl.Stats().RangeFaults; n != c.faults && !c.cut {
		return fmt.Errorf("client %d: %d range faults (tick %v): a value older than the window", c.idx, n, c.tl.Stats().LastRangeFault)
	}
	low := c.tl.Oldest()
	later := c.pending[:0] // the history of Now is saved by the next Step
	defer func() { c.pending = later }()
	for _, tk := range c.pending {
		if !tk.Before(c.tl.Now()) {
			later = append(later, tk)
			continue
		}
		want, ok := s.states[tk]
		if st := c.tl.Stats(); !ok || tk.Before(low) || st.Resyncs > 0 && tk.Before(st.LastResync) {
			c.stale++ // not held, or held from before a resync that replaced it
			continue
		}
		confirmed := c.tl.Confirmed(tk)
		if !confirmed && !c.cut {
			return fmt.Errorf("client %d, now %v: complete tick %v not confirmed", c.idx, c.tl.Now(), tk)
		}
		for se, b := range want {
			ce, ok := c.cliEnt[se]
			if !ok {
				return fmt.Errorf("client %d, tick %v complete: server entity %v not replicated", c.idx, tk, se)
			}
			got, ok := c.body.At(ce, tk)
			switch {
			case !ok:
				return fmt.Errorf("client %d, now %v, complete tick %v (confirmed %v), entity %v: no body, server %v", c.idx, c.tl.Now(), tk, confirmed, se, b)
			case got != b && confirmed:
				return fmt.Errorf("client %d, now %v, complete tick %v, entity %v: client %v, server %v", c.idx, c.tl.Now(), tk, se, got, b)
			case got != b:
				c.bodyDiffs++
			}
			// The marker, sent once with the spawn: held at every tick,
			// confirmed or not (a range fault applies it from the oldest
			// tick held).
			mk, isBullet := s.marks[tk][se]
			if got, ok := c.bullet.At(ce, tk); ok != isBullet || got != mk {
				return fmt.Errorf("client %d, now %v, complete tick %v (confirmed %v), entity %v: bullet %v (%v), server %v (%v)", c.idx, c.tl.Now(), tk, confirmed, se, got, ok, mk, isBullet)
			}
		}
		for se, ce := range c.cliEnt {
			if _, ok := want[se]; !ok {
				if got, ok := c.body.At(ce, tk); ok {
					return fmt.Errorf("client %d, complete tick %v (confirmed %v): entity %v absent on the server has %v", c.idx, tk, confirmed, se, got)
				}
				if got, ok := c.bullet.At(ce, tk); ok {
					return fmt.Errorf("client %d, complete tick %v (confirmed %v): entity %v absent on the server has bullet %v", c.idx, tk, confirmed, se, got)
				}
			}
		}
		if confirmed {
			c.checked++
			c.last = tk
		} else {
			c.unconfirmed++
			c.lastUnconf = tk
		}
	}
	return nil
}

// frameRig is a server and its predicting clients.
type frameRig struct {
	t       testing.TB
	server  *frameServer
	clients []*frameClient
	tick    tick.Tick
}

func newFrameServer(t testing.TB, opts ...func(*replicate.ServerConfig)) *frameServer {
	t.Helper()
	return newFrameServerOf(t, frameProtocol, opts...)
}

// newFrameServerOf is newFrameServer with the protocol proto (its
// clients' too, through connectMem).
func newFrameServerOf(t testing.TB, proto frameProto, opts ...func(*replicate.ServerConfig)) *frameServer {
	t.Helper()
	p, in := proto(t)
	s := &frameServer{w: ecs.New(), states: map[tick.Tick]map[ecs.Entity]FBody{}, marks: map[tick.Tick]map[ecs.Entity]FBullet{}, proto: proto}
	var err error
	scfg := replicate.ServerConfig{World: s.w, Protocol: p}
	for _, o := range opts {
		o(&scfg)
	}
	if s.srv, err = replicate.NewServer(scfg); err != nil {
		t.Fatal(err)
	}
	s.frame = predict.NewServerFrame(s.srv, in)
	return s
}

// addShips spawns a ship for every connected client.
func (r *frameRig) addShips() {
	for i, c := range r.clients {
		e := r.server.w.Spawn()
		_ = ecs.Register[replicate.Replicated](r.server.w).Set(e, replicate.Replicated{})
		_ = ecs.StoreOf[FShip](r.server.w).Set(e, FShip{Player: uint64(c.rc.ID())})
		_ = ecs.StoreOf[FBody](r.server.w).Set(e, FBody{X: int64(1000 * i)})
		r.server.ships = append(r.server.ships, e)
	}
}

// frame runs one server tick and one frame of every client (elapsed
// since the last), then checks every client.
func (r *frameRig) frame(elapsed time.Duration) {
	r.t.Helper()
	r.tick++
	if err := r.server.step(r.tick); err != nil {
		r.t.Fatal(err)
	}
	for _, c := range r.clients {
		held := c.frame.Stats().HeldFrames
		if c.frame.Frame(elapsed, c.input, c.sim) == 0 {
			continue // values received are applied by the next Step
		}
		if c.frame.Stats().HeldFrames != held {
			// Overloaded (a real-time test on a busy machine): the frame
			// held its rollbacks, a later Step checks what it received.
			continue
		}
		if err := c.check(r.server); err != nil {
			r.t.Fatal(err)
		}
	}
}

// randomInputs returns a client's random input function: a direction held
// for a few ticks, fire now and then.
func randomInputs(seed uint64) func(tick.Tick) FInput {
	rnd := rand.New(rand.NewPCG(seed, 99))
	var cur FInput
	return func(tick.Tick) FInput {
		if rnd.IntN(6) == 0 {
			cur = FInput{Dir: int8(rnd.IntN(7) - 3), Fire: rnd.IntN(3) == 0}
		}
		return cur
	}
}

// connectMem connects n clients to the server on a MessageNetwork with
// link on every path, with the server's protocol and slowFrame.
func connectMem(t testing.TB, net *transport.MessageNetwork, s *frameServer, n int, link transport.LinkConfig, seed uint64, opts ...func(*replicate.ClientConfig)) []*frameClient {
	t.Helper()
	ln, err := net.Listen(netip.AddrPort{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var cs []*frameClient
	for i := range n {
		conn := dialMem(t, net, ln, s.srv)
		setLinks(net, conn.LocalAddr(), ln.Addr(), link)
		c := newFrameClientOf(t, s.proto, s.slowFrame, i, conn, randomInputs(seed*100+uint64(i)), opts...)
		t.Cleanup(func() { c.rc.Close() })
		cs = append(cs, c)
	}
	return cs
}

// The card game of the RNG tests: each player has a deck (a fixed-size
// array) and a random stream of its own; a player who draws shuffles the
// deck with the stream and takes the top card. The server decides outside
// the simulation how many times each player draws in a tick (Wants, like
// an input the clients learn late, so they mispredict and roll back); the
// world's RNG (rng.Rand, a resource) rolls one to three times per tick
// (as it decides) and keeps the last roll in Roll.
const deckSize = 20

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
	t *testing.T
	memServer
	players []ecs.Entity
	clients []*deckClient
	// wants decides how often player i draws in tick F (server side).
	wants  func(f tick.Tick, i int) uint8
	states map[tick.Tick]tickState // the server's state at the end of each tick
	ccfg   replicate.ClientConfig
	pcfg   predict.Config
	lead   int
}

// newDeckRig starts a server with n players seeded from seed; the clients
// predict lead ticks ahead with the window of pcfg.
func newDeckRig(t *testing.T, seed uint64, n int, pcfg predict.Config, lead int) *deckRig {
	t.Helper()
	r := &deckRig{t: t, memServer: newMemServer(t, seed, replicate.ServerConfig{Protocol: deckProtocol(t)}), states: map[tick.Tick]tickState{}, pcfg: pcfg, lead: lead}
	r.serve()
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
	r.closeServer(r.t)
}

// The game of the frame tests: each player steers a ship (FShip marks it,
// FBody is predicted) with FInput; a player holding fire spawns a bullet
// (FBullet, FBody) every 4 ticks on the server, which flies straight and
// is despawned after fTTL ticks. Clients predict every body: their own
// ship with their inputs, the others with the forwarded ones.
type (
	FShip   struct{ Player uint64 }
	FBullet struct{ Born uint32 }
	FBody   struct{ X, V int64 }
	FInput  struct {
		Dir  int8
		Fire bool
	}
)

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
	t *testing.T
	memServer
	caddr netip.AddrPort // the client's address
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
	r := &wireRig{t: t, memServer: newMemServer(t, seed, replicate.ServerConfig{Protocol: wireProtocol(t)}), cw: ecs.New(), cliEnt: map[ecs.Entity]ecs.Entity{}, states: map[tick.Tick][]entState{}}
	var err error
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
	r.closeServer(r.t)
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

// Ammo is the client's predicted gun state: a shot needs a round.
type Ammo struct{ N int32 }

type spawnRig struct {
	t *testing.T
	memServer
	frame tick.Tick

	cw     *ecs.World
	client *replicate.Client
	tl     *predict.Timeline
	pos    *predict.Component[RPos]
	vel    *predict.Component[RVel]
	ammo   *predict.Component[Ammo]
	gun    ecs.Entity
	csim   func(tick.Tick)

	serverFires, clientFires map[tick.Tick]bool
	serverExtra, clientExtra func(f tick.Tick)        // after firing, in each simulation
	id                       replicate.ClientID       // the key's client (the client's id once connected)
	bullets                  map[tick.Tick]ecs.Entity // server bullets by spawn tick
	spawned                  []spawned                // what Timeline.Spawn returned, in order
	refused                  []refusal                // the Spawn calls refused, in order
	states                   map[tick.Tick][2][]int64 // server bullets (entity, x) at the end of each tick
}

// refusal is a Spawn refused (ErrSpawnRefused): the key's tick, the frame
// it happened in, and whether in a rollback.
type refusal struct {
	f, frame tick.Tick
	rb       bool
}

func spawnProtocol(t testing.TB) *replicate.Protocol {
	t.Helper()
	p := replicate.NewProtocol()
	for _, err := range []error{
		second(replicate.Component[RPos](p, replicate.WithOwnRule())),
		second(replicate.Component[RVel](p, replicate.WithOwnRule())),
		second(predict.RegisterSpawnKey(p)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (r *spawnRig) key(f tick.Tick) predict.SpawnKey {
	return predict.SpawnKey{Client: r.id, Tick: f, Kind: 1}
}

// newSpawnRig connects a client predicting lead ticks ahead of the server
// over links of the given latency, with a window of 30 ticks.
func newSpawnRig(t *testing.T, latency time.Duration, lead int) *spawnRig {
	t.Helper()
	return newSpawnRigLink(t, 1, transport.LinkConfig{Latency: latency}, lead, 30)
}

// newSpawnRigLink is newSpawnRig on links configured by link, with the
// network's seed and a window of window ticks.
func newSpawnRigLink(t *testing.T, seed uint64, link transport.LinkConfig, lead, window int) *spawnRig {
	t.Helper()
	r := &spawnRig{t: t, memServer: newMemServer(t, seed, replicate.ServerConfig{Protocol: spawnProtocol(t)}), cw: ecs.New(),
		serverFires: map[tick.Tick]bool{}, clientFires: map[tick.Tick]bool{},
		bullets: map[tick.Tick]ecs.Entity{}, states: map[tick.Tick][2][]int64{}}
	var err error
	move := moveQuery(r.sw)
	r.ssim = func(f tick.Tick) {
		move(f)
		if r.serverFires[f] {
			// The server fires from the client's input for f, under the
			// same key.
			e := predict.ServerSpawn(r.sw, r.key(f))
			_ = ecs.StoreOf[RPos](r.sw).Set(e, RPos{1000 + int64(f)})
			_ = ecs.StoreOf[RVel](r.sw).Set(e, RVel{2})
			r.bullets[f] = e
		}
		if r.serverExtra != nil {
			r.serverExtra(f)
		}
	}
	if r.client, err = replicate.NewClient(replicate.ClientConfig{World: r.cw, Protocol: spawnProtocol(t)}); err != nil {
		t.Fatal(err)
	}
	r.tl = predict.New(r.cw, tick.Tick(lead), predict.Config{Window: window})
	if r.pos, err = predict.Register[RPos](r.tl); err != nil {
		t.Fatal(err)
	}
	if r.vel, err = predict.Register[RVel](r.tl); err != nil {
		t.Fatal(err)
	}
	if r.ammo, err = predict.Register[Ammo](r.tl); err != nil {
		t.Fatal(err)
	}
	r.gun = r.cw.Spawn()
	_ = r.ammo.Store().Set(r.gun, Ammo{N: 1})
	predict.Attach(r.client, r.tl)
	if err := predict.AttachComponent(r.client, r.pos); err != nil {
		t.Fatal(err)
	}
	if err := predict.AttachComponent(r.client, r.vel); err != nil {
		t.Fatal(err)
	}
	cmove := moveQuery(r.cw)
	r.csim = func(f tick.Tick) {
		cmove(f)
		if r.clientExtra != nil {
			r.clientExtra(f)
		}
		a, _ := r.ammo.Store().Get(r.gun)
		if !r.clientFires[f] || a.N == 0 {
			return
		}
		e, err := r.tl.Spawn(r.key(f))
		if errors.Is(err, predict.ErrSpawnRefused) {
			// The server did not fire: neither does the client, its round
			// is not spent.
			r.refused = append(r.refused, refusal{f: f, frame: r.frame, rb: r.tl.InRollback()})
			return
		}
		if err != nil {
			r.t.Fatal(err)
		}
		_ = r.ammo.Store().Set(r.gun, Ammo{N: a.N - 1})
		_ = r.pos.Store().Set(e, RPos{1000 + int64(f)})
		_ = r.vel.Store().Set(e, RVel{2})
		r.spawned = append(r.spawned, spawned{e, r.tl.InRollback()})
	}
	conn := dialMem(t, r.net, r.ln, r.srv)
	if err := r.client.Connect(conn); err != nil {
		t.Fatal(err)
	}
	setLinks(r.net, conn.LocalAddr(), r.ln.Addr(), link)
	return r
}

func (r *spawnRig) close() {
	r.client.Close()
	r.closeServer(r.t)
}

// step runs one server frame and one client frame, then lets one tick of
// virtual time pass.
func (r *spawnRig) step() {
	r.t.Helper()
	r.frame++
	r.srv.Receive()
	r.ssim(r.frame)
	var s [2][]int64
	for e, p := range ecs.NewQuery1(ecs.StoreOf[RPos](r.sw).Read()).All() {
		s[0] = append(s[0], int64(e))
		s[1] = append(s[1], p.X)
	}
	r.states[r.frame] = s
	if err := r.srv.SendTick(r.frame); err != nil {
		r.t.Fatal(err)
	}
	r.client.Update()
	if r.id == 0 {
		r.id = r.client.ID()
	}
	r.tl.Step(r.csim)
	time.Sleep(wireTick)
}

func (r *spawnRig) stepTo(f tick.Tick) {
	for r.frame < f {
		r.step()
	}
}

// bulletsOnClient returns the client entities with a SpawnKey.
func (r *spawnRig) bulletsOnClient() []ecs.Entity {
	s := ecs.StoreOf[predict.SpawnKey](r.cw)
	return append([]ecs.Entity(nil), s.Column().Entities...)
}

// checkBullet verifies that server bullet se is client entity ce, alive and
// mapped, and that the client's history at every complete tick from the
// spawn on holds the server's position, and its value at Now the
// server's, extrapolated.
func (r *spawnRig) checkBullet(se, ce ecs.Entity, f tick.Tick) {
	r.t.Helper()
	if got, ok := r.client.ClientEntity(se); !ok || got != ce || !r.cw.Alive(ce) {
		r.t.Fatalf("server bullet %v is client %v (%v, alive %v), want %v", se, got, ok, r.cw.Alive(got), ce)
	}
	if back, _ := r.client.ServerEntity(ce); back != se {
		r.t.Fatalf("client bullet %v replicates %v, want %v", ce, back, se)
	}
	checked := 0
	for tk := r.tl.Now().Add(-int32(r.tl.Window())); tk.Before(r.tl.Now()); tk++ {
		if !r.client.TickComplete(tk) {
			continue
		}
		p, ok := r.pos.At(ce, tk)
		if tk.Before(f) {
			if ok {
				r.t.Fatalf("bullet of tick %v has %v at %v", f, p, tk)
			}
			continue
		}
		s := r.states[tk]
		want := int64(-1)
		for i, e := range s[0] {
			if ecs.Entity(e) == se {
				want = s[1][i]
			}
		}
		if !ok || p.X != want {
			r.t.Fatalf("bullet at complete tick %v: %v (%v), server %v", tk, p, ok, want)
		}
		checked++
	}
	if checked < 5 {
		r.t.Fatalf("%d complete ticks compared, want at least 5", checked)
	}
	sp, _ := ecs.StoreOf[RPos](r.sw).Get(se)
	cp, _ := r.pos.Store().Get(ce)
	if cp.X != sp.X+2*int64(r.tl.Now().Sub(r.frame)) {
		r.t.Fatalf("bullet at %v: %v, server %v at %v", r.tl.Now(), cp, sp, r.frame)
	}
}
