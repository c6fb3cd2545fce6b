package predict_test

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// TestAttachSplit: the values of an entity the game interpolates go to
// the Interpolated buffer at their ticks and never into the World or the
// Timeline (no history, no misprediction, no rollback for it), its
// removal empties its buffer; a predicted entity of the same type gets
// its values through the Timeline, and its removal at tick T removes the
// component from T on, also in the history.
func TestAttachSplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
		defer net.Close()
		ln, _ := net.Listen(netip.AddrPort{})
		defer ln.Close()
		proto := func() *replicate.Protocol { p, _ := frameProtocol(t); return p }
		sw, cw := ecs.New(), ecs.New()
		srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: proto()})
		defer srv.Close()
		client, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: proto()})
		defer client.Close()
		tl := predict.New(cw, 0, predict.Config{Window: 16})
		body, _ := predict.Register[FBody](tl)
		buf := interp.NewBuffer(interp.Config{}, func(a, b FBody, f float64) FBody { return b })
		ships := ecs.Register[FShip](cw)
		if err := predict.AttachSplit(client, body, buf, func(e ecs.Entity) bool {
			s, ok := ships.Get(e)
			return ok && s.Player == 2
		}); err != nil {
			t.Fatal(err)
		}
		hooks := predict.Hooks(tl)
		hooks.TickComplete = func(t tick.Tick) { _ = tl.Complete(t); buf.Complete(t) }
		client.SetClientHooks(hooks)
		conn, _ := net.Dial(context.Background(), ln.Addr())
		sconn, _ := ln.Accept(context.Background())
		srv.AddConn(sconn)
		_ = client.Connect(conn)
		net.SetLink(conn.LocalAddr(), ln.Addr(), transport.LinkConfig{Latency: 10 * time.Millisecond})
		net.SetLink(ln.Addr(), conn.LocalAddr(), transport.LinkConfig{Latency: 10 * time.Millisecond})
		spawn := func(player uint64) ecs.Entity {
			e := sw.Spawn()
			_ = ecs.Register[replicate.Replicated](sw).Set(e, replicate.Replicated{})
			_ = ecs.StoreOf[FShip](sw).Set(e, FShip{Player: player})
			_ = ecs.StoreOf[FBody](sw).Set(e, FBody{V: int64(player)})
			return e
		}
		mine, theirs := spawn(1), spawn(2)
		sim := func(w *ecs.World) func(tick.Tick) {
			q := ecs.NewQuery1(ecs.Register[FBody](w).Write())
			return func(tick.Tick) {
				for _, b := range q.All() {
					flyBullet(b)
				}
			}
		}
		ssim, csim := sim(sw), sim(cw)
		for f := tick.Tick(1); f <= 20; f++ {
			srv.Receive()
			ssim(f)
			if f == 12 {
				_ = ecs.StoreOf[FBody](sw).Remove(mine)
				_ = ecs.StoreOf[FBody](sw).Remove(theirs)
			}
			_ = srv.SendTick(f)
			time.Sleep(time.Second / 60)
			client.Update()
			tl.Step(csim)
			if f == 11 {
				ct, _ := client.ClientEntity(theirs)
				if _, ok := body.Store().Get(ct); ok || buf.Len(ct) < 8 {
					t.Fatalf("interpolated entity: in the predicted store %v, %d values buffered", ok, buf.Len(ct))
				}
				if _, ok := body.At(ct, 9); ok {
					t.Fatal("interpolated entity has a predicted history")
				}
				if v, ok := buf.At(ct, 9, 0); !ok || v != (FBody{X: 18, V: 2}) {
					t.Fatalf("interpolated at tick 9: %v (%v), want the server's {18 2}", v, ok)
				}
			}
		}
		cm, _ := client.ClientEntity(mine)
		ct, _ := client.ClientEntity(theirs)
		if buf.Len(ct) != 0 || ecs.StoreOf[FBody](cw).Has(ct) {
			t.Fatalf("removed interpolated entity: %d values buffered", buf.Len(ct))
		}
		if v, ok := body.At(cm, 11); !ok || v != (FBody{X: 11, V: 1}) {
			t.Fatalf("predicted entity at 11: %v (%v), want {11 1}", v, ok)
		}
		if _, ok := body.At(cm, 12); ok || body.Store().Has(cm) {
			t.Fatal("predicted entity keeps its body after the removal at 12")
		}
		// The client simulates each tick after its values arrived: nothing
		// to correct, and the interpolated entity never reached the
		// Timeline.
		if st := tl.Stats(); st.Types[0].Mispredictions != 0 || st.Rollbacks != 0 || st.Refused != 0 {
			t.Fatalf("stats %+v: want no misprediction, rollback or refused value", st)
		}
	})
}

// TestAttachSplitPredictedSpawn: a predicted entity's values go through
// AttachSplit as through AttachComponent, so a predicted spawn the server
// confirms with the values the history holds (TestPredictedSpawnMatched,
// with RPos split and never interpolated) is adopted without a rollback.
func TestAttachSplitPredictedSpawn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSpawnRig(t, 30*time.Millisecond, 4)
		defer r.close()
		buf := interp.NewBuffer(interp.Config{}, func(a, b RPos, f float64) RPos { return b })
		if err := predict.AttachSplit(r.client, r.pos, buf, func(ecs.Entity) bool { return false }); err != nil {
			t.Fatal(err)
		}
		r.clientFires[12], r.serverFires[12] = true, true
		r.stepTo(40)
		r.checkBullet(r.bullets[12], r.spawned[0].e, 12)
		if st := r.tl.Stats(); st.PredictedSpawnsMatched != 1 || st.Rollbacks != 0 || st.Types[0].Mispredictions != 0 {
			t.Fatalf("matched %d, rollbacks %d, mispredictions %d; want 1, 0, 0", st.PredictedSpawnsMatched, st.Rollbacks, st.Types[0].Mispredictions)
		}
	})
}
