package predict_test

import (
	"errors"
	"testing"

	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// Changes from outside the simulation made inside it are refused.
func TestExternalChangeInStep(t *testing.T) {
	g := newRig(t, predict.Config{})
	e := g.spawn(10)
	var err error
	g.extra = func(tk tick.Tick) { err = g.health.Insert(e, tk, 1) }
	g.tl.Step(g.sim)
	if !errors.Is(err, predict.ErrInStep) {
		t.Fatalf("Insert from the simulation: %v, want ErrInStep", err)
	}
}

// ReceiveHook takes every value for the Timeline (never the World) and
// counts those it refuses.
func TestReceiveHook(t *testing.T) {
	g := newRig(t, predict.Config{Window: 4})
	e := g.spawn(10)
	g.stepTo(3)
	hook := g.health.ReceiveHook()
	if !hook(e, 2, 100) || !hook(e, 20, 5) {
		t.Fatal("hook returned false: replicate would write the value into the World")
	}
	if g.now(e) != 7 || g.tl.Stats().Refused != 1 {
		t.Fatalf("health %d, refused %d; want 7 (untouched), 1", g.now(e), g.tl.Stats().Refused)
	}
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if g.now(e) != 98 {
		t.Fatalf("health after the rollback = %d, want 98", g.now(e))
	}
}
