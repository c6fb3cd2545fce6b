package interp_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/tick"
)

type ipos struct{ X, Y float64 }

func (p ipos) Lerp(to ipos, f float64) ipos {
	return ipos{p.X + (to.X-p.X)*f, p.Y + (to.Y-p.Y)*f}
}

func lerpF(a, b float64, f float64) float64 { return a + (b-a)*f }

func at(t *testing.T, b *interp.Buffer[float64], e ecs.Entity, tk tick.Tick, frac float64) float64 {
	t.Helper()
	v, ok := b.At(e, tk, frac)
	if !ok {
		t.Fatalf("At(%d, %v): no value", tk, frac)
	}
	return v
}

func TestInterpolatedBetweenTicks(t *testing.T) {
	b := interp.NewBuffer(interp.Config{}, lerpF)
	e := ecs.NewEntity(1, 0)
	b.Push(e, 10, 100)
	b.Push(e, 11, 110)
	b.Push(e, 13, 150) // 12 missing: bridged by tick distance
	for _, c := range []struct {
		t    tick.Tick
		frac float64
		want float64
	}{
		{10, 0, 100}, {10, 0.25, 102.5}, {10, 0.5, 105}, {11, 0, 110},
		{11, 0.5, 120}, {12, 0, 130}, {12, 0.5, 140}, {13, 0, 150},
	} {
		if got := at(t, b, e, c.t, c.frac); got != c.want {
			t.Errorf("At(%d + %v) = %v, want %v", c.t, c.frac, got, c.want)
		}
	}
	if st := b.Stats(); st.Holds != 0 {
		t.Fatalf("holds %d, want 0", st.Holds)
	}
}

// Past the newest value the buffer holds it (no extrapolation) and counts
// the hold; before the oldest it holds the oldest.
func TestInterpolatedHoldsPastNewest(t *testing.T) {
	b := interp.NewBuffer(interp.Config{}, lerpF)
	e := ecs.NewEntity(1, 0)
	if _, ok := b.At(e, 10, 0); ok {
		t.Fatal("At on an unknown entity: ok")
	}
	b.Push(e, 10, 100)
	b.Push(e, 11, 110)
	if got := at(t, b, e, 11, 0.5); got != 110 {
		t.Fatalf("past newest: %v, want 110 held", got)
	}
	if got := at(t, b, e, 14, 0); got != 110 {
		t.Fatalf("3 ticks past newest: %v, want 110 held", got)
	}
	if got := at(t, b, e, 5, 0.5); got != 100 {
		t.Fatalf("before oldest: %v, want 100", got)
	}
	if st := b.Stats(); st.Holds != 2 {
		t.Fatalf("holds %d, want 2", st.Holds)
	}
	// The late value arrives: interpolation resumes.
	b.Push(e, 12, 130)
	if got := at(t, b, e, 11, 0.5); got != 120 {
		t.Fatalf("after the late value: %v, want 120", got)
	}
}

// A late (out-of-order) value is inserted in tick order; a duplicate
// replaces.
func TestInterpolatedLateValue(t *testing.T) {
	b := interp.NewBuffer(interp.Config{}, lerpF)
	e := ecs.NewEntity(1, 0)
	b.Push(e, 10, 100)
	b.Push(e, 14, 140)
	if got := at(t, b, e, 12, 0); got != 120 {
		t.Fatalf("before the late value: %v, want 120", got)
	}
	b.Push(e, 12, 200) // late
	if got := at(t, b, e, 11, 0); got != 150 {
		t.Fatalf("after the late value: At(11) = %v, want 150", got)
	}
	if got := at(t, b, e, 13, 0); got != 170 {
		t.Fatalf("after the late value: At(13) = %v, want 170", got)
	}
	b.Push(e, 12, 120) // duplicate tick: replaces
	if got := at(t, b, e, 13, 0); got != 130 {
		t.Fatalf("after the replacement: At(13) = %v, want 130", got)
	}
	if st := b.Stats(); st.Late != 1 || b.Len(e) != 3 {
		t.Fatalf("stats %+v, len %d; want 1 late, 3 values", st, b.Len(e))
	}
}

// The buffer keeps Capacity values: the oldest go, a value older than all
// kept is dropped.
func TestInterpolatedBounded(t *testing.T) {
	b := interp.NewBuffer(interp.Config{Capacity: 4}, lerpF)
	e := ecs.NewEntity(1, 0)
	for i := range 10 {
		b.Push(e, tick.Tick(i), float64(i))
	}
	if b.Len(e) != 4 {
		t.Fatalf("len %d, want 4", b.Len(e))
	}
	if got := at(t, b, e, 0, 0); got != 6 {
		t.Fatalf("oldest kept %v, want 6", got)
	}
	b.Push(e, 5, 55) // older than everything kept
	b.Push(e, 7, 77) // replaces
	b.Push(e, 8, 88)
	if st := b.Stats(); st.Dropped != 1 || st.Late != 0 {
		t.Fatalf("stats %+v, want 1 dropped", st)
	}
	if got := at(t, b, e, 7, 0.5); got != 82.5 {
		t.Fatalf("At(7.5) = %v, want 82.5", got)
	}
	// A late value inside a full buffer pushes the oldest out.
	b.Push(e, 20, 20)
	b.Push(e, 11, 11)
	if b.Len(e) != 4 || at(t, b, e, 0, 0) != 88 {
		t.Fatalf("len %d oldest %v, want 4 and 88", b.Len(e), at(t, b, e, 0, 0))
	}
	// Removal frees the buffer for the next entity.
	b.Remove(e)
	if _, ok := b.At(e, 9, 0); ok || b.Len(e) != 0 {
		t.Fatal("value left after Remove")
	}
	f := ecs.NewEntity(2, 0)
	b.Push(f, 30, 3)
	if got := at(t, b, f, 30, 0); got != 3 {
		t.Fatalf("reused buffer: %v", got)
	}
}

