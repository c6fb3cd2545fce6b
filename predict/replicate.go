package predict

// The glue between a replicate.Client and a Timeline: replicate's hooks
// routed to the Timeline's authoritative values, removals, despawns and
// complete ticks. predict imports replicate, never the reverse.

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// Attach connects replication to a Timeline: a server despawn at tick t
// becomes tl.DespawnAt(e, t) (a despawn marker: the entity keeps its
// identity and history for the window, then leaves the World), and each
// complete server tick tl.Complete(t). Spawns need nothing: replicate
// spawns the entity in the World at once (identity is structure, never
// rolled back) and its predicted values arrive as authoritative values
// of their tick, so before that tick the entity has no predicted
// components in any re-simulation. Call AttachComponent for each
// replicated type that is predicted; other replicated types are written
// into the World by replicate and never rolled back.
//
// Attach replaces c's client hooks (replicate.Client.SetClientHooks) with
// Hooks(tl), and makes tl's range faults ask the server for a resync
// (Timeline.OnRangeFault, replicate.Client.RequestResync; see resync.go).
// When the protocol replicates SpawnKey (RegisterSpawnKey), it also
// installs the adoption of predicted spawns (AttachSpawns), and makes
// the client's checksum reports describe the Timeline's confirmed state
// (AttachChecksum).
func Attach(c *replicate.Client, tl *Timeline) {
	tl.mapper = c
	c.SetClientHooks(Hooks(tl))
	_ = AttachSpawns(c, tl) // replicate.ErrUnknownType: no predicted spawns
	attachResync(c, tl)
	AttachChecksum(c, tl)
}

// Hooks returns the client hooks Attach installs, for a game that adds
// its own (a Spawn hook, or wrapping Despawn or TickComplete) before
// installing them with replicate.Client.SetClientHooks. Its Resync hook
// calls Timeline.Resync (resync.go); its Despawn hook also notes the
// entity's server id for the checksum reports of earlier ticks
// (AttachChecksum), so a game's Despawn hook wraps it rather than
// replacing it. A despawn the
// Timeline refuses (more than the window ahead) is left to replicate,
// which despawns the entity at once.
func Hooks(tl *Timeline) replicate.ClientHooks {
	return replicate.ClientHooks{
		Despawn: func(e ecs.Entity, t tick.Tick) bool {
			if tl.sums != nil {
				tl.sums.despawned(e, t)
			}
			if tl.DespawnAt(e, t) != nil {
				return false
			}
			tl.noteGone(e)
			return true
		},
		TickComplete: func(t tick.Tick) { _ = tl.Complete(t) },
		Resync:       resyncHook(tl),
	}
}

// entityMapper is replicate.Client's mapping from client to server ids.
type entityMapper interface {
	ServerEntity(e ecs.Entity) (ecs.Entity, bool)
}

// goneID is the server id of an entity the server despawned, kept while
// the Timeline keeps the World entity (its despawn marker in the window).
type goneID struct{ e, se ecs.Entity }

// noteGone keeps e's server id, which replicate forgets at the despawn
// (Hooks' Despawn hook, while replicate still maps e).
func (tl *Timeline) noteGone(e ecs.Entity) {
	if tl.mapper == nil {
		return
	}
	if se, ok := tl.mapper.ServerEntity(e); ok {
		tl.gone = append(tl.gone, goneID{e: e, se: se})
	}
}

// ServerEntity returns the server's id of client entity e: replicate's
// mapping (replicate.Client.ServerEntity), or, for an entity the server
// despawned, the id it had, for as long as the Timeline keeps e in the
// World (its despawn marker's tick T in the window: until the end of the
// Step that simulates T+W+1). replicate forgets the mapping at the
// despawn, but the history still holds e at the ticks before it, so a
// test or a checker comparing the history with the server's state of
// those ticks asks here. It needs Attach (NewClientFrame calls it);
// false for an entity replicate never mapped, or gone from the World.
func (tl *Timeline) ServerEntity(e ecs.Entity) (ecs.Entity, bool) {
	if tl.mapper == nil {
		return 0, false
	}
	if se, ok := tl.mapper.ServerEntity(e); ok {
		return se, true
	}
	for _, g := range tl.gone {
		if g.e == e && tl.w.Alive(e) {
			return g.se, true
		}
	}
	return 0, false
}

// AttachComponent routes the replicated values and removals of T to comp
// (replicate.SetHooks[T]), so none is written straight into the predicted
// store. A value for tick t is comp.Authoritative(e, t, v), compared with
// the prediction once t is complete. A value that came with the structure
// of t (replicate.ValueInserted: a spawn, an insertion) and a removal
// (comp.AuthoritativeRemove(e, t)) also request a rollback to t
// (Timeline.Request): the reliable update that carries them is the only
// time the server sends them, so they must apply from t on even when t
// never becomes complete; a value the history already holds at t (by the
// type's compare function: a predicted spawn the server confirms)
// requests nothing, since the rollback would change nothing. A value
// replicate gives again because an entity it refers to appeared on the
// client (replicate.ValueRemapped, at the tick of that update) is no new
// authority about the past: it is
// comp.Insert(e, t, v), a change from t on that is not compared with the
// prediction. Values and removals the Timeline refuses (more than the
// window ahead) are dropped and counted in Stats.Refused.
func AttachComponent[T any](c *replicate.Client, comp *Component[T]) error {
	return replicate.SetHooks(c, componentHooks(comp, nil, nil))
}

// componentHooks returns the hooks AttachComponent and AttachSplit
// install: values and removals of entities for which interpolated(e)
// reports true go to buf (interpolated nil: none), the others to comp.
func componentHooks[T any](comp *Component[T], buf *interp.Buffer[T], interpolated func(e ecs.Entity) bool) replicate.ComponentHooks[T] {
	comp.attached = true
	tl := comp.tl
	return replicate.ComponentHooks[T]{
		Value: func(e ecs.Entity, t tick.Tick, v T, kind replicate.ValueKind) bool {
			if interpolated != nil && interpolated(e) {
				buf.Push(e, t, v)
				return true
			}
			var err error
			switch kind {
			case replicate.ValueRemapped:
				err = comp.Insert(e, t, v)
			case replicate.ValueInserted:
				// A late one (older than the window) waits for the next Step,
				// which applies it at the oldest tick held and rolls back
				// there (late.go): no rollback to request, no range fault yet.
				if err = comp.Authoritative(e, t, v); err == nil && !t.Before(tl.low()) && !comp.predicted(e, t, &v) {
					tl.Request(t)
				}
			default:
				err = comp.Authoritative(e, t, v)
			}
			if err != nil {
				tl.stats.Refused++
			}
			return true
		},
		Remove: func(e ecs.Entity, t tick.Tick) bool {
			if interpolated != nil && interpolated(e) {
				buf.Remove(e)
				return true
			}
			if err := comp.AuthoritativeRemove(e, t); err != nil {
				tl.stats.Refused++
			} else if !t.Before(tl.low()) { // a late one waits (late.go)
				tl.Request(t)
			}
			return true
		},
	}
}

// predicted reports whether the history holds v (by the compare function)
// as e's value at t.
func (c *Component[T]) predicted(e ecs.Entity, t tick.Tick, v *T) bool {
	p, ok := c.At(e, t)
	return ok && c.p.matches(&p, v)
}
