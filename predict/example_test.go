package predict_test

import (
	"fmt"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

func Example() {
	type Position struct{ X int64 }
	type Velocity struct{ X int64 }

	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 8})
	pos, _ := predict.Register[Position](tl, predict.LogCorrections())
	vel, _ := predict.Register[Velocity](tl)

	// A ship appears at tick 0 (a change from outside the simulation).
	ship := w.Spawn()
	_ = pos.Insert(ship, 0, Position{X: 0})
	_ = vel.Insert(ship, 0, Velocity{X: 1})

	move := ecs.NewQuery2(pos.Store().Write(), vel.Store().Read())
	sim := func(tick.Tick) {
		for _, r := range move.All() {
			r.A.X += r.B.X
		}
	}
	for range 5 {
		tl.Step(sim) // predicts ticks 1..5: X = 5
	}

	// Receive phase: the server says the ship was at 10 at the end of
	// tick 2 (it was pushed), and tick 2 is complete.
	_ = pos.Authoritative(ship, 2, Position{X: 10})
	_ = tl.Complete(2)

	// The next step rolls back to 2, re-simulates 3..5, then runs 6.
	tl.Step(sim)
	p, _ := pos.Store().Get(ship)
	c := pos.Corrections()[0]
	fmt.Println("now", tl.Now(), "x", p.X)
	fmt.Println("correction at", c.Tick, "from", c.Before.X, "to", c.After.X)
	fmt.Println("rollbacks", tl.Stats().Rollbacks, "resimulated", tl.Stats().TicksResimulated)
	// Output:
	// now 6 x 14
	// correction at 5 from 5 to 13
	// rollbacks 1 resimulated 3
}

func ExampleDecay() {
	// A correction moved an entity from 5 to 13: the renderer keeps drawing
	// it where it was and lets the offset decay.
	offset := float64(5 - 13)
	d := predict.Decay{Period: 100 * time.Millisecond, Ratio: 0.5}
	for range 3 {
		offset = d.Apply(offset, 100*time.Millisecond)
		fmt.Printf("draw at %.0f + %.0f\n", 13.0, offset)
	}
	// Output:
	// draw at 13 + -4
	// draw at 13 + -2
	// draw at 13 + -1
}
