package predict

// Despawn markers: a predicted despawn keeps the entity for the window,
// so that a rollback can revive it.

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// Despawn puts a despawn marker on e at the tick T being simulated (or
// Now outside Step): e's predicted components are removed at once, but e
// keeps its identity and its history, so a rollback to an earlier tick
// revives it; e is despawned from the World once the marker's tick leaves
// the window W: at the end of the Step that simulates tick T+W+1 (the
// World entity is still alive, without predicted components, at the end
// of ticks T .. T+W, and Alive is false from the end of T+W+1 on). Called
// from the simulation, the marker is part of the predicted state (a
// rollback before it drops it, and the re-simulation makes it again if it
// still happens); called outside Step, it is an external change at Now,
// like DespawnAt.
func (tl *Timeline) Despawn(e ecs.Entity) error {
	if !tl.w.Alive(e) {
		return fmt.Errorf("%w: %v", ecs.ErrNotAlive, e)
	}
	if tl.inStep {
		tl.mark(e, tl.cur)
		return nil
	}
	return tl.DespawnAt(e, tl.now)
}

// DespawnAt records that e was despawned at tick t (a server despawn from
// replication, or a game change): from the end of t on, e has none of its
// predicted components, in the current state and in every re-simulation
// through t. It puts a despawn marker on e (see Despawn). A despawn older
// than the window is a range fault: it applies at the oldest tick held,
// which the next Step rolls back to, so that no tick of the history holds
// e's predicted components any more (the server had despawned it). A
// despawn in the past requests a rollback to t, unless the current state
// already has e despawned at t by the simulation (a predicted despawn,
// Despawn from Step, at the same tick): the rollback would change
// nothing.
func (tl *Timeline) DespawnAt(e ecs.Entity, t tick.Tick) error {
	w, err := tl.where(t)
	if err != nil {
		return err
	}
	if w == wOld { // at the oldest tick held (a range fault, counted by where)
		t, w, _ = tl.oldest()
	}
	if w == wNow {
		tl.mark(e, t)
	}
	in := tl.info(t)
	in.despawns = append(in.despawns, e)
	if w == wPast && tl.markedAt(e, t) {
		// The simulation despawned e at t (Despawn): the predicted state
		// already holds the despawn, a rollback would change nothing.
		return nil
	}
	tl.noted(t, w, false)
	return nil
}

// markedAt reports whether e carries a despawn marker of tick t in the
// current state.
func (tl *Timeline) markedAt(e ecs.Entity, t tick.Tick) bool {
	for _, m := range tl.markers {
		if m.e == e && m.t == t {
			return true
		}
	}
	return false
}

// Despawned reports whether e carries a despawn marker in the current state.
func (tl *Timeline) Despawned(e ecs.Entity) bool {
	for _, m := range tl.markers {
		if m.e == e {
			return true
		}
	}
	return false
}

// mark removes e's predicted components and marks it, unless marked.
func (tl *Timeline) mark(e ecs.Entity, t tick.Tick) {
	if !tl.w.Alive(e) {
		tl.stats.Dropped++
		return
	}
	for _, h := range tl.types {
		h.drop(e)
	}
	if !tl.Despawned(e) {
		tl.markers = append(tl.markers, marker{e: e, t: t})
	}
}

// despawnMarked despawns from the World the entities whose despawn
// marker is before t, and forgets the markers.
func (tl *Timeline) despawnMarked(t tick.Tick) {
	k := 0
	for _, m := range tl.markers {
		if m.t.Before(t) {
			if tl.w.Alive(m.e) {
				_ = tl.w.Despawn(m.e)
			}
			continue
		}
		tl.markers[k] = m
		k++
	}
	tl.markers = tl.markers[:k]
}

// expire despawns the entities whose marker left the window.
func (tl *Timeline) expire() {
	low := tl.low()
	tl.despawnMarked(low)
	tl.expireSpawns(low)
	if len(tl.gone) > 0 {
		k := 0
		for _, g := range tl.gone {
			if tl.w.Alive(g.e) {
				tl.gone[k] = g
				k++
			}
		}
		tl.gone = tl.gone[:k]
	}
}
