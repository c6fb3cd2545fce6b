package effect_test

import (
	"fmt"

	"github.com/rewindgo/rewind/effect"
	"github.com/rewindgo/rewind/tick"
)

// A shot predicted at tick 10 plays its sound once. A rollback to tick 9
// re-simulates 10 and fires it again: no second sound. A later rollback
// finds the shot never happened (the server says the player was dead):
// the sound is cancelled.
func Example() {
	fx := effect.New(effect.Config[string, string]{
		Play:   func(t tick.Tick, k, s string) { fmt.Println("play", s, "at", t) },
		Cancel: func(t tick.Tick, k, s string) { fmt.Println("stop", s, "of", t) },
	})
	fx.Fire(10, "shot", "bang")
	fx.Rewind(10)
	fx.Fire(10, "shot", "bang")
	fx.Resimulated(12)
	fx.Rewind(10)
	fx.Resimulated(12)
	// Output:
	// play bang at 10
	// stop bang of 10
}