// After complete ticks without a value the entity was unchanged: a new
// value is interpolated from the last complete tick, not across the gap.
func TestInterpolatedCompleteTicksHold(t *testing.T) {
	b := interp.NewBuffer(interp.Config{}, lerpF)
	e := ecs.NewEntity(1, 0)
	b.Push(e, 10, 0)
	for k := tick.Tick(10); k <= 20; k++ {
		b.Complete(k)
	}
	b.Push(e, 21, 10) // started moving at 21
	if got := at(t, b, e, 15, 0); got != 0 {
		t.Fatalf("At(15) = %v, want 0 (at rest)", got)
	}
	if got := at(t, b, e, 20, 0.5); got != 5 {
		t.Fatalf("At(20.5) = %v, want 5", got)
	}
	// Without completeness the gap is bridged.
	c := interp.NewBuffer(interp.Config{}, lerpF)
	c.Push(e, 10, 0)
	c.Push(e, 20, 10)
	if got := at(t, c, e, 15, 0); got != 5 {
		t.Fatalf("bridged At(15) = %v, want 5", got)
	}
}

func TestInterpDelayAndShowTime(t *testing.T) {
	cfg := interp.Config{}
	if got, want := cfg.Delay(0), time.Second/60*17/10; got != want {
		t.Fatalf("Delay(0) = %v, want 1.7 ticks = %v", got, want)
	}
	if got, want := cfg.Delay(10*time.Millisecond), time.Second/60*17/10+20*time.Millisecond; got != want {
		t.Fatalf("Delay(10ms) = %v, want %v", got, want)
	}
	slow := interp.Config{SendInterval: 100 * time.Millisecond}
	if got := slow.Delay(0); got != 170*time.Millisecond {
		t.Fatalf("Delay at 10 Hz sends = %v, want 170ms", got)
	}
	fast := interp.Config{SendInterval: time.Millisecond}
	if got := fast.Delay(0); got != 5*time.Millisecond {
		t.Fatalf("Delay floor = %v, want 5ms", got)
	}
	b := interp.NewBuffer(interp.Config{TickRate: 10}, lerpF)
	b.Push(ecs.NewEntity(1, 0), 100, 0)
	tk, frac := b.ShowTime(0.25, 150*time.Millisecond) // 100.25 - 1.5
	if tk != 98 || frac < 0.7499 || frac > 0.7501 {
		t.Fatalf("ShowTime = %d + %v, want 98 + 0.75", tk, frac)
	}
	tk, frac = b.ShowAt(200, 0.5, 200*time.Millisecond) // 200.5 - 2
	if tk != 198 || frac < 0.4999 || frac > 0.5001 {
		t.Fatalf("ShowAt = %d + %v, want 198 + 0.5", tk, frac)
	}
}

func TestInterpolatedLerpMethod(t *testing.T) {
	b := interp.NewBuffer(interp.Config{}, interp.LerpMethod[ipos]())
	e := ecs.NewEntity(1, 0)
	b.Push(e, 0, ipos{0, 10})
	b.Push(e, 2, ipos{4, 20})
	if v, _ := b.At(e, 1, 0.5); v != (ipos{3, 17.5}) {
		t.Fatalf("At(1.5) = %+v", v)
	}
}

func ExampleBuffer() {
	type Pos struct{ X float64 }
	lerp := func(a, b Pos, f float64) Pos { return Pos{a.X + (b.X-a.X)*f} }

	cfg := interp.Config{TickRate: 60, SendInterval: 2 * time.Second / 60}
	remote := interp.NewBuffer(cfg, lerp)
	other := ecs.NewEntity(7, 0)

	// The server sends every other tick; each value arrives in the
	// receive phase.
	remote.Push(other, 100, Pos{0})
	remote.Push(other, 102, Pos{10})
	remote.Push(other, 104, Pos{30})

	delay := cfg.Delay(0) // 3.4 ticks
	for _, alpha := range []float64{0, 0.5} {
		t, frac := remote.ShowTime(alpha, delay)
		p, _ := remote.At(other, t, frac)
		fmt.Printf("delay %v: show tick %d + %.1f: x = %.1f\n", delay.Round(time.Millisecond), t, frac, p.X)
	}
	// Output:
	// delay 57ms: show tick 100 + 0.6: x = 3.0
	// delay 57ms: show tick 101 + 0.1: x = 5.5
}

func BenchmarkInterpolated(b *testing.B) {
	const n = 256
	buf := interp.NewBuffer(interp.Config{}, interp.LerpMethod[ipos]())
	for i := range n {
		for k := range 16 {
			buf.Push(ecs.NewEntity(uint32(i), 0), tick.Tick(k), ipos{float64(k), 0})
		}
	}
	delay := buf.Config().Delay(2 * time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	var sink ipos
	for it := range b.N {
		// One frame: a new value for every entity, then every entity shown.
		k := tick.Tick(16 + it)
		for i := range n {
			buf.Push(ecs.NewEntity(uint32(i), 0), k, ipos{float64(k), 1})
		}
		buf.Complete(k)
		t, frac := buf.ShowTime(0.5, delay)
		for i := range n {
			v, _ := buf.At(ecs.NewEntity(uint32(i), 0), t, frac)
			sink.X += v.X
		}
	}
	_ = sink
}
