package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/rewindgo/rewind/cmd/internal/simcheck"
	"golang.org/x/tools/go/analysis/unitchecker"
)

func vetFlags() (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("vet", flag.ContinueOnError)
	float := fs.Bool("float", false, "also note float x*y+z in simulation code, which Go may fuse into one FMA instruction on arm64, ppc64le, s390x, riscv64 and amd64 GOAMD64=v3")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: rewind vet [flags] [packages]

Checks the simulation code of the packages (default ".") for what breaks
determinism: range over maps, wall-clock time, global random generators,
goroutines, channels and select, unsafe, pointer addresses, writes to
package-level variables. Simulation code is every runner.Step, the sim of
predict's Timeline.Step, ClientFrame.Frame and ServerFrame.Frame, every
function marked //rewind:sim, and what they call in the same module.
Each finding says why and what to use instead; a line that is
deliberately outside the rules carries //rewind:ok and a reason.
Exit status 1 when there are findings. It runs "go vet" with this
program as the vet tool (cmd/rewind-vet is the same analyzer for
"go vet -vettool").

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, float
}

// vetCommand runs go vet with this executable as the vet tool.
func vetCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, float := vetFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	vargs := []string{"vet", "-vettool=" + self}
	if *float {
		vargs = append(vargs, "-simcheck.float")
	}
	pkgs := fs.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	cmd := exec.CommandContext(ctx, "go", append(vargs, pkgs...)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return errFailed // go vet printed the findings (or why it could not run)
		}
		return err
	}
	return nil
}

// isVetTool reports whether go vet runs this program as its vet tool
// (-V=full, -flags, or analyzer flags followed by a vet.cfg file).
func isVetTool(args []string) bool {
	if len(args) == 1 && (args[0] == "-V=full" || args[0] == "-flags") {
		return true
	}
	if len(args) == 0 || !strings.HasSuffix(args[len(args)-1], ".cfg") {
		return false
	}
	for _, a := range args[:len(args)-1] {
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

// vetTool runs the analyzer for go vet; it exits.
func vetTool() { unitchecker.Main(simcheck.New()) }
