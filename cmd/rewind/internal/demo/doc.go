// Package demo is the small deterministic game that cmd/rewind runs to show
// rollback netcode at work, and that tests use as a realistic workload.
//
// Each player steers a ship (Position, Velocity and Player components, all
// fixed-point so the simulation is bit-identical on every machine) and fires
// short-lived projectiles that are spawned and despawned as the game runs,
// so rollbacks exercise entity creation and removal. NPCs wander using the
// world's rng.Rand resource; a projectile that hits one scores a point for
// its owner (the Score resource) and sends the NPC elsewhere. Every type is
// registered with the copy strategy of package snapshot.
//
// Inputs are InputSize bytes per player: a bitmask of buttons and an aim
// direction. Bot produces them deterministically from (seed, frame, player),
// holding keys for several frames like a human would, so remote inputs
// change now and then and predictions are sometimes wrong.
//
// Game.Step is a runner.Step; Game.NewRunner wires a Game, a rollback
// session and the bots into a runner.Runner.
package demo
