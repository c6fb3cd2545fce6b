package simcheck_test

import (
	"testing"

	"github.com/rewindgo/rewind/cmd/internal/simcheck"
	"golang.org/x/tools/go/analysis/analysistest"
)

func TestBad(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), simcheck.New(), "./examples/bad")
}

func TestGood(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), simcheck.New(), "./examples/good")
}

// TestFloat: the FMA note appears with -float only.
func TestFloat(t *testing.T) {
	a := simcheck.New()
	if err := a.Flags.Set("float", "true"); err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, analysistest.TestData(), a, "./examples/floats")
}
