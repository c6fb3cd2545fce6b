// Package nodisplay stops an Ebitengine example (the box game, the arena)
// with a message, instead of Ebitengine's panic, when there is no X
// display to open a window on.
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
	name, cmd := program()
	os.Stderr.WriteString(name + ": no display (DISPLAY is not set): Ebitengine needs an X display to start, even for --help.\n" +
		"On a machine without one, run it under Xvfb: xvfb-run -a " + cmd + "\n")
	os.Exit(2)
}

// program returns the program's name (the base name of os.Args[0]) and
// the command line to suggest: the name and its arguments, or "--help"
// when there are none. It uses no package but os, for the init order.
func program() (name, cmd string) {
	name = "program"
	if len(os.Args) > 0 {
		name = os.Args[0]
		for i := len(name) - 1; i >= 0; i-- {
			if name[i] == '/' {
				name = name[i+1:]
				break
			}
		}
	}
	cmd = name
	args := os.Args[min(1, len(os.Args)):]
	if len(args) == 0 {
		args = []string{"--help"}
	}
	for _, a := range args {
		cmd += " " + a
	}
	return name, cmd
}
