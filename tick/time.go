package tick

import "time"

// Elapsed returns the game time at the start of frame, for a simulation that
// runs hz frames per second: floor(frame*1e9/hz) nanoseconds, computed exactly
// for every frame. Frame 0 starts at 0; the result does not wrap with the
// frame number. Elapsed returns 0 if hz is 0.
func Elapsed(frame Tick, hz uint32) time.Duration {
	if hz == 0 {
		return 0
	}
	// frame*1e9 < 2^32*1e9 < 2^63: no overflow.
	return time.Duration(uint64(frame) * uint64(time.Second) / uint64(hz))
}

// Delta returns the duration of frame: Elapsed(frame+1, hz) - Elapsed(frame, hz),
// where frame+1 does not wrap. Deltas differ by at most one nanosecond, and
// any hz consecutive deltas sum to exactly one second. Delta returns 0 if hz
// is 0.
func Delta(frame Tick, hz uint32) time.Duration {
	if hz == 0 {
		return 0
	}
	f, h := uint64(frame), uint64(hz)
	return time.Duration(((f+1)*uint64(time.Second))/h - (f*uint64(time.Second))/h)
}

// Time is the deterministic game time of a frame in a simulation that runs
// Hz frames per second.
type Time struct {
	Frame Tick
	Hz    uint32
}

// Elapsed returns Elapsed(t.Frame, t.Hz).
func (t Time) Elapsed() time.Duration { return Elapsed(t.Frame, t.Hz) }

// Delta returns Delta(t.Frame, t.Hz).
func (t Time) Delta() time.Duration { return Delta(t.Frame, t.Hz) }

// Seconds returns t.Elapsed() in seconds as a float, for display only.
func (t Time) Seconds() float64 { return t.Elapsed().Seconds() }
