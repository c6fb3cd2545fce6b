// Package effect keeps the presentation effects of a rolled-back
// simulation honest: sounds, particles and hit markers that predicted (or
// P2P-rollback) code triggers play once, when first simulated; a rollback
// that re-simulates a tick identically does not play them again; one
// whose re-simulation no longer fires them cancels them; one that fires
// an effect only in the re-simulation plays it then; and once a tick can
// no longer be rolled back, its effects are confirmed.
//
// The simulation fires an effect with a key that names it within its
// tick (an entity and a kind, say): the same key at the same tick in a
// re-simulation is the same effect. The game plays, cancels and confirms
// effects in callbacks:
//
//	fx := effect.New(effect.Config[Key, Sound]{
//		Play:   func(t tick.Tick, k Key, s Sound) { audio.Start(k, s) },
//		Cancel: func(t tick.Tick, k Key, s Sound) { audio.Stop(k) },
//	})
//	timeline.AddEffects(fx)                   // package predict (or runner.Config.Effects)
//	...
//	fx.Fire(t, Key{ship, Shot}, shotSound)    // inside the simulation of tick t
//
// The owner of the rollbacks drives a Tracker through three calls
// (predict.Timeline and rollback/runner.Runner make them): Rewind(from)
// when a rollback is about to re-simulate ticks from on, Resimulated(to)
// when it has re-simulated them up to to, and Confirm(to) when ticks up
// to to are final.
//
// A Tracker holds the effects of the ticks that may still be rolled
// back, in the order they were fired, and looks a key up among its
// tick's effects only: no maps are iterated, the callbacks come in a
// deterministic order (Cancel in the order the effects were fired).
// An "in rollback" flag alone (what other libraries offer) cannot tell a
// re-fired effect from a new one, nor cancel one a rollback removed.
package effect
