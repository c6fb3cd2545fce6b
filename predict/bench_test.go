package predict_test

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

type bpos struct{ X, Y, Z float64 }
type bvel struct{ X, Y, Z float64 }
type bhp struct{ HP int32 }

// benchWorld is n entities with a position, a velocity and health, and the
// systems of one tick: movement and decay.
type benchWorld struct {
	w    *ecs.World
	move *ecs.Query2[bpos, bvel]
	hp   *ecs.Query1[bhp]
	e0   ecs.Entity
}

func newBenchWorld(n int) *benchWorld {
	w := ecs.New()
	pos, vel, hp := ecs.Register[bpos](w), ecs.Register[bvel](w), ecs.Register[bhp](w)
	b := &benchWorld{w: w, move: ecs.NewQuery2(pos.Write(), vel.Read()), hp: ecs.NewQuery1(hp.Write())}
	for i := range n {
		e := w.Spawn()
		if i == 0 {
			b.e0 = e
		}
		_ = pos.Set(e, bpos{X: float64(i)})
		_ = vel.Set(e, bvel{X: 1, Y: 2, Z: 3})
		_ = hp.Set(e, bhp{HP: 1 << 20})
	}
	return b
}

func (b *benchWorld) sim(tick.Tick) {
	for _, r := range b.move.All() {
		r.A.X += r.B.X
		r.A.Y += r.B.Y
		r.A.Z += r.B.Z
	}
	for _, h := range b.hp.All() {
		h.HP--
	}
}

// BenchmarkPredictRollback measures one Step that rolls back 8 ticks
// (restore, 8 re-simulated ticks each saved, then the current tick: 9
// simulated ticks) beside simonly, the same 9 ticks simulated without
// prediction, and floor, simonly plus the raw memory work a rollback
// cannot avoid (benchRollbackFloor). Each Step receives the server's position of one entity 8
// ticks back, off by one unit from the prediction: a real misprediction,
// so the re-simulation changes that entity's history at every tick after
// it. historyB is the memory of the history (window 30), and
// historyB/(W+1)copies its ratio to W+1 copies of the predicted
// components.
func BenchmarkPredictRollback(b *testing.B) {
	const ticks = 8
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("ticks=%d/entities=%d/simonly", ticks, n), func(b *testing.B) {
			bw := newBenchWorld(n)
			b.ReportAllocs()
			for b.Loop() {
				for t := range ticks + 1 {
					bw.sim(tick.Tick(t))
				}
			}
		})
		b.Run(fmt.Sprintf("ticks=%d/entities=%d/floor", ticks, n), func(b *testing.B) {
			benchRollbackFloor(b, newBenchWorld(n), ticks, predict.DefaultWindow+1)
		})
		b.Run(fmt.Sprintf("ticks=%d/entities=%d", ticks, n), func(b *testing.B) {
			bw := newBenchWorld(n)
			tl := predict.New(bw.w, 0, predict.Config{})
			pos, _ := predict.Register[bpos](tl)
			_, _ = predict.Register[bvel](tl)
			_, _ = predict.Register[bhp](tl)
			for range 40 { // fill the window
				tl.Step(bw.sim)
			}
			step := func() {
				at := tl.Now() - ticks
				v, _ := pos.At(bw.e0, at)
				v.X++ // mispredicted
				_ = pos.Authoritative(bw.e0, at, v)
				_ = tl.Complete(at)
				tl.Step(bw.sim)
			}
			step()
			b.ReportAllocs()
			before := tl.Stats()
			for b.Loop() {
				step()
			}
			st := tl.Stats()
			if st.Rollbacks-before.Rollbacks != uint64(b.N) || st.TicksResimulated-before.TicksResimulated != uint64(ticks*b.N) {
				b.Fatalf("%d rollbacks, %d ticks re-simulated for %d steps", st.Rollbacks-before.Rollbacks, st.TicksResimulated-before.TicksResimulated, b.N)
			}
			b.ReportMetric(float64(st.HistoryBytes), "historyB")
			b.ReportMetric(float64(st.HistoryBytes)/float64((tl.Window()+1)*n*(24+24+4)), "historyB/(W+1)copies")
		})
	}
}

