package runner_test

import (
	"errors"
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
)

// A SyncTest catches a simulation that reads state from outside the world
// (here a counter of its own calls): the Runner keeps dumps of the frames
// by default with SyncTest, so the error names the entity, the field and
// the value of the first simulation and of the re-simulation. In a P2P
// match, Config.Dumps and Runner.Dump(ev.Frame, ev.Types) give each peer's
// side of an EventDesyncDetected, for snapshot.WriteDumpFile and
// "rewind diff".
func ExampleDesyncError() {
	type Position struct{ X, Y int64 }
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	_ = snapshot.Copy[Position](reg)
	pos := ecs.StoreOf[Position](w)
	_ = pos.Set(w.Spawn(), Position{})
	ball := w.Spawn()
	_ = pos.Set(ball, Position{})

	sess, _ := rollback.NewSyncTest(rollback.Config{NumPlayers: 1, CheckDistance: 2})
	calls := 0 // not state: a bug on purpose
	r, _ := runner.New(runner.Config{World: w, Registry: reg, Session: sess,
		ReadInput: func(rollback.PlayerHandle) []byte { return nil },
		Step: func(ctx *runner.Context) {
			calls++
			p := pos.Ptr(ball)
			p.X++
			p.Y = int64(calls % 3)
		}})
	for {
		err := r.RunFrame()
		var de *runner.DesyncError
		if errors.As(err, &de) {
			d := de.Diffs[0]
			fmt.Printf("frame %d: entity %v %s: %s, re-simulated %s\n", de.Mismatch.Frame, d.Entity, d.Field, d.A, d.B)
			return
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// frame 2: entity 1v1 .Y: 2, re-simulated 1
}
