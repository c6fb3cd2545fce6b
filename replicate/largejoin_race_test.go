//go:build race

package replicate_test

// lateJoinEntities is the world size of TestLateJoinLargeWorld: smaller
// under the race detector, which slows the test about tenfold, and still
// a first update over the 1 MiB message limit.
const lateJoinEntities = 40_000
