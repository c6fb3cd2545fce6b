package metrics_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// A rollback is counted with its depth and the misprediction that caused
// it, and sampling allocates nothing.
func TestPredictFigures(t *testing.T) {
	type position struct{ X int64 }
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 8})
	pos, err := predict.Register[position](tl)
	if err != nil {
		t.Fatal(err)
	}
	ship := w.Spawn()
	_ = pos.Insert(ship, 0, position{})
	sim := func(tick.Tick) {
		p, _ := pos.Store().Get(ship)
		p.X++
		_ = pos.Store().Set(ship, p)
	}
	m := metrics.NewPredict(metrics.PredictConfig{Name: "client 1"})
	for range 5 {
		tl.Step(sim)
		m.Sample(tl)
	}
	// The server says tick 2 ended elsewhere: the next Step rolls back to
	// 2 and re-simulates 3..5.
	_ = pos.Authoritative(ship, 2, position{X: 10})
	_ = tl.Complete(2)
	tl.Step(sim)
	m.Sample(tl)
	var f metrics.PredictFigures
	m.Read(&f)
	if f.Name != "client 1" || f.Samples != 6 || f.Rollbacks != 1 || f.TicksResimulated != 3 || f.Mispredictions != 1 {
		t.Fatalf("figures %+v", f)
	}
	if f.Depth.Count != 1 || f.Depth.Sum != 3 {
		t.Fatalf("depth histogram %+v, want one rollback of 3 ticks", f.Depth)
	}
	if a := testing.AllocsPerRun(100, func() { m.Sample(tl) }); a != 0 {
		t.Fatalf("Sample: %v allocations", a)
	}
}
