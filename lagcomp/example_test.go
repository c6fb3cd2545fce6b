package lagcomp_test

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/tick"
)

// A target moves one unit a tick; a client showing tick 7 and a half
// fires. The server, at tick 12, judges the shot where the client saw
// the target.
func Example() {
	w := ecs.New()
	pos := ecs.Register[Pos](w)
	hist := lagcomp.New(w, lagcomp.Config{})
	tracked, _ := lagcomp.Track(hist, lerpPos)

	target := w.Spawn()
	for t := tick.Tick(0); t <= 12; t++ {
		_ = pos.Set(target, Pos{X: float64(t)})
		hist.Capture(t)
	}
	claim := lagcomp.NewClaim(7, 0.5) // in the client's input
	seen, _ := tracked.At(hist.At(claim), target)
	now, _ := tracked.Present(target)
	fmt.Printf("shooter saw the target at x=%v; it is at x=%v now\n", seen.X, now.X)
	// Output: shooter saw the target at x=7.5; it is at x=12 now
}
