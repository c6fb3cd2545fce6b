// Package timeq is the timer-driven event queue of the simulated networks
// of package transport (Network, Proxy, MemoryNetwork): values wait in a
// min-heap ordered by (due time, push order), so the order they come out
// in is a pure function of what was pushed when, never of goroutine
// timing; one time.AfterFunc timer, re-armed for the earliest value, wakes
// the owner. Times are durations since the queue's epoch, read from the
// monotonic clock, which testing/synctest virtualises.
//
// Nothing here locks: the owner guards the queue, including inside the
// timer callback.
package timeq
