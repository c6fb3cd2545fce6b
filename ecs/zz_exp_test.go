package ecs_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
)

func moveQueryWW(n int) *ecs.Query2[bpos, bvel] {
	w := ecs.New()
	pos, vel := ecs.Register[bpos](w), ecs.Register[bvel](w)
	for i := range n {
		e := w.Spawn()
		_ = pos.Set(e, bpos{X: float64(i)})
		_ = vel.Set(e, bvel{X: 1, Y: 2, Z: 3})
	}
	return ecs.NewQuery2(pos.Write(), vel.Write())
}

func BenchmarkExpWW(b *testing.B) {
	const n = 100000
	q := moveQueryWW(n)
	for b.Loop() {
		move(q)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
}
