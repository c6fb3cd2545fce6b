package runner_test

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
)

// A Runner drives a SyncTest session on a tiny world: one entity whose
// position each player's input pushes. Every frame the session loads the
// state two frames back and re-simulates, and the runner reports the
// checksums of the re-saved frames, which must match the first ones.
func Example() {
	type Position struct{ X, Y int64 }

	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := snapshot.Copy[Position](reg); err != nil {
		fmt.Println(err)
		return
	}
	pos := ecs.StoreOf[Position](w)
	ball := w.Spawn()
	_ = pos.Set(ball, Position{})

	sess, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 2, CheckDistance: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	frame := 0
	r, err := runner.New(runner.Config{
		World: w, Registry: reg, Session: sess,
		// Player 0 pushes right, player 1 down every third frame.
		ReadInput: func(h rollback.PlayerHandle) []byte {
			if h == 1 && frame%3 != 0 {
				return []byte{0}
			}
			return []byte{1}
		},
		Step: func(ctx *runner.Context) {
			p := pos.Ptr(ball)
			p.X += int64(ctx.Inputs[0].Bytes[0])
			p.Y += int64(ctx.Inputs[1].Bytes[0])
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ; frame < 60; frame++ {
		if err := r.RunFrame(); err != nil {
			fmt.Println(err)
			return
		}
	}
	p, _ := pos.Get(ball)
	fmt.Println("frame", r.Frame(), "position", p.X, p.Y)
	fmt.Println("rollbacks", r.Loads(), "frames simulated", r.Frames(), "checksums compared", sess.Checked())
	// Output:
	// frame 60 position 60 20
	// rollbacks 57 frames simulated 174 checksums compared 57
}
