package interest_test

import (
	"errors"
	"math"
	"testing"

	"github.com/rewindgo/rewind/interest"
)

// TestGridConfig: zero fields take the documented defaults; negative,
// infinite and NaN ones are refused.
func TestGridConfig(t *testing.T) {
	g, err := interest.NewGrid(interest.GridConfig{})
	if err != nil {
		t.Fatal(err)
	}
	want := interest.GridConfig{Radius: interest.DefaultRadius, Margin: interest.DefaultRadius * interest.DefaultMarginFraction, CellSize: interest.DefaultRadius}
	if got := g.Config(); got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	g, _ = interest.NewGrid(interest.GridConfig{Radius: 40})
	if got := g.Config(); got.Margin != 4 || got.CellSize != 40 {
		t.Fatalf("defaults from Radius 40: %+v", got)
	}
	for _, bad := range []interest.GridConfig{{Radius: -1}, {Margin: math.Inf(1)}, {CellSize: math.NaN()}} {
		if _, err := interest.NewGrid(bad); !errors.Is(err, interest.ErrConfig) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
