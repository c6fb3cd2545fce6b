package tick

import (
	"errors"
	"math"
	"testing"
	"time"
)

func newClock(t *testing.T, hz uint32) *Clock {
	t.Helper()
	c, err := NewClock(hz)
	if err != nil {
		t.Fatalf("NewClock(%d): %v", hz, err)
	}
	return c
}

func TestNewClockInvalid(t *testing.T) {
	c, err := NewClock(0)
	if !errors.Is(err, ErrInvalidRate) || c != nil {
		t.Fatalf("NewClock(0) = %v, %v; want nil, ErrInvalidRate", c, err)
	}
}

func TestClockStepCounts(t *testing.T) {
	tests := []struct {
		name      string
		hz        uint32
		rate      uint32 // 0: leave the default
		increment time.Duration
		total     time.Duration
		want      int
	}{
		{"60Hz 1ms", 60, 0, time.Millisecond, 10 * time.Second, 600},
		{"60Hz 16ms", 60, 0, 16 * time.Millisecond, 10 * time.Second, 600},
		{"60Hz 999ns", 60, 0, 999, 999 * 1_000_000, 59},
		{"60Hz 1.1x slower", 60, 1100, time.Millisecond, 11 * time.Second, 600},
		{"60Hz 0.9x faster", 60, 900, time.Millisecond, 9 * time.Second, 600},
		{"60Hz 1.1x slower 3ms", 60, 1100, 3 * time.Millisecond, 11 * time.Second, 600},
		{"144Hz 1ms", 144, 0, time.Millisecond, 10 * time.Second, 1440},
		{"144Hz 333us", 144, 0, 333 * time.Microsecond, 333 * time.Second, 144 * 333},
		{"7Hz 1ms", 7, 0, time.Millisecond, 10 * time.Second, 70},
		{"1Hz 1ms", 1, 0, time.Millisecond, 5 * time.Second, 5},
		{"1000Hz 1ns", 1000, 0, 1, time.Millisecond, 1},
		{"30Hz 1.5x slower", 30, 1500, time.Millisecond, 3 * time.Second, 60},
		{"1000003Hz 1us", 1000003, 0, time.Microsecond, time.Second, 1000003},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock(t, tt.hz)
			c.SetMaxSteps(math.MaxInt)
			if tt.rate != 0 {
				c.SetRate(tt.rate)
			}
			steps := 0
			for elapsed := time.Duration(0); elapsed < tt.total; elapsed += tt.increment {
				steps += c.Advance(tt.increment)
			}
			if steps != tt.want {
				t.Errorf("steps = %d, want %d", steps, tt.want)
			}
			if c.Dropped() != 0 {
				t.Errorf("Dropped() = %v, want 0", c.Dropped())
			}
		})
	}
}

func TestClockEarlyAndLate(t *testing.T) {
	c := newClock(t, 60)
	// 16666666.67 ns per step: one nanosecond short, then exactly enough.
	if n := c.Advance(16_666_666); n != 0 {
		t.Fatalf("Advance(16666666ns) = %d, want 0", n)
	}
	if n := c.Advance(1); n != 1 {
		t.Fatalf("Advance(1ns) = %d, want 1", n)
	}
	if a := c.Alpha(); a <= 0 || a >= 1e-7 {
		t.Fatalf("Alpha() = %v, want a tiny positive fraction", a)
	}
}

