// Package lagcomp is lag compensation: the server judges a shot against
// the world as the shooting client saw it, not as it is when the shot
// arrives.
//
// A client shows the entities it does not predict in the past, between
// two server ticks (package predict/interp), so a player aims at where a
// target was some 100 ms ago. The server keeps a History of the component
// types a game registers for it (positions, hitboxes) for the last
// Config.Ticks ticks; the client puts what it was showing, a Claim (the
// interpolation tick and fraction), into its input; the server answers
// the input with a View of that moment and runs the game's own hit test
// against it.
//
// The server's frame:
//
//	hist := lagcomp.New(world, lagcomp.Config{})
//	pos, _ := lagcomp.Track(hist, lerpPos)          // once, per type
//	...
//	simulate(t)                                     // each tick
//	hist.Capture(t)                                 // the state clients receive as tick t
//	for _, shot := range shotsOf(t) {
//		v := hist.At(shot.Claim)                    // clamped to the history
//		if p, ok := pos.At(v, target); ok { ... }   // the target as the shooter saw it
//	}
//
// The client renders the interpolated entities at exactly the claim it
// sends: Claim.Fraction is quantized to 1/65536, and the client uses
// Claim.Fraction() for its own interpolation, so both sides evaluate the
// same lerp on the same values and agree bit for bit.
//
// Decisions:
//
//   - A View is read-only: the hit test reads the past through Type.At and
//     Type.Each instead of the World being rewritten and put back.
//     Writing past values into the stores would stamp change ticks (the
//     replication server would send them), run observers, and leave the
//     world wrong if the hit test panics; a View has none of that and
//     costs nothing to make.
//   - An entity that did not exist at the claimed tick is not in the View
//     (a player who spawned since cannot be hit in the past); one that is
//     gone now is still in it (a shot can hit what died since).
//   - Entities the shooter predicts (its own ship, its bullets) are shown
//     at the present on its screen: read them with Type.Present or from
//     the World.
//   - A claim older than the history, or than Config.Ticks, is clamped to
//     the oldest tick held and counted (Stats.Clamped): a cheater cannot
//     shoot into the far past; one newer than the newest capture is
//     clamped to it (Stats.Future).
//   - Captures are column copies (internal/column, the store history
//     snapshot and predict use): an unchanged entity layout is shared
//     between ticks, values are copied at memory speed.
package lagcomp
