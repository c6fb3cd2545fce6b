// Package nodisplay stops the box game with a message, instead of
// Ebitengine's panic, when there is no X display to open a window on.
//
// Ebitengine initialises its window system in a package init function and
// panics when that fails ("glfw: The DISPLAY environment variable is
// missing"), before main runs, even for --help. Go initialises packages
// in the order of their import paths among those whose imports are
// initialised: this package's path sorts before github.com/... and it
// imports only os and runtime, which Ebitengine imports too, so its init
// runs first. It is a module of its own (boxgame.local/nodisplay, replaced
// by this directory in examples/go.mod) for that path.
package nodisplay

import (
	"os"
	"runtime"
)

func init() {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
	default:
		return
	}
	if os.Getenv("DISPLAY") != "" {
		return
	}
	os.Stderr.WriteString("boxgame: no display (DISPLAY is not set): Ebitengine needs an X display to start, even for --help.\n" +
		"On a machine without one, run it under Xvfb: xvfb-run -a boxgame --help\n")
	os.Exit(2)
}
