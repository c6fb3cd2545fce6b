package tick

import (
	"math"
	"testing"
	"time"
)

func TestElapsed(t *testing.T) {
	tests := []struct {
		frame Tick
		hz    uint32
		want  time.Duration
	}{
		{0, 60, 0},
		{1, 60, 16_666_666},
		{2, 60, 33_333_333},
		{3, 60, 50_000_000},
		{60, 60, time.Second},
		{144, 144, time.Second},
		{1, 144, 6_944_444},
		{7, 3, 2_333_333_333},
		{math.MaxUint32, 60, 71_582_788_250_000_000},
		{math.MaxUint32, 1, math.MaxUint32 * time.Second},
		{math.MaxUint32, math.MaxUint32, time.Second},
		{5, 0, 0},
	}
	for _, tt := range tests {
		if got := Elapsed(tt.frame, tt.hz); got != tt.want {
			t.Errorf("Elapsed(%d, %d) = %d, want %d", tt.frame, tt.hz, got, tt.want)
		}
		if got := (Time{tt.frame, tt.hz}).Elapsed(); got != tt.want {
			t.Errorf("Time{%d, %d}.Elapsed() = %d, want %d", tt.frame, tt.hz, got, tt.want)
		}
	}
}

func TestDeltaSumsToOneSecond(t *testing.T) {
	for _, hz := range []uint32{1, 3, 7, 30, 60, 120, 144, 240, 1000, 999_983} {
		for _, start := range []Tick{0, 1, 59, 1 << 31, math.MaxUint32 - Tick(hz) + 1} {
			var sum time.Duration
			lo, hi := time.Second/time.Duration(hz), (time.Second+time.Duration(hz)-1)/time.Duration(hz)
			for i := range hz {
				d := Delta(start+Tick(i), hz)
				if d < lo || d > hi {
					t.Fatalf("Delta(%d, %d) = %d, want in [%d, %d]", start+Tick(i), hz, d, lo, hi)
				}
				sum += d
			}
			if sum != time.Second {
				t.Errorf("hz %d from frame %d: sum of %d deltas = %v, want 1s", hz, start, hz, sum)
			}
		}
	}
}

func TestDelta(t *testing.T) {
	tests := []struct {
		frame Tick
		hz    uint32
		want  time.Duration
	}{
		{0, 60, 16_666_666},
		{1, 60, 16_666_667},
		{2, 60, 16_666_667},
		{0, 1, time.Second},
		{math.MaxUint32, 1, time.Second},
		{math.MaxUint32, 60, 16_666_666},
		{0, math.MaxUint32, 0},
		{math.MaxUint32 - 1, math.MaxUint32, 1},
		{9, 0, 0},
	}
	for _, tt := range tests {
		if got := Delta(tt.frame, tt.hz); got != tt.want {
			t.Errorf("Delta(%d, %d) = %d, want %d", tt.frame, tt.hz, got, tt.want)
		}
		if got := (Time{tt.frame, tt.hz}).Delta(); got != tt.want {
			t.Errorf("Time{%d, %d}.Delta() = %d, want %d", tt.frame, tt.hz, got, tt.want)
		}
	}
}

func TestTimeSeconds(t *testing.T) {
	if got := (Time{Frame: 90, Hz: 60}).Seconds(); got != 1.5 {
		t.Fatalf("Seconds() = %v, want 1.5", got)
	}
}
