package predict

// Predicted spawns: an entity the client's simulation spawns at once under
// a deterministic key, which becomes the server's entity when the server's
// spawn with the same key arrives (replicate's adopt hook), and is
// refused (despawned, its tick re-simulated without it) once a tick at or
// after its own is complete without that spawn, or despawned when its
// tick leaves the window unconfirmed.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
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
// once with the spawn (replicate.Once) by a rule of its own, its four
// fields as uvarints (about 6 bytes where plain data takes 24). Server
// and clients register it alike; Attach then installs the adoption of
// predicted spawns.
func RegisterSpawnKey(p *replicate.Protocol) (replicate.ComponentIndex, error) {
	return replicate.Component[SpawnKey](p, replicate.WithMode(replicate.Once), replicate.WithOwnRule(),
		replicate.WithCodec[SpawnKey](spawnKeyCodec{}, "predict.SpawnKey/uvarint"))
}

// spawnKeyCodec encodes a SpawnKey as four minimal uvarints: Client,
// Index, Tick, Kind. Decode refuses anything else (non-minimal varints,
// values over 32 bits for Tick and Kind, trailing bytes), so what it
// accepts encodes back to itself.
type spawnKeyCodec struct{}

func (spawnKeyCodec) Append(dst []byte, k *SpawnKey) []byte {
	dst = binary.AppendUvarint(dst, uint64(k.Client))
	dst = binary.AppendUvarint(dst, k.Index)
	dst = binary.AppendUvarint(dst, uint64(k.Tick))
	return binary.AppendUvarint(dst, uint64(k.Kind))
}

var errSpawnKey = errors.New("predict: malformed spawn key")

func (spawnKeyCodec) Decode(src []byte, k *SpawnKey) error {
	r := bin.NewReader(src)
	k.Client = replicate.ClientID(r.Uvarint())
	k.Index = r.Uvarint()
	k.Tick = tick.Tick(r.Uvarint32())
	k.Kind = r.Uvarint32()
	if r.End() != nil {
		return errSpawnKey
	}
	return nil
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
	// refused: a tick at or after the key's completed without the
	// server's spawn (refuseSpawns): the entity is gone (e is 0) and Spawn
	// of the key fails with ErrSpawnRefused until the tick leaves the
	// window.
	refused bool
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
//   - once server tick k.Tick, or a later one, is complete (Complete)
//     without that spawn, the server did not spawn k: the next Step
//     despawns the entity and rolls back to k.Tick-1, and the
//     re-simulation's Spawn of k fails with ErrSpawnRefused, so the tick
//     is simulated again without the spawn (Stats.PredictedSpawnsRefused,
//     also counted as dropped);
//   - without one by the time k.Tick leaves the window (its ticks never
//     completed), it is despawned (Stats.PredictedSpawnsDropped);
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
// spawn k before a correction made it), so nothing is duplicated. It
// fails with ErrSpawnRefused, making no entity, for a key refused (see
// above), and for a new key whose tick, or a later one, is already
// complete (a client behind the server, or a re-simulation that now
// spawns a key the first simulation did not): the server's spawn would
// have arrived with it. The simulation then does not make the spawn (a
// bullet is not fired), and the key is remembered as refused. Spawning
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
		if p.refused {
			return 0, fmt.Errorf("%w: %+v", ErrSpawnRefused, k)
		}
		if p.live {
			return 0, fmt.Errorf("%w: %+v spawned twice", ErrSpawnKey, k)
		}
		if !tl.w.Alive(p.e) {
			return 0, fmt.Errorf("%w: %+v: %w", ErrSpawnKey, k, ecs.ErrNotAlive)
		}
		p.live = true
		return p.e, nil
	}
	if tl.settled(k.Tick) {
		tl.spawns = append(tl.spawns, prespawn{key: k, refused: true})
		tl.stats.PredictedSpawnsRefused++
		return 0, fmt.Errorf("%w: %+v, tick %v complete", ErrSpawnRefused, k, tl.done)
	}
	e := tl.w.Spawn()
	_ = ecs.Register[SpawnKey](tl.w).Set(e, k)
	tl.spawns = append(tl.spawns, prespawn{key: k, e: e, live: true})
	tl.stats.PredictedSpawns++
	return e, nil
}

// PredictedSpawn returns the entity the Timeline holds for key k: the
// simulation's predicted spawn (matched or not) or the server's entity
// adopted for k, while k.Tick is within the window. A refused key has
// none.
func (tl *Timeline) PredictedSpawn(k SpawnKey) (ecs.Entity, bool) {
	if i := tl.findSpawn(k); i >= 0 && !tl.spawns[i].refused {
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
// for replicate this is a spawn like any other. A refused key is treated
// the same way (replicate delivers a tick's spawns before the tick, or any
// later one, completes, so this happens only to a game that reports
// completeness itself too early): a new entity, counted as unpredicted,
// which the key names from then on and a re-simulation's Spawn returns.
// A key older than the window gives false: replicate spawns the entity
// itself.
func (tl *Timeline) AdoptSpawn(t tick.Tick, k SpawnKey) (ecs.Entity, bool) {
	if tl.inStep {
		return 0, false
	}
	if i := tl.findSpawn(k); i >= 0 {
		p := &tl.spawns[i]
		if p.refused {
			p.e, p.server, p.refused = tl.w.Spawn(), true, false
			tl.stats.ServerSpawnsUnpredicted++
			return p.e, true
		}
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
		if p.key.Tick == t && !p.live && !p.server && !p.refused {
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
			if !p.server && !p.refused {
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

// settled reports whether the server's spawns of tick t are all known: a
// tick at or after t is complete (Complete). replicate's updates, which
// carry the spawns, are reliable and ordered, and a tick's mutation
// messages wait for the newest update with structure (spawns included)
// before they apply, so a tick completes only after the spawns of every
// tick up to it were applied, and adopted.
func (tl *Timeline) settled(t tick.Tick) bool {
	return tl.hasDone && !t.After(tl.done)
}

// refuseSpawns runs at the start of Step: a predicted spawn no server
// spawn claimed, whose tick F is settled, is a spawn the server did not
// make. Its entity is despawned at once and a rollback to F-1 requested
// (consolidated with the Step's others), whose re-simulation of F gets
// ErrSpawnRefused from Spawn, so F and the ticks after it are simulated
// again without the spawn and whatever it caused. With F the oldest tick
// of the history the rollback is to F: the restore skips the despawned
// entity. A rollback to before the last resync is not requested: the
// resync's state replaces the predicted one.
func (tl *Timeline) refuseSpawns() {
	if !tl.hasDone {
		return
	}
	low := tl.low()
	for i := range tl.spawns {
		p := &tl.spawns[i]
		if p.server || p.refused || !tl.settled(p.key.Tick) {
			continue
		}
		if tl.w.Alive(p.e) {
			_ = tl.w.Despawn(p.e)
		}
		p.e, p.refused, p.live = 0, true, false
		tl.stats.PredictedSpawnsRefused++
		tl.stats.PredictedSpawnsDropped++
		to := p.key.Tick - 1
		if to.Before(low) {
			to = low
		}
		if to.After(tl.now) || (tl.rs.has && to.Before(tl.rs.at)) {
			continue
		}
		if !tl.hasReq || to.Before(tl.req) {
			tl.req, tl.hasReq = to, true
		}
	}
}
