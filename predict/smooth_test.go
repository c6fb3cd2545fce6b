package predict_test

import (
	"math"
	"testing"
	"time"

	"github.com/rewindgo/rewind/predict"
)

// Decay does not depend on the frame rate: two 50 ms frames shrink an
// offset as much as one 100 ms frame; the zero Decay halves in 200 ms.
func TestDecayFramerateIndependent(t *testing.T) {
	d := predict.Decay{Period: 100 * time.Millisecond, Ratio: 0.25}
	one := d.Apply(8, 100*time.Millisecond)
	two := d.Apply(d.Apply(8, 50*time.Millisecond), 50*time.Millisecond)
	if math.Abs(one-2) > 1e-12 || math.Abs(two-2) > 1e-12 {
		t.Fatalf("one frame %v, two frames %v; want 2", one, two)
	}
	if got := (predict.Decay{}).Factor(200 * time.Millisecond); math.Abs(got-0.5) > 1e-12 {
		t.Fatalf("default factor after 200ms = %v, want 0.5", got)
	}
	if got := d.Apply(1e-10, time.Millisecond); got != 0 {
		t.Fatalf("tiny offset = %v, want 0", got)
	}
}
