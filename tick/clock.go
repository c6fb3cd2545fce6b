package tick

import (
	"math"
	"math/bits"
	"time"
)

const (
	// DefaultHz is the tick rate of the zero Clock.
	DefaultHz = 60
	// DefaultMaxSteps is the default cap on the steps one call to
	// [Clock.Advance] returns.
	DefaultMaxSteps = 8
	// MinRate and MaxRate bound the rate factor of a Clock, in thousandths:
	// from 10 times faster than real time to 10 times slower.
	MinRate = 100
	MaxRate = 10000
)

// A Clock is a fixed-timestep accumulator. Each rendered frame, the caller
// passes the wall time elapsed since the previous one to [Clock.Advance], which
// returns how many fixed simulation steps to run now.
//
// The accumulator is an integer count of 1/hz nanoseconds, in which one step
// lasts exactly 1e6*rate units, where rate is the rate factor in thousandths.
// No time is lost to rounding: at rate 1000, hz steps are due after exactly
// one second of elapsed time, however the second is split into calls.
//
// The zero Clock runs at [DefaultHz] in real time with [DefaultMaxSteps]. A
// Clock is not safe for concurrent use.
type Clock struct {
	hz       uint32
	rate     uint32 // thousandths; 0 means 1000
	maxSteps int    // 0 means DefaultMaxSteps
	acc      uint64 // accumulated time in 1/hz ns
	dropped  time.Duration
	dropRem  uint64 // dropped time below 1 ns, in 1/hz ns
}

// NewClock returns a Clock that runs hz steps per second of elapsed time, in
// real time, with [DefaultMaxSteps]. It returns [ErrInvalidRate] if hz is 0.
func NewClock(hz uint32) (*Clock, error) {
	if hz == 0 {
		return nil, ErrInvalidRate
	}
	return &Clock{hz: hz}, nil
}

func (c *Clock) freq() uint64 {
	if c.hz == 0 {
		return DefaultHz
	}
	return uint64(c.hz)
}

// stepCost returns the length of one step in 1/hz ns.
func (c *Clock) stepCost() uint64 { return 1e6 * uint64(c.Rate()) }

// Hz returns the nominal number of steps per second.
func (c *Clock) Hz() uint32 { return uint32(c.freq()) }

// Step returns the nominal duration of one step, 1e9/hz nanoseconds rounded
// down. The clock itself keeps the remainder, see [Clock].
func (c *Clock) Step() time.Duration { return time.Duration(uint64(time.Second) / c.freq()) }

// SetMaxSteps sets the largest number of steps one call to [Clock.Advance]
// returns. If n <= 0, the cap returns to [DefaultMaxSteps].
func (c *Clock) SetMaxSteps(n int) { c.maxSteps = max(n, 0) }

// MaxSteps returns the largest number of steps one call to [Clock.Advance]
// returns.
func (c *Clock) MaxSteps() int {
	if c.maxSteps == 0 {
		return DefaultMaxSteps
	}
	return c.maxSteps
}

// SetRate sets the rate factor in thousandths: at 1000 the simulation runs in
// real time; at 1100 every step takes 1.1 times as long, so the simulation runs
// slower (a peer that is ahead does this to let the others catch up); at 900
// it runs faster. Values outside [MinRate, MaxRate] are clamped to that range.
// Time accumulated so far is kept and counts at the new rate.
func (c *Clock) SetRate(permille uint32) { c.rate = min(max(permille, MinRate), MaxRate) }

// Rate returns the rate factor in thousandths.
func (c *Clock) Rate() uint32 {
	if c.rate == 0 {
		return 1000
	}
	return c.rate
}

// Advance adds elapsed wall time, measured by the caller, and returns how
// many steps to run now. Negative elapsed time counts as zero. If more than
// [Clock.MaxSteps] steps are due, Advance returns MaxSteps and drops the time
// of the excess whole steps, so that a slow machine does not fall ever further
// behind; [Clock.Dropped] counts that time. Less than a step of time is always
// carried over to the next call.
func (c *Clock) Advance(elapsed time.Duration) int {
	hz, cost, maxSteps := c.freq(), c.stepCost(), uint64(c.MaxSteps())
	// total = acc + elapsed*hz, in 1/hz ns.
	hi, lo := bits.Mul64(uint64(max(elapsed, 0)), hz)
	lo, carry := bits.Add64(lo, c.acc, 0)
	hi += carry
	if hi < cost {
		if q, r := bits.Div64(hi, lo, cost); q <= maxSteps {
			c.acc = r
			return int(q)
		}
	}
	// Capped: run maxSteps, carry the remainder, drop the rest.
	_, r := bits.Div64(hi%cost, lo, cost)
	keepHi, keepLo := bits.Mul64(maxSteps, cost)
	keepLo, carry = bits.Add64(keepLo, r, 0)
	keepHi += carry
	lo, borrow := bits.Sub64(lo, keepLo, 0)
	hi, _ = bits.Sub64(hi, keepHi, borrow)
	lo, carry = bits.Add64(lo, c.dropRem, 0)
	hi += carry
	// The dropped time is at most elapsed plus the carried-over time, far
	// below 2^64 ns, so hi < hz.
	ns, rem := bits.Div64(hi, lo, hz)
	c.dropRem = rem
	if ns > uint64(math.MaxInt64-c.dropped) {
		c.dropped = math.MaxInt64
	} else {
		c.dropped += time.Duration(ns)
	}
	c.acc = r
	return int(maxSteps)
}

// Dropped returns the total elapsed time that [Clock.Advance] has dropped
// because more than [Clock.MaxSteps] steps were due, rounded down to a
// nanosecond.
func (c *Clock) Dropped() time.Duration { return c.dropped }

// Alpha returns how far the clock is into the next step, as a fraction in
// [0, 1]. It is meant for interpolating the rendered state between the last two
// simulated steps; simulation code must not depend on it.
func (c *Clock) Alpha() float64 {
	return min(float64(c.acc)/float64(c.stepCost()), 1)
}

// Reset clears the accumulated and the dropped time. The tick rate, rate
// factor and step cap are kept.
func (c *Clock) Reset() {
	c.acc, c.dropped, c.dropRem = 0, 0, 0
}
