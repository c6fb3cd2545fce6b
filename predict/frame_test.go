package predict_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

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

const fTTL = 20

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
	in, err := input.Register[FInput](p, nil, input.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return p, in
}

// steerShip and flyBullet are the simulation, shared by server and
// clients.
func steerShip(b *FBody, in FInput) { b.V = int64(in.Dir); b.X += b.V }
func flyBullet(b *FBody)            { b.X += b.V }

// frameServer is the authoritative side.
type frameServer struct {
	w       *ecs.World
	srv     *replicate.Server
	frame   *predict.ServerFrame[FInput]
	ships   []ecs.Entity
	bullets []ecs.Entity
	states  map[tick.Tick]map[ecs.Entity]FBody   // the bodies at the end of each tick
	marks   map[tick.Tick]map[ecs.Entity]FBullet // the bullets' markers at the end of each tick
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
	p, in := frameProtocol(t)
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
		RTT: func() time.Duration { return conn.Stats().RTT },
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
	p, in := frameProtocol(t)
	s := &frameServer{w: ecs.New(), states: map[tick.Tick]map[ecs.Entity]FBody{}, marks: map[tick.Tick]map[ecs.Entity]FBullet{}}
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
// link on every path.
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
		c := newFrameClient(t, i, conn, randomInputs(seed*100+uint64(i)), opts...)
		t.Cleanup(func() { c.rc.Close() })
		cs = append(cs, c)
	}
	return cs
}
