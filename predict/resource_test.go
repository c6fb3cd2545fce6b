package predict_test

import (
	"testing"

	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

type Score struct{ Points int64 }

// Resources roll back: presence and value.
func TestResourceRollback(t *testing.T) {
	g := newRig(t, predict.Config{})
	score, err := predict.RegisterResource[Score](g.tl)
	if err != nil {
		t.Fatal(err)
	}
	g.must(score.Set(0, Score{0}))
	res := score.Resource()
	g.extra = func(tick.Tick) {
		if p := res.Ptr(); p != nil {
			p.Points += 10
		}
	}
	g.stepTo(6)
	if v, _ := res.Get(); v.Points != 60 {
		t.Fatalf("score at 6 = %d, want 60", v.Points)
	}
	g.must(score.Authoritative(2, Score{1000}))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if v, _ := res.Get(); v.Points != 1050 {
		t.Fatalf("score at 7 after the rollback = %d, want 1050", v.Points)
	}
	// The server had no score at 5: absent at 5, and the simulation cannot
	// add to an absent score, so it stays absent.
	g.must(score.AuthoritativeRemove(5))
	g.must(g.tl.Complete(5))
	g.tl.Step(g.sim)
	if res.Present() {
		t.Fatal("score present after an authoritative removal at 5")
	}
	if v, ok := score.At(4); !ok || v.Points != 1020 {
		t.Fatalf("score at 4 = %v %v, want 1020", v, ok)
	}
	// A removal from outside the simulation in the past is replayed.
	g.must(score.Set(g.tl.Now(), Score{5}))
	g.must(score.Remove(g.tl.Now() - 1))
	g.tl.Step(g.sim)
	if v, ok := res.Get(); !ok || v.Points != 15 {
		t.Fatalf("score = %v %v after a past removal and a set at Now, want 15", v, ok)
	}
	if g.tl.Stats().Types[2].Mispredictions != 2 {
		t.Fatalf("resource mispredictions = %d, want 2", g.tl.Stats().Types[2].Mispredictions)
	}
}