// benchRollbackFloor is the floor of a rollback of ticks ticks: the same
// simulation as simonly plus the bytes a rollback must move, as raw
// memory operations on a ring of frames of the written components
// (position and health; velocity is never written, so its history is
// shared): restore (copy tick T's frame into the World's arrays), then
// after each re-simulated tick T+1 .. Now-1 compare its frame with the
// World in 4 KiB blocks (rewriting none: the re-simulation mostly repeats
// the prediction), and after tick Now copy the World into Now's frame (it
// was not saved before), then simulate the next tick. No entity layouts,
// change stamps, authoritative values or bookkeeping.
func benchRollbackFloor(b *testing.B, bw *benchWorld, ticks, ring int) {
	step, same := floorStep(bw, ticks, ring)
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
	if *same == 0 {
		b.Fatal("no block compared equal: the floor does not repeat the prediction")
	}
}

// floorStep returns one step of benchRollbackFloor, after filling the
// ring, and the count of blocks its re-saves found equal.
func floorStep(bw *benchWorld, ticks, ring int) (func(), *int) {
	pos, hp := ecs.StoreOf[bpos](bw.w).Column().Values, ecs.StoreOf[bhp](bw.w).Column().Values
	live := [][]byte{ // the World's arrays of the written components
		unsafe.Slice((*byte)(unsafe.Pointer(&pos[0])), len(pos)*int(unsafe.Sizeof(pos[0]))),
		unsafe.Slice((*byte)(unsafe.Pointer(&hp[0])), len(hp)*int(unsafe.Sizeof(hp[0]))),
	}
	frames := make([][][]byte, len(live))
	for k, l := range live {
		for range ring {
			frames[k] = append(frames[k], make([]byte, len(l)))
		}
	}
	same := 0
	save := func(t int, again bool) {
		for k, l := range live {
			f := frames[k][t%ring]
			if !again {
				copy(f, l)
				continue
			}
			for i := 0; i < len(l); i += 4096 {
				j := min(i+4096, len(l))
				if bytes.Equal(f[i:j], l[i:j]) {
					same++
				} else {
					copy(f[i:j], l[i:j])
				}
			}
		}
	}
	now := 0
	for range 40 {
		save(now, false)
		now++
		bw.sim(tick.Tick(now))
	}
	step := func() {
		from := now - ticks
		for k, l := range live {
			copy(l, frames[k][from%ring])
		}
		for t := from + 1; t <= now; t++ {
			bw.sim(tick.Tick(t))
			save(t, t != now)
		}
		now++
		bw.sim(tick.Tick(now))
	}
	return step, &same
}

// BenchmarkPredictStep measures a Step without rollback (save the state of
// Now, simulate one tick) beside simonly, one tick simulated without
// prediction: the per-tick cost of keeping the history.
func BenchmarkPredictStep(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("entities=%d/simonly", n), func(b *testing.B) {
			bw := newBenchWorld(n)
			b.ReportAllocs()
			for b.Loop() {
				bw.sim(0)
			}
		})
		b.Run(fmt.Sprintf("entities=%d", n), func(b *testing.B) {
			bw := newBenchWorld(n)
			tl := predict.New(bw.w, 0, predict.Config{})
			_, _ = predict.Register[bpos](tl)
			_, _ = predict.Register[bvel](tl)
			_, _ = predict.Register[bhp](tl)
			for range 40 {
				tl.Step(bw.sim)
			}
			b.ReportAllocs()
			for b.Loop() {
				tl.Step(bw.sim)
			}
			b.ReportMetric(float64(tl.Stats().HistoryBytes), "historyB")
		})
	}
}

// TestStepAllocatesNothing: in steady state a Step, with or without a
// rollback, allocates nothing.
func TestStepAllocatesNothing(t *testing.T) {
	bw := newBenchWorld(100)
	tl := predict.New(bw.w, 0, predict.Config{Window: 10, Forced: true})
	pos, _ := predict.Register[bpos](tl)
	for range 30 {
		tl.Step(bw.sim)
	}
	allocs := testing.AllocsPerRun(50, func() {
		at := tl.Now() - 4
		_ = pos.Authoritative(bw.e0, at, bpos{X: 1})
		_ = tl.Complete(at)
		tl.Step(bw.sim)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Step, want 0", allocs)
	}
}
