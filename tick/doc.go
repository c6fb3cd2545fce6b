// Package tick provides wrap-safe frame counters and deterministic time for
// fixed-timestep simulations.
//
// A [Tick] numbers simulation frames. It is 32 bits wide and wraps around, so
// ticks are compared with the wrap-safe methods ([Tick.Before], [Tick.Sub],
// ...) rather than with < and -. Those comparisons are valid while the two
// ticks are less than 2^31 frames apart, which at 60 Hz is more than a year.
// [Expand16] and [Expand8] rebuild a full tick from the low bits sent on the
// wire.
//
// A [Clock] turns the wall time elapsed between rendered frames, which the
// caller measures and passes in, into a whole number of fixed simulation steps
// to run. It can slow down or speed up the simulation by a rate factor, which is
// how a peer that runs ahead of the others lets them catch up.
//
// [Elapsed], [Delta] and [Time] derive game time from the frame number alone.
//
// # Determinism
//
// The package never reads the wall clock, holds no global state, starts no
// goroutines and uses integer arithmetic for every result a simulation may
// depend on: the same inputs give the same outputs on every machine and Go
// version. Simulation code should take its time from [Elapsed] or [Delta] of
// the current frame, never from the wall clock. The float results
// ([Clock.Alpha], [Time.Seconds]) are meant for rendering and display only.
package tick
