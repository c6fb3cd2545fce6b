package predict_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// A server and a predicting client running the whole frame: the server's
// ServerFrame simulates each tick with the client's buffered input; the
// client's ClientFrame keeps it ahead (tick sync), sends its input for
// each tick it simulates, and predicts its ship on a Timeline. The ship's
// velocity is the input's direction. A game calls Frame once per rendered
// frame with the time elapsed; this example waits for each server tick to
// reach the client instead of sleeping, and passes one tick of time.
func ExampleClientFrame() {
	ctx := context.Background()
	const step = time.Second / 60
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	newProtocol := func() (*replicate.Protocol, *input.Type[FInput]) {
		p := replicate.NewProtocol()
		_, _ = replicate.Component[FShip](p, replicate.WithOwnRule())
		_, _ = replicate.Component[FBody](p, replicate.WithOwnRule())
		in, _ := input.Register[FInput](p, nil, input.Config{})
		return p, in
	}

	// Server: its World, replication, and the frame with the inputs.
	sw := ecs.New()
	sp, sin := newProtocol()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: sp})
	defer srv.Close()
	sframe := predict.NewServerFrame(srv, sin)

	// Client: a Timeline predicting FBody, and the frame.
	cw := ecs.New()
	cp, cin := newProtocol()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: cp})
	defer client.Close()
	tl := predict.New(cw, 0, predict.Config{Window: 32})
	body, _ := predict.Register[FBody](tl)
	_ = predict.AttachComponent(client, body)
	conn, _ := network.Dial(ctx, ln.Addr())
	cframe, _ := predict.NewClientFrame(client, tl, cin, predict.ClientFrameConfig{
		RTT: func() time.Duration { return conn.Stats().RTT },
	})
	ships := ecs.NewQuery1(ecs.Register[FBody](cw).Write())
	sim := func(t tick.Tick) { // the client's simulation: its own ship
		in, _ := cframe.Sender().Input(t)
		for _, b := range ships.All() {
			steerShip(b, in)
		}
	}
	input := func(t tick.Tick) FInput { // the player's input for tick t
		if t < 10 {
			return FInput{Dir: 1}
		}
		return FInput{Dir: 2}
	}

	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	for client.State() != replicate.Connected {
		srv.Receive()
		_ = conn.WaitReceive(ctx)
		client.Update()
	}
	ship := sw.Spawn()
	_ = ecs.Register[replicate.Replicated](sw).Set(ship, replicate.Replicated{})
	_ = ecs.StoreOf[FShip](sw).Set(ship, FShip{Player: uint64(client.ID())})
	_ = ecs.StoreOf[FBody](sw).Set(ship, FBody{})

	for f := tick.Tick(1); f <= 30; f++ {
		_ = sframe.Frame(f, func(t tick.Tick, input func(replicate.ClientID) FInput) {
			steerShip(ecs.StoreOf[FBody](sw).Ptr(ship), input(client.ID()))
		})
		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		cframe.Frame(step, input, sim)
	}
	sb, _ := ecs.StoreOf[FBody](sw).Get(ship)
	ce, _ := client.ClientEntity(ship)
	cb, _ := body.Store().Get(ce)
	fmt.Println("server tick", srv.Tick(), "x", sb.X)
	fmt.Println("client tick", tl.Now(), "x", cb.X, "ahead", cframe.Ahead())
	in := sframe.Buffer().Stats(client.ID())
	fmt.Println("inputs received", in.Received, "missing", in.Missing)
	// Output:
	// server tick 30 x 50
	// client tick 34 x 58 ahead 4
	// inputs received 33 missing 1
}

// The per-entity choice: the client predicts its own ship and shows the
// other player's interpolated. AttachSplit sends the other ship's values
// to an Interpolated buffer (never to the World or the Timeline); the own
// ship's go to the Timeline as with AttachComponent.
func ExampleAttachSplit() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	newProtocol := func() *replicate.Protocol {
		p := replicate.NewProtocol()
		_, _ = replicate.Component[FShip](p, replicate.WithOwnRule()) // first: a spawn writes it before FBody
		_, _ = replicate.Component[FBody](p, replicate.WithOwnRule())
		return p
	}
	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newProtocol()})
	defer srv.Close()
	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProtocol()})
	defer client.Close()
	tl := predict.New(cw, 0, predict.Config{Window: 16})
	body, _ := predict.Register[FBody](tl)
	others := interp.NewBuffer(interp.Config{}, func(a, b FBody, f float64) FBody {
		return FBody{X: a.X + int64(f*float64(b.X-a.X)), V: b.V}
	})
	shipOf := ecs.Register[FShip](cw)
	_ = predict.AttachSplit(client, body, others, func(e ecs.Entity) bool {
		s, ok := shipOf.Get(e)
		return ok && replicate.ClientID(s.Player) != client.ID()
	})
	hooks := predict.Hooks(tl)
	hooks.TickComplete = func(t tick.Tick) { _ = tl.Complete(t); others.Complete(t) }
	client.SetClientHooks(hooks)

	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	for client.State() != replicate.Connected {
		srv.Receive()
		_ = conn.WaitReceive(ctx)
		client.Update()
	}
	spawn := func(player uint64, v int64) ecs.Entity {
		e := sw.Spawn()
		_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
		_ = ecs.StoreOf[FShip](sw).Set(e, FShip{Player: player})
		_ = ecs.StoreOf[FBody](sw).Set(e, FBody{V: v})
		return e
	}
	mine, theirs := spawn(uint64(client.ID()), 1), spawn(99, 10)
	move := func(w *ecs.World) func(tick.Tick) {
		q := ecs.NewQuery1(ecs.Register[FBody](w).Write())
		return func(tick.Tick) {
			for _, b := range q.All() {
				flyBullet(b)
			}
		}
	}
	ssim, csim := move(sw), move(cw)
	for f := tick.Tick(1); f <= 6; f++ {
		srv.Receive()
		ssim(f)
		_ = srv.SendTick(f)
		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		tl.Step(csim)
	}
	cm, _ := client.ClientEntity(mine)
	ct, _ := client.ClientEntity(theirs)
	p, _ := body.Store().Get(cm)
	_, inWorld := body.Store().Get(ct)
	v, _ := others.At(ct, 4, 0.5)
	fmt.Println("own ship predicted at tick", tl.Now(), "x", p.X)
	fmt.Println("other ship in the predicted store:", inWorld)
	fmt.Println("other ship shown at tick 4.5: x", v.X)
	// Output:
	// own ship predicted at tick 6 x 6
	// other ship in the predicted store: false
	// other ship shown at tick 4.5: x 45
}
