// Command rewind-vet is rewind's determinism analyzer as a go vet tool:
//
//	go install github.com/rewindgo/rewind/cmd/rewind-vet
//	go vet -vettool=$(which rewind-vet) ./...
//
// It checks simulation code (runner.Step functions, the sims of
// predict.Timeline.Step, ClientFrame.Frame and ServerFrame.Frame,
// functions marked //rewind:sim, and what they call in the same module)
// for map iteration, wall-clock time, global random generators, goroutines,
// channels, unsafe, pointer addresses and package-level writes. The flag
// -simcheck.float adds notes on float x*y+z that Go may fuse into one FMA
// instruction. "rewind vet" runs the same analyzer without go vet.
package main

import (
	"github.com/rewindgo/rewind/cmd/internal/simcheck"
	"golang.org/x/tools/go/analysis/unitchecker"
)

func main() { unitchecker.Main(simcheck.New()) }
