package predict

import (
	"errors"
)

// Errors of package predict. Compare with errors.Is.
var (
	// ErrTooFarAhead: a value, removal, despawn or completeness report names
	// a tick more than the rollback window ahead of the timeline's newest
	// tick. Nothing is stored.
	ErrTooFarAhead = errors.New("predict: tick too far ahead of the timeline")
	// ErrInStep: a change from outside the simulation (Insert, Authoritative,
	// DespawnAt...) was made from inside Step's simulation function. The
	// simulation writes predicted components directly, and despawns with
	// Timeline.Despawn.
	ErrInStep = errors.New("predict: external change made during Step")
	// ErrRegistered: the type is already registered with the Timeline.
	ErrRegistered = errors.New("predict: type already registered")
	// ErrStarted: a type was registered after the first Step; every type
	// must be registered before the timeline runs.
	ErrStarted = errors.New("predict: register types before the first Step")
	// ErrCompareType: a Compare option was given for another type than the
	// one being registered.
	ErrCompareType = errors.New("predict: compare function of another type")
	// ErrSpawnKey: Timeline.Spawn was called outside the simulation, with
	// a key of another tick than the one simulated, with a key already
	// spawned in this simulation of the tick, or with a key whose entity
	// left the World.
	ErrSpawnKey = errors.New("predict: bad predicted spawn")
	// ErrSpawnRefused: Timeline.Spawn of a key the server did not spawn:
	// a server tick at or after the key's is complete without the
	// server's spawn of it. No entity is made; the simulation goes on
	// without the spawn (a bullet is not fired).
	ErrSpawnRefused = errors.New("predict: predicted spawn refused by the server")
	// ErrObsolete: a value, removal or despawn names a tick older than the
	// Timeline's last resync (Timeline.Resync), whose state replaced it.
	// Nothing is stored.
	ErrObsolete = errors.New("predict: tick older than the last resync")
)

// ErrNoRTT: a ClientFrame was configured without an RTT function.
var ErrNoRTT = errors.New("predict: ClientFrameConfig.RTT is required")
