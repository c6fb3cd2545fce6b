// Package rng provides a random number generator whose state lives in the
// game world, so that a rollback restores it along with everything else.
//
// A [Rand] is plain data: two uint64 words and nothing else, no pointers or
// slices. Copying the value (plain assignment, or a byte copy of the struct)
// takes a snapshot; the copy continues with exactly the same sequence as the
// original. The state marshals to a small versioned binary form
// ([Rand.MarshalBinary]) for checksums and the wire.
//
// The generator is PCG-DXSM with 128 bits of state: a 128-bit linear
// congruential generator whose output goes through the "double xorshift
// multiply" permutation. It is the algorithm of [math/rand/v2.PCG], and a
// Rand made with [New] gives the same Uint64 sequence as a PCG made with the
// same seeds.
//
// # Determinism
//
// Every method is implemented in this package with integer arithmetic, on top
// of [Rand.Uint64]: the bounded integers (unbiased, by Lemire's multiply-shift
// method with rejection), the floats, the shuffles and permutations. The
// sequence for a given seed is therefore the same on every machine and does not
// change with the Go version; golden tests pin it. The package has no global
// generator, never reads the clock and starts no goroutines: a simulation that
// draws only from the Rand in its world replays exactly.
//
// Give each independent consumer its own stream with [Stream] (for example one
// per entity, keyed by the entity's id) or [Rand.Derive], so that the order in
// which systems run cannot change what another system draws.
//
// Methods that take a bound return 0 (or do nothing) for a bound <= 0 rather
// than panicking.
package rng
