package lagcomp_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/tick"
)

// BenchmarkCapture: capturing 10k moving entities' positions each tick,
// beside its floor, a raw copy of the same values.
func BenchmarkCapture(b *testing.B) {
	const n = 10000
	w := ecs.New()
	pos := ecs.Register[Pos](w)
	h := lagcomp.New(w, lagcomp.Config{})
	if _, err := lagcomp.Track(h, lerpPos); err != nil {
		b.Fatal(err)
	}
	for k := range n {
		_ = pos.Set(w.Spawn(), Pos{X: float64(k)})
	}
	b.Run("capture", func(b *testing.B) {
		b.SetBytes(n * 16)
		b.ReportAllocs()
		t := tick.Tick(0)
		for range 2 * h.Config().Ticks { // warm the history
			h.Capture(t)
			t++
		}
		for b.Loop() {
			h.Capture(t)
			t++
		}
	})
	b.Run("copyfloor", func(b *testing.B) {
		src := pos.Column().Values
		dst := make([]Pos, len(src))
		b.SetBytes(n * 16)
		b.ReportAllocs()
		for b.Loop() {
			copy(dst, src)
		}
	})
}

// BenchmarkRewindQuery: one shot's hit test reads 64 entities' positions
// in a view of the past, interpolated.
func BenchmarkRewindQuery(b *testing.B) {
	const n = 64
	w := ecs.New()
	pos := ecs.Register[Pos](w)
	h := lagcomp.New(w, lagcomp.Config{})
	ty, _ := lagcomp.Track(h, lerpPos)
	var ents []ecs.Entity
	for k := range n {
		e := w.Spawn()
		ents = append(ents, e)
		_ = pos.Set(e, Pos{X: float64(k)})
	}
	for t := tick.Tick(0); t < 60; t++ {
		for _, e := range ents {
			pos.Ptr(e).X++
		}
		h.Capture(t)
	}
	claim := lagcomp.NewClaim(40, 0.3)
	b.ReportAllocs()
	var sum float64
	for b.Loop() {
		v := h.At(claim)
		for _, e := range ents {
			p, _ := ty.At(v, e)
			sum += p.X
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entity")
	_ = sum
}
