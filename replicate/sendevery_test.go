package replicate_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Mood is slow, cosmetic data: its changes go out every 10th tick.
type Mood struct{ Level int32 }

// TestSendEvery: a component registered WithSendEvery(10) changes every
// tick on 20 entities, beside Position changing every tick too. The
// client gets Position's values every tick and Mood's only at multiples
// of 10 (the value of that tick); checksums (which leave Mood out) find
// no desync; a spawn carries Mood's value at once; once the changes stop
// the client holds exactly the server's state.
func TestSendEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := replicate.NewProtocol()
		for _, err := range []error{
			second(replicate.Component[Position](p, replicate.WithOwnRule())),
			second(replicate.Component[Mood](p, replicate.WithOwnRule(), replicate.WithSendEvery(10))),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		r := newMemRigProto(t, transport.MessageNetworkConfig{Seed: 8}, replicate.ServerConfig{ChecksumInterval: desyncInterval}, testProto{p: p})
		defer r.close()
		r.ccfg.ChecksumInterval = desyncInterval
		mood := ecs.Register[Mood](r.sw)
		pos := ecs.StoreOf[Position](r.sw)
		var ents []ecs.Entity
		for i := range 20 {
			e := r.sw.Spawn()
			_ = ecs.Register[replicate.Replicated](r.sw).Set(e, replicate.Replicated{})
			_ = pos.Set(e, Position{X: float64(i)})
			_ = mood.Set(e, Mood{})
			ents = append(ents, e)
		}
		r.connect(1, transport.LinkConfig{Latency: 10 * time.Millisecond})
		c := r.clients[0]
		var moodTicks, posTicks []tick.Tick
		var moodLevels []int32
		if err := replicate.SetHooks(c, replicate.ComponentHooks[Mood]{Value: func(e ecs.Entity, t tick.Tick, v Mood, kind replicate.ValueKind) bool {
			if kind == replicate.ValueAuthoritative {
				moodTicks = append(moodTicks, t)
				moodLevels = append(moodLevels, v.Level)
			}
			return false
		}}); err != nil {
			t.Fatal(err)
		}
		if err := replicate.SetHooks(c, replicate.ComponentHooks[Position]{Value: func(e ecs.Entity, t tick.Tick, _ Position, kind replicate.ValueKind) bool {
			if kind == replicate.ValueAuthoritative {
				posTicks = append(posTicks, t)
			}
			return false
		}}); err != nil {
			t.Fatal(err)
		}
		var late ecs.Entity
		for k := range 200 {
			tk := r.srv.Tick() + 1 // the tick this step sends
			for _, e := range ents {
				pos.Ptr(e).Y++
				mood.Ptr(e).Level = int32(tk)
			}
			if k == 101 {
				late = r.sw.Spawn()
				_ = ecs.Register[replicate.Replicated](r.sw).Set(late, replicate.Replicated{})
				_ = pos.Set(late, Position{})
				_ = mood.Set(late, Mood{Level: 77})
			}
			r.step()
			for _, ev := range r.srv.Events() {
				if ev.Kind == replicate.ClientDesync {
					t.Fatalf("desync: %v", ev.Reason)
				}
			}
		}
		for i, tk := range moodTicks {
			if uint32(tk)%10 != 0 {
				t.Fatalf("a Mood value of tick %d (not a multiple of 10)", tk)
			}
			// While Mood changes every tick, the value sent is the tick's.
			if tk.AtOrBefore(r.srv.Tick()) && int32(tk) != moodLevels[i] && moodLevels[i] != 77 {
				t.Fatalf("the Mood value sent at tick %d is of tick %d", tk, moodLevels[i])
			}
		}
		if len(moodTicks) < 19*20 || len(posTicks) < 190*20 {
			t.Fatalf("%d Mood values, %d Position values in 200 ticks for 20 entities", len(moodTicks), len(posTicks))
		}
		if ce, ok := c.ClientEntity(late); !ok {
			t.Fatal("the late spawn did not arrive")
		} else if _, ok := ecs.StoreOf[Mood](r.cws[0]).Get(ce); !ok {
			t.Fatal("the spawn did not carry Mood")
		}
		st, _ := r.srv.Stats(c.ID())
		if st.ChecksumsChecked == 0 || st.Desyncs != 0 {
			t.Fatalf("%d checksums checked, %d desyncs", st.ChecksumsChecked, st.Desyncs)
		}
		for range 30 {
			r.step()
		}
		cm, cp := ecs.StoreOf[Mood](r.cws[0]), ecs.StoreOf[Position](r.cws[0])
		for _, e := range append(ents, late) {
			ce, _ := c.ClientEntity(e)
			gm, _ := cm.Get(ce)
			gp, _ := cp.Get(ce)
			wm, _ := mood.Get(e)
			wp, _ := pos.Get(e)
			if gm != wm || gp != wp {
				t.Fatalf("after the changes stopped: client %+v %+v, server %+v %+v", gm, gp, wm, wp)
			}
		}
		t.Logf("%d Mood values (every 10th tick), %d Position values", len(moodTicks), len(posTicks))
	})
}
