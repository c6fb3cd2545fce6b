//go:build !race

package replicate_test

// lateJoinEntities is the world size of TestLateJoinLargeWorld.
const lateJoinEntities = 100_000
