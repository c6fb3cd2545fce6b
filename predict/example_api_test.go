package predict_test

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// Values given through Authoritative wait for their tick to be complete
// (replicate's TickComplete hook calls Timeline.Complete): until then the
// Step neither compares nor applies them. Insert is a change from outside
// the simulation that needs no completeness: in the past, the next Step
// rolls back to it.
func ExampleComponent_Authoritative() {
	type Health struct{ HP int32 }
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 8})
	hp, _ := predict.Register[Health](tl)
	e := w.Spawn()
	_ = hp.Insert(e, 0, Health{HP: 100})
	noop := func(tick.Tick) {}
	for range 4 {
		tl.Step(noop)
	}

	_ = hp.Authoritative(e, 2, Health{HP: 90}) // the server's value at 2
	tl.Step(noop)
	v, _ := hp.At(e, tl.Now())
	fmt.Println("before Complete:", v.HP, "rollbacks", tl.Stats().Rollbacks)

	_ = tl.Complete(2) // every value of tick 2 has arrived
	tl.Step(noop)
	v, _ = hp.At(e, tl.Now())
	fmt.Println("after Complete:", v.HP, "rollbacks", tl.Stats().Rollbacks)

	_ = hp.Insert(e, 3, Health{HP: 50}) // a change of the past: no Complete needed
	tl.Step(noop)
	v, _ = hp.At(e, tl.Now())
	fmt.Println("after Insert:", v.HP, "rollbacks", tl.Stats().Rollbacks)
	// Output:
	// before Complete: 100 rollbacks 0
	// after Complete: 90 rollbacks 1
	// after Insert: 50 rollbacks 2
}

// At answers for every tick the history holds, Oldest .. Now. For Now
// (outside Step) it reads the World, which holds the state of Now until
// the next Step saves it.
func ExampleComponent_At() {
	type Position struct{ X int64 }
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 3})
	pos, _ := predict.Register[Position](tl)
	e := w.Spawn()
	_ = pos.Insert(e, 0, Position{X: 0})
	q := ecs.NewQuery1(pos.Store().Write())
	move := func(tick.Tick) {
		for _, p := range q.All() {
			p.X++
		}
	}
	for range 5 {
		tl.Step(move)
	}
	for t := tl.Oldest(); !t.After(tl.Now()); t++ {
		p, ok := pos.At(e, t)
		fmt.Println(t, p.X, ok)
	}
	_, ok := pos.At(e, tl.Oldest()-1)
	fmt.Println("before Oldest:", ok)
	// Output:
	// 2 2 true
	// 3 3 true
	// 4 4 true
	// 5 5 true
	// before Oldest: false
}

// Each registered type's counters come from its handle, typed, without
// looking the type up by name in Timeline.Stats().Types.
func ExampleComponent_Stats() {
	type Position struct{ X int64 }
	type Color struct{ RGB uint32 }
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 8})
	pos, _ := predict.Register[Position](tl)
	col, _ := predict.Register[Color](tl)
	e := w.Spawn()
	_ = pos.Insert(e, 0, Position{X: 1})
	_ = col.Insert(e, 0, Color{RGB: 0xff0000})
	noop := func(tick.Tick) {}
	tl.Step(noop)
	tl.Step(noop)

	_ = pos.Authoritative(e, 1, Position{X: 2})       // differs: a misprediction
	_ = col.Authoritative(e, 1, Color{RGB: 0xff0000}) // as predicted
	_ = tl.Complete(1)
	tl.Step(noop)
	fmt.Println("position mispredictions:", pos.Stats().Mispredictions)
	fmt.Println("color mispredictions:", col.Stats().Mispredictions)
	// Output:
	// position mispredictions: 1
	// color mispredictions: 0
}

// A despawn marker put at tick T keeps the World entity (without its
// predicted components) while T is in the window W, so a rollback can
// revive it; the entity leaves the World at the end of the Step that
// simulates T+W+1.
func ExampleTimeline_Despawn() {
	type Bullet struct{ Born uint32 }
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{Window: 4})
	bullets, _ := predict.Register[Bullet](tl)
	e := w.Spawn()
	_ = bullets.Insert(e, 0, Bullet{})
	sim := func(t tick.Tick) {
		if t == 2 {
			_ = tl.Despawn(e) // the bullet expires at T = 2
		}
	}
	for range 8 {
		tl.Step(sim)
		_, has := bullets.Store().Get(e)
		fmt.Println("end of", tl.Now(), "alive", w.Alive(e), "bullet", has)
	}
	// Output:
	// end of 1 alive true bullet true
	// end of 2 alive true bullet false
	// end of 3 alive true bullet false
	// end of 4 alive true bullet false
	// end of 5 alive true bullet false
	// end of 6 alive true bullet false
	// end of 7 alive false bullet false
	// end of 8 alive false bullet false
}
