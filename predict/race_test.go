//go:build race

package predict_test

// raceEnabled: the race detector is on (real-time tests skip their
// timing figures: the detector slows the loop several times).
const raceEnabled = true
