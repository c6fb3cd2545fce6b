package predict

// Predicted spawns: an entity the client's simulation spawns at once under
// a deterministic key, which becomes the server's entity when the server's
// spawn with the same key arrives (replicate's adopt hook), and is
// despawned when no such spawn comes within the window.

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// SpawnKey names a spawn that client and server both make, so that the
// client's predicted entity and the server's authoritative one can be
// matched: the client Client whose input caused it, the tick Tick it
// happens at, a game-defined Kind (bullet, grenade...) and Index, the
// spawn's number among those of its kind the client causes in the tick
// (0, 1...), or a hash of what distinguishes it (a weapon slot) when the
// order of spawns could differ between client and server. Both sides
// compute it from the same input and state, so it is deterministic; it is
// comparable (==) and plain data (24 bytes, no padding). On the client,
// Client is replicate.Client.ID(), known once connected: a key made
// before (Client 0) matches no server spawn, so a game fires only once
// connected.
//
// The server sets it as a component on the entity it spawns, in the same
// tick as replicate.Replicated (ServerSpawn does both), so it travels in
// the spawn's update; RegisterSpawnKey adds it to the protocol, sent once.
type SpawnKey struct {
	Client replicate.ClientID
	Index  uint64
	Tick   tick.Tick
	Kind   uint32
}

// RegisterSpawnKey registers SpawnKey as a replicated component of p, sent
// once with the spawn (replicate.Once) by a rule of its own. Server and
// clients register it alike; Attach then installs the adoption of
// predicted spawns.
func RegisterSpawnKey(p *replicate.Protocol) (replicate.ComponentID, error) {
	return replicate.Component[SpawnKey](p, replicate.WithMode(replicate.Once), replicate.WithOwnRule())
}

// ServerSpawn spawns the server's entity for key k in w: marked
// replicate.Replicated and tagged with k, so its spawn reaches the client
// with the key and is matched with the client's predicted entity. The
// game adds the entity's other components in the same tick, as for any
// spawn (they travel in the same update).
func ServerSpawn(w *ecs.World, k SpawnKey) ecs.Entity {
	e := w.Spawn()
	_ = ecs.Register[replicate.Replicated](w).Set(e, replicate.Replicated{})
	_ = ecs.Register[SpawnKey](w).Set(e, k)
	return e
}

// prespawn is a spawn key the Timeline knows within the window: a
// predicted spawn of the simulation, or a server spawn adopted.
type prespawn struct {
	key SpawnKey
	e   ecs.Entity
	// server: the server's entity with this key reached the client (a
	// matched predicted spawn, or a server spawn adopted without one).
	server bool
	// live: the simulation spawned it in the current predicted state (a
	// rollback before its tick clears it until the re-simulation spawns
	// it again).
	live bool
}

// Spawn spawns a predicted entity under key k from the simulation (inside
// Step; k.Tick must be Tick(), the tick being simulated): a World entity
// tagged with k (the SpawnKey component, not predicted), which the
// simulation then gives its predicted components. It is the client's
// entity for k until the window passes k.Tick:
//
//   - a server spawn with the same key adopts it (replicate's adopt hook,
//     installed by Attach or AttachSpawns): the server's entity is this
//     one, its history is kept, and the server's values flow into it as
//     for any replicated entity (Stats.PredictedSpawnsMatched);
//   - without one by the time k.Tick leaves the window, it is despawned
//     (Stats.PredictedSpawnsDropped);
//   - a rollback to a tick before k.Tick takes it out of the predicted
//     state (its predicted components are not in the history before
//     k.Tick) but keeps its identity: when the re-simulation spawns k
//     again, Spawn returns the same entity, so a renderer sees no
//     flicker; when it does not, an unmatched entity is despawned right
//     after its tick is re-simulated (Stats.PredictedSpawnsUndone, also
//     counted as dropped), and a matched one stays, since it is the
//     server's (its authoritative values of the spawn tick restore it).
//
// Spawn returns the entity already known for k when the server's spawn
// with key k arrived first (a client behind, or a prediction that did not
// spawn k before a correction made it), so nothing is duplicated. Spawning
// the same key twice in one simulation of a tick is an error (ErrSpawnKey),
// as is a key of another tick, or a key whose entity left the World.
func (tl *Timeline) Spawn(k SpawnKey) (ecs.Entity, error) {
	if !tl.inStep {
		return 0, fmt.Errorf("%w: Spawn outside the simulation", ErrSpawnKey)
	}
	if k.Tick != tl.cur {
		return 0, fmt.Errorf("%w: key of tick %v spawned at tick %v", ErrSpawnKey, k.Tick, tl.cur)
	}
	if i := tl.findSpawn(k); i >= 0 {
		p := &tl.spawns[i]
		if p.live {
			return 0, fmt.Errorf("%w: %+v spawned twice", ErrSpawnKey, k)
		}
		if !tl.w.Alive(p.e) {
			return 0, fmt.Errorf("%w: %+v: %w", ErrSpawnKey, k, ecs.ErrNotAlive)
		}
		p.live = true
		return p.e, nil
	}
	e := tl.w.Spawn()
	_ = ecs.Register[SpawnKey](tl.w).Set(e, k)
	tl.spawns = append(tl.spawns, prespawn{key: k, e: e, live: true})
	tl.stats.PredictedSpawns++
	return e, nil
}

