package predict_test

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// remoteRun is the outcome of runRemotePrediction.
type remoteRun struct {
	compared, exact int         // ticks of the remote player compared, and equal
	mispredicted    uint64      // RPos mispredictions after the warm-up
	rollbacks       uint64      // client B's rollbacks after the warm-up
	early           int         // ticks B simulated with A's real input
	first           tick.Tick   // first tick compared
	diff            []tick.Tick // ticks where B's prediction differed
	server, client  map[tick.Tick]RPos
}

// runRemotePrediction: a server and two clients on the in-memory network
// (virtual time, 20 ms each way). Each player has an entity that the
// shared simulation moves by the player's input: RPos.X += DX. Client A
// sends its input for tick f+leadA; client B runs leadB ticks ahead and
// predicts both entities through a Timeline, its own with its own inputs,
// A's with input.Remote.Input (A's real input if it arrived, the last
// known otherwise). It records B's position of A's entity at the moment B
// first simulates each tick, and the server's at that tick.
func runRemotePrediction(t *testing.T, leadA, leadB, ticks int) remoteRun {
	const latency = 20 * time.Millisecond
	net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 7})
	defer net.Close()
	ln, err := net.Listen(netip.AddrPort{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sw := ecs.New()
	sp, sin := inputProtocol(t, input.Config{})
	for _, err := range []error{
		second(replicate.Component[RPos](sp, replicate.WithOwnRule())),
		second(replicate.Component[RTag](sp, replicate.WithOwnRule())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: sp})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	buf := sin.NewBuffer()

	type side struct {
		c      *replicate.Client
		w      *ecs.World
		sender *input.Sender[Move]
		remote *input.Remote[Move]
	}
	var cl [2]side
	var frame tick.Tick
	serverFrame := func(sim func(f tick.Tick)) {
		frame++
		srv.Receive()
		buf.Receive(srv)
		if sim != nil {
			sim(frame)
		}
		if err := buf.Forward(srv); err != nil {
			t.Fatal(err)
		}
		if err := srv.SendTick(frame); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cl {
		cp, cin := inputProtocol(t, input.Config{})
		for _, err := range []error{
			second(replicate.Component[RPos](cp, replicate.WithOwnRule())),
			second(replicate.Component[RTag](cp, replicate.WithOwnRule())),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		w := ecs.New()
		c, err := replicate.NewClient(replicate.ClientConfig{World: w, Protocol: cp})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conn := dialMem(t, net, ln, srv)
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		link := transport.LinkConfig{Latency: latency}
		setLinks(net, conn.LocalAddr(), ln.Addr(), link)
		cl[i] = side{c: c, w: w, sender: cin.NewSender(), remote: cin.NewRemote()}
	}
	for range 20 {
		serverFrame(nil)
		for _, s := range cl {
			s.c.Update()
		}
		time.Sleep(wireTick)
	}
	a, b := cl[0], cl[1]
	if a.c.State() != replicate.Connected || b.c.State() != replicate.Connected {
		t.Fatalf("clients not connected: %v, %v", a.c.Err(), b.c.Err())
	}
	// One entity per player, tagged with the player's id.
	ents := map[replicate.ClientID]ecs.Entity{}
	for _, s := range cl {
		e := sw.Spawn()
		_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
		_ = ecs.Register[RPos](sw).Set(e, RPos{})
		_ = ecs.Register[RTag](sw).Set(e, RTag{int32(s.c.ID())})
		ents[s.c.ID()] = e
	}
	ssim := func(f tick.Tick) {
		for _, s := range cl {
			v, _ := buf.Input(s.c.ID(), f)
			ecs.StoreOf[RPos](sw).Ptr(ents[s.c.ID()]).X += int64(v.DX)
		}
	}

	// Client B predicts both entities.
	tl := predict.New(b.w, frame.Add(int32(leadB)), predict.Config{Window: 30})
	pos, err := predict.Register[RPos](tl)
	if err != nil {
		t.Fatal(err)
	}
	predict.Attach(b.c, tl)
	if err := predict.AttachComponent(b.c, pos); err != nil {
		t.Fatal(err)
	}
	run := remoteRun{server: map[tick.Tick]RPos{}, client: map[tick.Tick]RPos{}}
	tags := ecs.NewQuery2(ecs.Register[RPos](b.w).Write(), ecs.Register[RTag](b.w).Read())
	csim := func(f tick.Tick) {
		for _, r := range tags.All() {
			var v Move
			if id := replicate.ClientID(r.B.ID); id == b.c.ID() {
				v, _ = b.sender.Input(f)
			} else {
				var real bool
				v, real = b.remote.Input(id, f)
				if real && !tl.InRollback() {
					run.early++
				}
			}
			r.A.X += int64(v.DX)
		}
	}
	aID := a.c.ID()
	var base predict.Stats
	for k := range ticks {
		serverFrame(func(f tick.Tick) {
			ssim(f)
			run.server[f] = *ecs.StoreOf[RPos](sw).Ptr(ents[aID])
		})
		a.c.Update()
		in := frame.Add(int32(leadA))
		if err := a.sender.Add(a.c, in, moveAt(in, 0)); err != nil {
			t.Fatal(err)
		}
		b.c.Update()
		b.remote.Receive(b.c)
		f := tl.Now() + 1
		if err := b.sender.Add(b.c, f, moveAt(f, 1)); err != nil {
			t.Fatal(err)
		}
		tl.Step(csim)
		if k == ticks/4 {
			base, run.first, run.early = tl.Stats(), tl.Now()+1, 0
		}
		if k > ticks/4 {
			if ce, ok := b.c.ClientEntity(ents[aID]); ok {
				if p := ecs.StoreOf[RPos](b.w).Ptr(ce); p != nil {
					run.client[tl.Now()] = *p
				}
			}
		}
		time.Sleep(wireTick)
	}
	st := tl.Stats()
	run.rollbacks = st.Rollbacks - base.Rollbacks
	run.mispredicted = st.Types[0].Mispredictions - base.Types[0].Mispredictions
	for f, p := range run.client {
		if want, ok := run.server[f]; ok {
			run.compared++
			if p == want {
				run.exact++
			} else {
				run.diff = append(run.diff, f)
			}
		}
	}
	return run
}

// TestRemoteInputsMakePredictionExact: when a remote player's inputs reach
// the client before it simulates their ticks (here player A sends each
// input 12 ticks ahead while client B runs 4 ahead, 20 ms each way), B
// predicts A's entity with A's real inputs: its position at every tick as
// B first simulates it equals the server's exactly, and no rollback is
// needed. The control: when A's inputs arrive too late (A runs 4 ahead
// too), B predicts A by repeating A's last input, and mispredicts.
func TestRemoteInputsMakePredictionExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runRemotePrediction(t, 12, 4, 200)
		if r.compared < 100 || r.exact != r.compared {
			t.Fatalf("B's prediction of A equals the server's at %d of %d ticks (first differing: %v)", r.exact, r.compared, r.diff)
		}
		if r.early < r.compared {
			t.Fatalf("A's real input was there for %d of %d ticks B simulated", r.early, r.compared)
		}
		if r.rollbacks != 0 || r.mispredicted != 0 {
			t.Fatalf("%d rollbacks, %d mispredictions with A's inputs early", r.rollbacks, r.mispredicted)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := runRemotePrediction(t, 4, 4, 200)
		if r.early != 0 || r.exact == r.compared || r.mispredicted == 0 || r.rollbacks == 0 {
			t.Fatalf("late inputs: %d early, %d of %d exact, %d mispredictions, %d rollbacks; want a mispredicting control",
				r.early, r.exact, r.compared, r.mispredicted, r.rollbacks)
		}
	})
}
