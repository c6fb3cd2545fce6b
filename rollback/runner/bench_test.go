package runner_test

import (
	"fmt"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
)

type (
	bPos fixed.Vec2
	bVel fixed.Vec2
)

// benchRunner returns a Runner over a world of n entities with a position and
// a velocity, whose Step moves every entity (Position += Velocity), with a
// ring deep enough for a rollback of 8 frames.
func benchRunner(b *testing.B, n int) *runner.Runner {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := snapshot.Copy[bPos](reg); err != nil {
		b.Fatal(err)
	}
	if err := snapshot.Copy[bVel](reg); err != nil {
		b.Fatal(err)
	}
	pos, vel := ecs.StoreOf[bPos](w), ecs.StoreOf[bVel](w)
	for i := range n {
		e := w.Spawn()
		_ = pos.Set(e, bPos{X: fixed.FromInt(int64(i))})
		_ = vel.Set(e, bVel{X: fixed.One, Y: fixed.Half})
	}
	move := ecs.NewQuery2(pos.Write(), vel.Read())
	r, err := runner.New(runner.Config{World: w, Registry: reg, Session: nopSession{}, Depth: 16,
		Step: func(*runner.Context) {
			for bt := range move.Batches() {
				for i := range bt.A {
					bt.A[i].X = bt.A[i].X.Add(bt.B[i].X)
					bt.A[i].Y = bt.A[i].Y.Add(bt.B[i].Y)
				}
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkRollback measures what a rollback of 8 frames costs the game: one
// Load, then 9 simulated frames with a Save before each of the last 8
// (frames=8), against the same 9 frames of simulation without snapshot work
// (simonly, the floor).
func BenchmarkRollback(b *testing.B) {
	const depth = 8
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("frames=%d/entities=%d", depth, n), func(b *testing.B) {
			r := benchRunner(b, n)
			reqs := []rollback.Request{{Kind: rollback.SaveRequest, Frame: 0}}
			if err := r.Handle(reqs); err != nil {
				b.Fatal(err)
			}
			reqs = append(reqs[:0], rollback.Request{Kind: rollback.LoadRequest, Frame: 0},
				rollback.Request{Kind: rollback.AdvanceRequest, Frame: 0})
			for f := rollback.Frame(1); f <= depth; f++ {
				reqs = append(reqs, rollback.Request{Kind: rollback.SaveRequest, Frame: f},
					rollback.Request{Kind: rollback.AdvanceRequest, Frame: f})
			}
			if err := r.Handle(reqs); err != nil { // warm the ring's buffers
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := r.Handle(reqs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entity")
		})
		b.Run(fmt.Sprintf("simonly/entities=%d", n), func(b *testing.B) {
			r := benchRunner(b, n)
			reqs := make([]rollback.Request, depth+1)
			run := func() {
				f := r.Frame()
				for k := range reqs {
					reqs[k] = rollback.Request{Kind: rollback.AdvanceRequest, Frame: f + rollback.Frame(k)}
				}
				if err := r.Handle(reqs); err != nil {
					b.Fatal(err)
				}
			}
			run() // warm the query's buffers
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entity")
		})
	}
}
