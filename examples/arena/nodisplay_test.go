//go:build !js

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoDisplay: without an X display, "arena server" (the same program
// as the client, so Ebitengine starts with it) exits 2 with a message
// that says what is missing and gives the command to run under Xvfb,
// instead of Ebitengine's panic in glfw.
func TestNoDisplay(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "arena")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "server", "--listen", ":7777")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "DISPLAY=") })
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "arena: no display (DISPLAY is not set)") ||
		!strings.Contains(string(out), "xvfb-run -a arena server --listen :7777") || strings.Contains(string(out), "panic") {
		t.Errorf("arena server without DISPLAY: %v, output:\n%s", err, out)
	}
}
