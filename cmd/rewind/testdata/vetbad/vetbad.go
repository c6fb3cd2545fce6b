// Package vetbad is a deliberately broken simulation for the test of
// "rewind vet": its runner.Step iterates a map, reads the wall clock and
// the global generator, and counts frames in a package-level variable.
package vetbad

import (
	"math/rand/v2"
	"time"

	"github.com/rewindgo/rewind/rollback/runner"
)

// Score is the game state of the broken example.
type Score struct {
	ByPlayer map[int]int
	Total    int
	Last     time.Time
}

var frames int

// Step is the broken runner.Step.
func (s *Score) Step(ctx *runner.Context) {
	for p, v := range s.ByPlayer {
		s.Total += p * v
	}
	s.Last = time.Now()
	s.Total += rand.IntN(6)
	frames++
}

// Config wires Step into a runner.
func (s *Score) Config() runner.Config { return runner.Config{Step: s.Step} }
