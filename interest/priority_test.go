package interest_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/interest"
)

func TestGridPriority(t *testing.T) {
	w := ecs.New()
	g, err := interest.NewGrid(interest.GridConfig{Radius: 100})
	if err != nil {
		t.Fatal(err)
	}
	near, edge, far, unknown := w.Spawn(), w.Spawn(), w.Spawn(), w.Spawn()
	g.Move(near, 20, 0)
	g.Move(edge, 0, 100)
	g.Move(far, 1000, 0)
	g.SetFocus(1, 0, 0)
	for _, c := range []struct {
		e    ecs.Entity
		want float32
	}{{near, 1}, {edge, 0.25}, {far, 1.0 / 16}, {unknown, 1}} {
		if got := g.Priority(1, c.e); got != c.want {
			t.Errorf("Priority of %v = %v, want %v", c.e, got, c.want)
		}
	}
	if got := g.Priority(2, near); got != 1 {
		t.Errorf("an unknown client's priority %v, want 1", got)
	}
}
