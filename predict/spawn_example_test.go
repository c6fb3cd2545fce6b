package predict_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// A predicted bullet: the client, 3 ticks ahead, fires at tick 4 and sees
// its bullet at once; the server fires at tick 4 from the same input,
// under the same SpawnKey; when the server's spawn arrives, replication
// adopts the client's bullet instead of spawning a second one. Both run
// the same simulation (bullets move by their velocity).
func ExampleTimeline_Spawn() {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	defer network.Close()
	ln, _ := network.Listen(netip.AddrPort{})
	newProtocol := func() *replicate.Protocol {
		p := replicate.NewProtocol()
		_, _ = replicate.Component[RPos](p, replicate.WithOwnRule())
		_, _ = replicate.Component[RVel](p, replicate.WithOwnRule())
		_, _ = predict.RegisterSpawnKey(p) // the key travels with the spawn
		return p
	}
	move := func(w *ecs.World) {
		q := ecs.NewQuery2(ecs.Register[RPos](w).Write(), ecs.Register[RVel](w).Read())
		for _, r := range q.All() {
			r.A.X += r.B.X
		}
	}
	const fireTick = 4

	sw := ecs.New()
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: newProtocol()})
	defer srv.Close()
	cw := ecs.New()
	client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProtocol()})
	defer client.Close()
	tl := predict.New(cw, 0, predict.Config{Window: 16})
	pos, _ := predict.Register[RPos](tl)
	vel, _ := predict.Register[RVel](tl)
	predict.Attach(client, tl) // with SpawnKey registered: adoption too
	_ = predict.AttachComponent(client, pos)
	_ = predict.AttachComponent(client, vel)

	conn, _ := network.Dial(ctx, ln.Addr())
	sconn, _ := ln.Accept(ctx)
	srv.AddConn(sconn)
	_ = client.Connect(conn)
	_ = sconn.WaitReceive(ctx) // the hello
	srv.Receive()
	_ = conn.WaitReceive(ctx) // the welcome: the client knows its id
	client.Update()
	id := client.ID()

	// The client's simulation: move, and fire at fireTick.
	var predicted ecs.Entity
	clientSim := func(t tick.Tick) {
		move(cw)
		if t == fireTick {
			e, err := tl.Spawn(predict.SpawnKey{Client: id, Tick: t, Kind: 1})
			if err != nil {
				panic(err)
			}
			_ = pos.Store().Set(e, RPos{X: 100})
			_ = vel.Store().Set(e, RVel{X: 2})
			predicted = e
		}
	}
	for range 3 {
		tl.Step(clientSim) // the client runs 3 ticks ahead
	}

	var bullet ecs.Entity
	for f := tick.Tick(1); f <= 8; f++ {
		srv.Receive()
		move(sw)
		if f == fireTick { // the server fires from the client's input for f
			bullet = predict.ServerSpawn(sw, predict.SpawnKey{Client: id, Tick: f, Kind: 1})
			_ = ecs.StoreOf[RPos](sw).Set(bullet, RPos{X: 100})
			_ = ecs.StoreOf[RVel](sw).Set(bullet, RVel{X: 2})
		}
		_ = srv.SendTick(f)
		for !client.TickComplete(f) {
			_ = conn.WaitReceive(ctx)
			client.Update()
		}
		tl.Step(clientSim)
	}
	ce, _ := client.ClientEntity(bullet)
	sx, _ := ecs.StoreOf[RPos](sw).Get(bullet)
	cx, _ := pos.Store().Get(ce)
	st := tl.Stats()
	fmt.Println("bullets on the client:", ecs.StoreOf[predict.SpawnKey](cw).Len())
	fmt.Println("server bullet is the predicted one:", ce == predicted)
	fmt.Println("server tick", srv.Tick(), "x", sx.X, "- client tick", tl.Now(), "x", cx.X)
	fmt.Println("matched", st.PredictedSpawnsMatched, "dropped", st.PredictedSpawnsDropped)
	// Output:
	// bullets on the client: 1
	// server bullet is the predicted one: true
	// server tick 8 x 108 - client tick 11 x 114
	// matched 1 dropped 0
}

// A predicted bullet the server did not fire: server tick 2 completes
// (replicate's TickComplete, through Attach) without the server's spawn
// of the key, so the next Step despawns the bullet and rolls back to
// tick 1; re-simulating tick 2, Spawn returns ErrSpawnRefused and the
// simulation does not fire.
func ExampleTimeline_Spawn_refused() {
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 8})
	pos, _ := predict.Register[RPos](tl)
	key := predict.SpawnKey{Client: 1, Tick: 2, Kind: 1}
	var bullet ecs.Entity
	sim := func(t tick.Tick) {
		if t != key.Tick {
			return
		}
		e, err := tl.Spawn(key)
		if errors.Is(err, predict.ErrSpawnRefused) {
			fmt.Println("tick", t, "re-simulated: not fired")
			return
		}
		_ = pos.Store().Set(e, RPos{X: 100})
		bullet = e
		fmt.Println("tick", t, "fired")
	}
	for range 4 {
		tl.Step(sim)
	}
	_ = tl.Complete(2) // no server spawn of the key came with tick 2
	tl.Step(sim)
	st := tl.Stats()
	fmt.Println("bullet alive:", w.Alive(bullet), "- refused", st.PredictedSpawnsRefused, "dropped", st.PredictedSpawnsDropped, "rollbacks", st.Rollbacks)
	// Output:
	// tick 2 fired
	// tick 2 re-simulated: not fired
	// bullet alive: false - refused 1 dropped 1 rollbacks 1
}
