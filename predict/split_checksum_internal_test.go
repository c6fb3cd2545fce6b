package predict

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// TestSplitSummer: the part of a type split by AttachSplit sums the
// predicted entities' history and, for each interpolated entity, the
// newest value its buffer holds at or before the report's tick: equal to
// replicate's part of a World where every entity has that value. Noting
// the buffer's sum and summing the part allocate nothing.
func TestSplitSummer(t *testing.T) {
	const n = 100
	p := replicate.NewProtocol()
	if _, err := replicate.Component[sumPos](p, replicate.WithOwnRule()); err != nil {
		t.Fatal(err)
	}
	w, full := ecs.New(), ecs.New() // full: every entity has its value at tick 2
	buf := interp.NewBuffer(interp.Config{}, func(a, b sumPos, f float64) sumPos { return b })
	for i := range 2 * n {
		e, fe := w.Spawn(), full.Spawn()
		_ = ecs.Register[replicate.Replicated](w).Set(e, replicate.Replicated{})
		_ = ecs.Register[replicate.Replicated](full).Set(fe, replicate.Replicated{})
		_ = ecs.Register[sumPos](full).Set(fe, sumPos{X: float64(i)})
		if i%2 == 0 {
			_ = ecs.Register[sumPos](w).Set(e, sumPos{X: float64(i)})
			continue
		}
		buf.Push(e, 1, sumPos{X: float64(i)})
		buf.Push(e, 3, sumPos{X: float64(i + 1000)}) // newer than the report
	}
	rc, err := replicate.NewClient(replicate.ClientConfig{World: w, Protocol: p})
	if err != nil {
		t.Fatal(err)
	}
	tl := New(w, 0, Config{Window: 8})
	comp, err := Register[sumPos](tl)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tl.Step(func(tick.Tick) {})
	}
	comp.split = buf
	sm := comp.summer(rc).(*compSummer[sumPos])
	ids := func(e ecs.Entity) (ecs.Entity, bool) { return e, true } // the world's ids are the server's
	same := &checksums{mapped: ids}
	sm.srv = ids
	_, parts := replicate.StateChecksum(full, p, nil)
	want := parts[len(parts)-1]
	sm.hold(2)
	if got, ok := sm.part(2, same); !ok || got != want {
		t.Fatalf("split part at 2: %+v (%v), want replicate's %+v", got, ok, want)
	}
	if _, ok := sm.part(2, same); ok {
		t.Fatal("part summed twice from one hold")
	}
	if _, ok := sm.part(1, same); ok {
		t.Fatal("part of a tick never held")
	}
	allocs := testing.AllocsPerRun(50, func() {
		sm.hold(2)
		if _, ok := sm.part(2, same); !ok {
			t.Fatal("tick 2 not held")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per report", allocs)
	}
}
