package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestVetCommand runs "rewind vet" (this test binary as the command, and
// as go vet's tool) on a deliberately broken simulation and on the demo
// game: the first fails with each finding at its line, the second passes.
func TestVetCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	vet := func(pkg string) (string, int) {
		cmd := exec.Command(self, "vet", pkg)
		cmd.Env = append(os.Environ(), asRewind+"=1")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := vet("./testdata/vetbad")
	if code != 1 {
		t.Fatalf("rewind vet on the broken example: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"vetbad.go:24:2: range over a map",
		"vetbad.go:27:11: time.Now",
		"vetbad.go:28:13: math/rand/v2.IntN",
		"vetbad.go:29:2: write to package-level variable frames",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "[sim code:"); n != 4 {
		t.Errorf("%d findings, want 4:\n%s", n, out)
	}
	if out, code := vet("./internal/demo"); code != 0 {
		t.Errorf("rewind vet on the demo game: exit %d, want 0\n%s", code, out)
	}
}
