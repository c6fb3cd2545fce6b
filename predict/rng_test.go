package predict_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// rngWorld is a world of the card game with two players who draw every
// tick, predicted by a Timeline of window 8.
type rngWorld struct {
	w   *ecs.World
	tl  *predict.Timeline
	sim func(tick.Tick)
	ps  []ecs.Entity
}

func newRNGWorld(t *testing.T, seed uint64) *rngWorld {
	t.Helper()
	w := ecs.New()
	rw := &rngWorld{w: w, tl: predict.New(w, 0, predict.Config{Window: 8})}
	for _, err := range []error{
		second(predict.Register[Wants](rw.tl)),
		second(predict.Register[Stream](rw.tl)),
		second(predict.Register[Deck](rw.tl)),
		second(predict.RegisterResource[rng.Rand](rw.tl)),
		second(predict.RegisterResource[Roll](rw.tl)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		e := w.Spawn()
		_ = ecs.StoreOf[Wants](w).Set(e, Wants{N: 1})
		_ = ecs.StoreOf[Stream](w).Set(e, Stream{R: rng.Stream(seed, uint64(i))})
		_ = ecs.StoreOf[Deck](w).Set(e, Deck{Cards: [deckSize]uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}})
		rw.ps = append(rw.ps, e)
	}
	ecs.ResourceOf[rng.Rand](w).Set(rng.NewSeed(seed))
	rw.sim = deckSim(w)
	return rw
}

// state is the world's RNG state and decks, printed.
func (rw *rngWorld) state() string {
	g, _ := ecs.ResourceOf[rng.Rand](rw.w).Get()
	s := fmt.Sprint(g, ecs.ResourceOf[Roll](rw.w).Ptr())
	for _, e := range rw.ps {
		st, _ := ecs.StoreOf[Stream](rw.w).Get(e)
		d, _ := ecs.StoreOf[Deck](rw.w).Get(e)
		s += fmt.Sprint(st, d)
	}
	return s
}

// TestRNGRestoredAfterRollback: a Timeline that rolls back every third
// step from tick 6 on (to 5 ticks before Now, re-simulating the draws) holds after every
// step exactly the RNG state, rolls and decks of one that never rolls
// back; afterwards both generators give the same next values.
func TestRNGRestoredAfterRollback(t *testing.T) {
	a, b := newRNGWorld(t, 31), newRNGWorld(t, 31)
	for f := 1; f <= 100; f++ {
		if f%3 == 0 && f > 5 {
			a.tl.Request(a.tl.Now() - 5)
		}
		a.tl.Step(a.sim)
		b.tl.Step(b.sim)
		if sa, sb := a.state(), b.state(); sa != sb {
			t.Fatalf("tick %d: after rollbacks %s, without %s", f, sa, sb)
		}
	}
	if st := a.tl.Stats(); st.Rollbacks != 32 || st.TicksResimulated != 32*5 || st.RangeFaults != 0 || b.tl.Stats().Rollbacks != 0 {
		t.Fatalf("rollbacks: %+v", st)
	}
	ga, gb := ecs.ResourceOf[rng.Rand](a.w).Ptr(), ecs.ResourceOf[rng.Rand](b.w).Ptr()
	sa, sb := &ecs.StoreOf[Stream](a.w).Ptr(a.ps[1]).R, &ecs.StoreOf[Stream](b.w).Ptr(b.ps[1]).R
	for k := range 1000 {
		if x, y := ga.Uint64(), gb.Uint64(); x != y {
			t.Fatalf("world draw %d: %x, %x", k, x, y)
		}
		if x, y := sa.IntN(52), sb.IntN(52); x != y {
			t.Fatalf("stream draw %d: %d, %d", k, x, y)
		}
	}
}

// TestSameSeedSameSequence (property): for random draw patterns (each
// player draws 0 to 3 times a tick, as the server decides, and the world's
// RNG draws as it decides), three clients on different links, predicting
// through replication, hold at every complete tick of their windows
// exactly the server's streams, decks and world RNG; from the state of the
// newest such tick, every client's copy of every stream gives the server's
// sequence.
func TestSameSeedSameSequence(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { sameSequence(t, seed) })
		})
	}
}

func sameSequence(t *testing.T, seed uint64) {
	pattern := rand.New(rand.NewPCG(seed, 7))
	r := newDeckRig(t, seed, 1+pattern.IntN(4), predict.Config{Window: 24}, 5)
	r.wants = func(tick.Tick, int) uint8 { return uint8(pattern.IntN(4)) }
	defer r.close()
	for i := range 3 {
		r.connect(transport.LinkConfig{Latency: time.Duration(10+20*i) * time.Millisecond, Jitter: 4 * time.Millisecond, Loss: 0.05 * float64(i)})
		r.run(10 + pattern.IntN(30)) // clients join at different ticks
	}
	r.run(150)
	f := r.commonTick()
	checked := 0
	for g := f - 15; !g.After(f); g++ {
		for i, dc := range r.clients {
			if !dc.c.TickComplete(g) || g.Before(dc.tl.Oldest()) {
				continue // not complete, or no longer held
			}
			if d := r.diffAt(i, g); d != "" {
				t.Fatal(d)
			}
			checked++
		}
	}
	if checked < 30 {
		t.Fatalf("only %d (client, tick) pairs checked", checked)
	}
	want := r.states[f]
	for i := range r.clients {
		got := r.clientState(r.clients[i], f, false)
		for p := range want.players {
			sw, sc := want.players[p].Stream.R, got.players[p].Stream.R
			for k := range 100 {
				if x, y := sw.Uint64(), sc.Uint64(); x != y {
					t.Fatalf("client %d, player %d, draw %d after tick %v: %x, server %x", i, p, k, f, y, x)
				}
			}
		}
	}
}
