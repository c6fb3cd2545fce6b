package ecs_test

import (
	"fmt"
	"testing"

	"github.com/rewindgo/rewind/ecs"
)

type bpos struct{ X, Y, Z float64 }
type bvel struct{ X, Y, Z float64 }

// moveQuery builds n entities with a position and a velocity and the query
// that moves them (positions written, velocities read), in a World in
// checked mode or not.
func moveQuery(n int, checks bool) *ecs.Query2[bpos, bvel] {
	w := ecs.New()
	w.SetChecks(checks)
	pos, vel := ecs.Register[bpos](w), ecs.Register[bvel](w)
	for i := range n {
		e := w.Spawn()
		_ = pos.Set(e, bpos{X: float64(i)})
		_ = vel.Set(e, bvel{X: 1, Y: 2, Z: 3})
	}
	return ecs.NewQuery2(pos.Write(), vel.Read())
}

// The benchmarks run each loop as a system, a function called once per frame,
// which is how a game writes them. Statements written directly inside a
// b.Loop body are different: the compiler keeps their results alive (Go 1.24+
// wraps them in runtime.KeepAlive), which stops a range-over-func loop body
// from being inlined into its iterator and makes even the plain-slice floor
// reload its slices at every statement; none of that happens in a system.

// move is the system measured by BenchmarkQuery.
func move(q *ecs.Query2[bpos, bvel]) {
	for _, r := range q.All() {
		r.A.X += r.B.X
		r.A.Y += r.B.Y
		r.A.Z += r.B.Z
	}
}

// moveBatches is move over batches.
func moveBatches(q *ecs.Query2[bpos, bvel]) {
	for bt := range q.Batches() {
		a, b := bt.A, bt.B[:len(bt.A)]
		for i := range a {
			a[i].X += b[i].X
			a[i].Y += b[i].Y
			a[i].Z += b[i].Z
		}
	}
}

// moveFloor is move over plain slices: no entities, no change ticks.
func moveFloor(pos []bpos, vel []bvel) {
	vel = vel[:len(pos)]
	for i := range pos {
		pos[i].X += vel[i].X
		pos[i].Y += vel[i].Y
		pos[i].Z += vel[i].Z
	}
}

func BenchmarkQuery(b *testing.B) {
	for _, n := range []int{100000} {
		b.Run(fmt.Sprintf("components=2/entities=%d", n), func(b *testing.B) {
			q := moveQuery(n, false)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				move(q)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entity")
		})
	}
}

// BenchmarkQueryChecked is BenchmarkQuery in checked mode
// (World.SetChecks): the difference is the cost of copying and comparing
// every velocity read.
func BenchmarkQueryChecked(b *testing.B) {
	const n = 100000
	q := moveQuery(n, true)
	b.ReportAllocs()
	for b.Loop() {
		move(q)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
}

// BenchmarkQueryBothWritten is BenchmarkQuery with write access to the
// velocities too: the difference is the cost of marking a second value per
// entity.
func BenchmarkQueryBothWritten(b *testing.B) {
	const n = 100000
	w := ecs.New()
	pos, vel := ecs.Register[bpos](w), ecs.Register[bvel](w)
	for i := range n {
		e := w.Spawn()
		_ = pos.Set(e, bpos{X: float64(i)})
		_ = vel.Set(e, bvel{X: 1, Y: 2, Z: 3})
	}
	q := ecs.NewQuery2(pos.Write(), vel.Write())
	b.ReportAllocs()
	for b.Loop() {
		move(q)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
}

func BenchmarkQueryBatches(b *testing.B) {
	const n = 100000
	q := moveQuery(n, false)
	b.ReportAllocs()
	for b.Loop() {
		moveBatches(q)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
}

// moveFloorStamped is moveFloor plus one change tick stored per position
// written: the least any query that tracks writes per value can do.
func moveFloorStamped(pos []bpos, vel []bvel, changed []uint64, now uint64) {
	vel, changed = vel[:len(pos)], changed[:len(pos)]
	for i := range pos {
		changed[i] = now
		pos[i].X += vel[i].X
		pos[i].Y += vel[i].Y
		pos[i].Z += vel[i].Z
	}
}

func BenchmarkQueryFloorStamped(b *testing.B) {
	const n = 100000
	pos, vel, changed := make([]bpos, n), make([]bvel, n), make([]uint64, n)
	for i := range vel {
		vel[i] = bvel{1, 2, 3}
	}
	now := uint64(0)
	for b.Loop() {
		now++
		moveFloorStamped(pos, vel, changed, now)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
}

func BenchmarkQueryFloor(b *testing.B) {
	const n = 100000
	pos, vel := make([]bpos, n), make([]bvel, n)
	for i := range vel {
		vel[i] = bvel{1, 2, 3}
	}
	for b.Loop() {
		moveFloor(pos, vel)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
}