func TestClockMaxSteps(t *testing.T) {
	c := newClock(t, 60)
	if got := c.MaxSteps(); got != DefaultMaxSteps {
		t.Fatalf("MaxSteps() = %d, want %d", got, DefaultMaxSteps)
	}
	if n := c.Advance(time.Second); n != DefaultMaxSteps {
		t.Fatalf("Advance(1s) = %d, want %d", n, DefaultMaxSteps)
	}
	// 52 of the 60 steps were dropped: 52/60 s.
	if got, want := c.Dropped(), time.Duration(866_666_666); got != want {
		t.Fatalf("Dropped() = %v, want %v", got, want)
	}
	if n := c.Advance(time.Second + 8_333_334); n != DefaultMaxSteps {
		t.Fatalf("second Advance = %d, want %d", n, DefaultMaxSteps)
	}
	// Another 52/60 s; the dropped nanosecond fractions add up exactly and
	// the 8333334 ns (a little over half a step) are carried over.
	if got, want := c.Dropped(), time.Duration(1_733_333_333); got != want {
		t.Fatalf("Dropped() = %v, want %v", got, want)
	}
	if a := c.Alpha(); math.Abs(a-0.5) > 1e-7 {
		t.Fatalf("Alpha() = %v, want 0.5", a)
	}
	if n := c.Advance(8_333_333); n != 1 {
		t.Fatalf("Advance(half step) = %d, want 1", n)
	}

	c.SetMaxSteps(100)
	if n := c.Advance(time.Second); n != 60 {
		t.Fatalf("with MaxSteps 100: Advance(1s) = %d, want 60", n)
	}
	c.SetMaxSteps(-3)
	if got := c.MaxSteps(); got != DefaultMaxSteps {
		t.Fatalf("after SetMaxSteps(-3): MaxSteps() = %d, want %d", got, DefaultMaxSteps)
	}

	c.Reset()
	if c.Dropped() != 0 || c.Alpha() != 0 {
		t.Fatalf("after Reset: Dropped() = %v, Alpha() = %v; want 0, 0", c.Dropped(), c.Alpha())
	}
	if n := c.Advance(math.MaxInt64); n != DefaultMaxSteps {
		t.Fatalf("Advance(MaxInt64) = %d, want %d", n, DefaultMaxSteps)
	}
	if d := c.Dropped(); d < math.MaxInt64-time.Second {
		t.Fatalf("Dropped() = %v after a huge Advance", d)
	}
	c.Advance(math.MaxInt64)
	if d := c.Dropped(); d != math.MaxInt64 {
		t.Fatalf("Dropped() = %v, want saturation at MaxInt64", d)
	}
}

func TestClockNegativeElapsed(t *testing.T) {
	c := newClock(t, 60)
	c.Advance(10 * time.Millisecond)
	before := c.Alpha()
	if n := c.Advance(-time.Hour); n != 0 {
		t.Fatalf("Advance(-1h) = %d, want 0", n)
	}
	if c.Alpha() != before {
		t.Fatalf("Advance(-1h) changed Alpha from %v to %v", before, c.Alpha())
	}
}

func TestClockSetRate(t *testing.T) {
	tests := []struct{ set, want uint32 }{
		{1000, 1000},
		{1100, 1100},
		{900, 900},
		{0, MinRate},
		{MinRate - 1, MinRate},
		{MaxRate + 1, MaxRate},
		{math.MaxUint32, MaxRate},
	}
	for _, tt := range tests {
		var c Clock
		c.SetRate(tt.set)
		if got := c.Rate(); got != tt.want {
			t.Errorf("SetRate(%d): Rate() = %d, want %d", tt.set, got, tt.want)
		}
	}
}

func TestClockRateChangeKeepsTime(t *testing.T) {
	c := newClock(t, 10) // 100 ms steps
	c.Advance(90 * time.Millisecond)
	c.SetRate(MinRate) // steps now last 10 ms: 9 are due
	if a := c.Alpha(); a != 1 {
		t.Fatalf("Alpha() = %v, want 1 while steps are due", a)
	}
	if n := c.Advance(0); n != DefaultMaxSteps {
		t.Fatalf("Advance(0) = %d, want %d", n, DefaultMaxSteps)
	}
	if got, want := c.Dropped(), 10*time.Millisecond; got != want {
		t.Fatalf("Dropped() = %v, want %v", got, want)
	}
}

func TestClockZeroValue(t *testing.T) {
	var c Clock
	if c.Hz() != DefaultHz || c.Rate() != 1000 || c.MaxSteps() != DefaultMaxSteps {
		t.Fatalf("zero Clock: Hz %d, Rate %d, MaxSteps %d", c.Hz(), c.Rate(), c.MaxSteps())
	}
	if got, want := c.Step(), time.Duration(16_666_666); got != want {
		t.Fatalf("Step() = %v, want %v", got, want)
	}
	steps := 0
	for range 1000 {
		steps += c.Advance(time.Millisecond)
	}
	if steps != 60 {
		t.Fatalf("zero Clock: %d steps in 1s, want 60", steps)
	}
}

func TestClockStep(t *testing.T) {
	tests := []struct {
		hz   uint32
		want time.Duration
	}{
		{1, time.Second},
		{60, 16_666_666},
		{144, 6_944_444},
		{1_000_000_000, 1},
		{math.MaxUint32, 0},
	}
	for _, tt := range tests {
		if got := newClock(t, tt.hz).Step(); got != tt.want {
			t.Errorf("NewClock(%d).Step() = %d, want %d", tt.hz, got, tt.want)
		}
	}
}
