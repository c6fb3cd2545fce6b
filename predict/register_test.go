package predict_test

import (
	"errors"
	"math"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

type Pos struct{ X float64 }

// A compare function with a tolerance decides what is a misprediction.
func TestCompareTolerance(t *testing.T) {
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	pos, err := predict.Register[Pos](tl, predict.Compare(func(a, b Pos) bool { return math.Abs(a.X-b.X) < 0.01 }))
	if err != nil {
		t.Fatal(err)
	}
	e := w.Spawn()
	_ = pos.Insert(e, 0, Pos{1})
	sim := func(tick.Tick) {}
	tl.Step(sim)
	tl.Step(sim)
	_ = pos.Authoritative(e, 1, Pos{1.001}) // within tolerance
	_ = tl.Complete(1)
	tl.Step(sim)
	if tl.Stats().Rollbacks != 0 {
		t.Fatal("a value within tolerance rolled back")
	}
	_ = pos.Authoritative(e, 2, Pos{1.5})
	_ = tl.Complete(2)
	tl.Step(sim)
	if v, _ := pos.Store().Get(e); tl.Stats().Rollbacks != 1 || v.X != 1.5 {
		t.Fatalf("%d rollbacks, x = %v; want 1, 1.5", tl.Stats().Rollbacks, v.X)
	}
}

// Registration refuses what it cannot keep a history of, and misuse.
func TestRegisterErrors(t *testing.T) {
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	type withSlice struct{ S []int }
	if _, err := predict.Register[withSlice](tl); err == nil {
		t.Fatal("a type holding a slice was accepted")
	}
	if _, err := predict.Register[Pos](tl, predict.Compare(func(a, b Health) bool { return a == b })); !errors.Is(err, predict.ErrCompareType) {
		t.Fatalf("compare of another type: %v", err)
	}
	if _, err := predict.Register[Pos](tl); err != nil {
		t.Fatal(err)
	}
	if _, err := predict.Register[Pos](tl); !errors.Is(err, predict.ErrRegistered) {
		t.Fatalf("second registration: %v", err)
	}
	tl.Step(func(tick.Tick) {})
	if _, err := predict.RegisterResource[Score](tl); !errors.Is(err, predict.ErrStarted) {
		t.Fatalf("registration after Step: %v", err)
	}
	if tl.Window() != predict.DefaultWindow {
		t.Fatalf("default window %d, want %d", tl.Window(), predict.DefaultWindow)
	}
}
