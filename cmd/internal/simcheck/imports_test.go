package simcheck_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryDoesNotImportTools: x/tools is in the root go.mod for the
// commands only; no package a game imports (anything outside cmd/) may
// depend on it.
func TestLibraryDoesNotImportTools(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/rewindgo/rewind/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		if strings.HasPrefix(pkg, "github.com/rewindgo/rewind/cmd/") {
			continue
		}
		n++
		if strings.Contains(" "+deps+" ", " golang.org/x/tools/") {
			t.Errorf("library package %s depends on golang.org/x/tools", pkg)
		}
	}
	if n < 20 {
		t.Fatalf("only %d library packages listed:\n%s", n, out)
	}
}
