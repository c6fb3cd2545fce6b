package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoDisplay: without an X display, "boxgame --help" (or any run)
// exits 2 with a message that says what is missing and how to run it
// under Xvfb, instead of Ebitengine's panic in glfw.
func TestNoDisplay(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "boxgame")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--help")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "DISPLAY=") })
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "boxgame: no display (DISPLAY is not set)") ||
		!strings.Contains(string(out), "xvfb-run -a boxgame --help") || strings.Contains(string(out), "panic") {
		t.Errorf("boxgame --help without DISPLAY: %v, output:\n%s", err, out)
	}
}
