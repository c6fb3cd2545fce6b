//go:build race

package main

// raceEnabled: the race detector is on. It slows every demo loop several
// times, so TestMain runs the real-time tests GOMAXPROCS at a time (the
// default of -parallel) rather than all at once: side by side, the loops
// starve each other of CPU, and the demos take their stalls for network
// outages.
const raceEnabled = true
