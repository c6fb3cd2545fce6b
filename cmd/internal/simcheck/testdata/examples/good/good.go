// Package good is deterministic simulation code.
package good

import (
	"maps"
	"slices"
	"time"

	"github.com/rewindgo/rewind/examples/helper"
	"github.com/rewindgo/rewind/rollback/runner"
)

type state struct {
	scores map[int]int
	order  []int
	total  int
}

// Step is deterministic: sorted keys, state in the world, no clock.
func (s *state) Step(ctx *runner.Context) {
	for _, k := range slices.Sorted(maps.Keys(s.scores)) {
		s.total += s.scores[k]
	}
	for _, id := range s.order {
		s.total += id
	}
	local := 0
	local++
	s.total += helper.Pure(local, ctx.Frame)
	_ = time.Duration(ctx.Frame) * time.Second / 60 // time from the frame
}

// wallClock is not simulation code: reading the clock here is fine.
func wallClock() time.Time { return time.Now() } // want wallClock:"sim findings"

func setup() { // want setup:"sim findings"
	s := &state{}
	runner.New(runner.Config{Step: s.Step, Other: func(*runner.Context) { _ = wallClock() }})
}
