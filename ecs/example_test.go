package ecs_test

import (
	"errors"
	"fmt"

	"github.com/rewindgo/rewind/ecs"
)

func Example() {
	type Position struct{ X, Y float64 }
	type Velocity struct{ X, Y float64 }

	w := ecs.New()
	pos := ecs.Register[Position](w)
	vel := ecs.Register[Velocity](w)
	for i := range 3 {
		e := w.Spawn()
		_ = pos.Set(e, Position{X: float64(i)})
		_ = vel.Set(e, Velocity{X: 1, Y: 0.5})
	}

	// Positions are written, velocities only read.
	move := ecs.NewQuery2(pos.Write(), vel.Read())
	for e, r := range move.All() {
		r.A.X += r.B.X
		r.A.Y += r.B.Y
		fmt.Println(e, *r.A)
	}
	// Output:
	// 0v1 {1 0.5}
	// 1v1 {2 0.5}
	// 2v1 {3 0.5}
}

func ExampleCommands() {
	type Health int
	w := ecs.New()
	hp := ecs.Register[Health](w)
	for i := range 4 {
		_ = hp.Set(w.Spawn(), Health(i))
	}
	cmds := ecs.NewCommands(w)
	for e, h := range hp.Values() {
		if h == 0 {
			cmds.Despawn(e) // structural changes wait until the loop is over
		}
	}
	if err := cmds.Apply(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(w.Len(), "alive")
	// Output: 3 alive
}

// Checked mode catches a write through Read access, which in normal mode
// would change the value without its change tick.
func ExampleWorld_SetChecks() {
	type Position struct{ X float64 }
	type Velocity struct{ X float64 }

	w := ecs.New()
	w.SetChecks(true) // in tests; a SyncTest runner turns it on by itself
	pos, vel := ecs.Register[Position](w), ecs.Register[Velocity](w)
	e := w.Spawn()
	_ = pos.Set(e, Position{})
	_ = vel.Set(e, Velocity{X: 1})

	move := ecs.NewQuery2(pos.Write(), vel.Read())
	defer func() {
		err := recover().(error)
		fmt.Println(errors.Is(err, ecs.ErrWriteThroughRead))
		v, _ := vel.Get(e)
		fmt.Println("velocity still", v.X)
	}()
	for _, r := range move.All() {
		r.A.X += r.B.X
		r.B.X = 0 // the bug: velocities are only read here
	}
	// Output:
	// true
	// velocity still 1
}

// A loader that knows how many entities and values it will create grows
// the World and the Store first, so that they are allocated once.
func ExampleStore_Grow() {
	type Position struct{ X, Y float64 }
	saved := []Position{{1, 2}, {3, 4}, {5, 6}}
	w := ecs.New()
	pos := ecs.Register[Position](w)
	w.Grow(len(saved))
	pos.Grow(len(saved))
	for _, p := range saved {
		_ = pos.Set(w.Spawn(), p)
	}
	fmt.Println(w.Len(), pos.Len())
	// Output: 3 3
}
