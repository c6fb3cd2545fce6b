//go:build race

package replicate_test

// raceEnabled: the race detector is on (tests size their load down).
const raceEnabled = true