// PredictedSpawn returns the entity the Timeline holds for key k: the
// simulation's predicted spawn (matched or not) or the server's entity
// adopted for k, while k.Tick is within the window.
func (tl *Timeline) PredictedSpawn(k SpawnKey) (ecs.Entity, bool) {
	if i := tl.findSpawn(k); i >= 0 {
		return tl.spawns[i].e, true
	}
	return 0, false
}

// AdoptSpawn is replicate's adopt hook for SpawnKey (AttachSpawns installs
// it): the server entity spawned at tick t with key k is the client entity
// it returns. A key the simulation spawned and no server entity claimed
// yet gives its predicted entity (counted in
// Stats.PredictedSpawnsMatched). A key whose entity a server spawn claimed
// before (the entity reaches the client again: shown after being hidden,
// a resync) or that left the World gives a new World entity, which the
// key names from then on. A key the client never predicted, within
// the window or ahead of it, gives a new World entity that the Timeline
// remembers (Stats.ServerSpawnsUnpredicted), so that a later simulation
// spawning the same key gets the server's entity instead of a duplicate;
// for replicate this is a spawn like any other. A key older than the
// window gives false: replicate spawns the entity itself.
func (tl *Timeline) AdoptSpawn(t tick.Tick, k SpawnKey) (ecs.Entity, bool) {
	if tl.inStep {
		return 0, false
	}
	if i := tl.findSpawn(k); i >= 0 {
		p := &tl.spawns[i]
		if !p.server && tl.w.Alive(p.e) {
			p.server = true
			tl.stats.PredictedSpawnsMatched++
			return p.e, true
		}
		// Claimed before (the server's entity reaches the client again:
		// shown after being hidden, a resync) or gone: the key's entity is
		// a new one from now on.
		p.e, p.server = tl.w.Spawn(), true
		return p.e, true
	}
	if k.Tick.Before(tl.low()) || k.Tick.Sub(tl.now) > int32(tl.window) {
		return 0, false
	}
	e := tl.w.Spawn()
	tl.spawns = append(tl.spawns, prespawn{key: k, e: e, server: true})
	tl.stats.ServerSpawnsUnpredicted++
	return e, true
}

// AttachSpawns installs the adoption of predicted spawns on c (Attach does
// it when the protocol registers SpawnKey): replicate asks AdoptSpawn for
// every server spawn carrying a SpawnKey. It fails with
// replicate.ErrUnknownType when the protocol has no SpawnKey
// (RegisterSpawnKey).
func AttachSpawns(c *replicate.Client, tl *Timeline) error {
	return replicate.SetHooks(c, replicate.ComponentHooks[SpawnKey]{Adopt: tl.AdoptSpawn})
}

func (tl *Timeline) findSpawn(k SpawnKey) int {
	for i := range tl.spawns {
		if tl.spawns[i].key == k {
			return i
		}
	}
	return -1
}

// unliveSpawns is the rollback to from: spawns after from are not in the
// restored state until the re-simulation makes them again.
func (tl *Timeline) unliveSpawns(from tick.Tick) {
	for i := range tl.spawns {
		if tl.spawns[i].key.Tick.After(from) {
			tl.spawns[i].live = false
		}
	}
}

// undoSpawns runs after the re-simulation of t: a predicted spawn of t it
// did not make again, which no server entity claimed, is despawned.
func (tl *Timeline) undoSpawns(t tick.Tick) {
	k := 0
	for _, p := range tl.spawns {
		if p.key.Tick == t && !p.live && !p.server {
			if tl.w.Alive(p.e) {
				_ = tl.w.Despawn(p.e)
			}
			tl.stats.PredictedSpawnsUndone++
			tl.stats.PredictedSpawnsDropped++
			continue
		}
		tl.spawns[k] = p
		k++
	}
	tl.spawns = tl.spawns[:k]
}

// expireSpawns forgets the keys whose tick left the window, despawning the
// predicted entities no server spawn claimed.
func (tl *Timeline) expireSpawns(low tick.Tick) {
	k := 0
	for _, p := range tl.spawns {
		if p.key.Tick.Before(low) {
			if !p.server {
				if tl.w.Alive(p.e) {
					_ = tl.w.Despawn(p.e)
				}
				tl.stats.PredictedSpawnsDropped++
			}
			continue
		}
		tl.spawns[k] = p
		k++
	}
	tl.spawns = tl.spawns[:k]
}
