package predict

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

type sumPos struct{ X, Y, Z float64 }

// BenchmarkChecksumPart: the part of a predicted type of 1000 entities
// summed from its history at a past tick (what a predicting client's
// report costs per type, checked first against the World's part at each
// tick) beside the floor, replicate.StateChecksum of the same world (what
// a report costs without prediction), in the same run. The history's sum
// allocates nothing.
func BenchmarkChecksumPart(b *testing.B) {
	const n = 1000
	p := replicate.NewProtocol()
	if _, err := replicate.Component[sumPos](p, replicate.WithOwnRule()); err != nil {
		b.Fatal(err)
	}
	w := ecs.New()
	rep, pos := ecs.Register[replicate.Replicated](w), ecs.Register[sumPos](w)
	for i := range n {
		e := w.Spawn()
		_ = rep.Set(e, replicate.Replicated{})
		_ = pos.Set(e, sumPos{X: float64(i)})
	}
	rc, err := replicate.NewClient(replicate.ClientConfig{World: w, Protocol: p})
	if err != nil {
		b.Fatal(err)
	}
	tl := New(w, 0, Config{Window: 8})
	comp, err := Register[sumPos](tl)
	if err != nil {
		b.Fatal(err)
	}
	move := ecs.NewQuery1(pos.Write())
	var parts []replicate.Part
	want := map[tick.Tick]uint64{} // the World's part at the end of each tick
	for range 4 {
		tl.Step(func(tick.Tick) {
			for _, v := range move.All() {
				v.X++
			}
		})
		_, parts = replicate.StateChecksum(w, p, parts[:0])
		want[tl.Now()] = parts[1].Sum
	}
	sm := comp.summer(rc)
	ids := func(e ecs.Entity) (ecs.Entity, bool) { return e, true } // the world's ids are the server's
	same := &checksums{mapped: ids}
	for t := tick.Tick(1); t < tl.Now(); t++ {
		if got, ok := sm.part(t, same); !ok || got.Sum != want[t] || got.Name != parts[1].Name {
			b.Fatalf("history part at %v: %+v (%v), the World's then %x %q", t, got, ok, want[t], parts[1].Name)
		}
	}
	b.Run("history", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := sm.part(2, same); !ok {
				b.Fatal("tick 2 not held")
			}
		}
	})
	b.Run("floor=StateChecksum", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, parts = replicate.StateChecksum(w, p, parts[:0])
		}
	})
}
