//go:build !unix

package replicate_test

import "time"

// cpuTime is not measured here: tests that compare CPU costs skip the
// comparison when it stays 0.
func cpuTime() time.Duration { return 0 }
