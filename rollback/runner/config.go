package runner

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/effect"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/snapshot"
)

// Config configures a Runner. Zero fields take the documented defaults.
type Config struct {
	// World and Registry are the game state; every rollback-relevant
	// component and resource type (including the game's rng.Rand resource)
	// must be registered before New. A Runner driving a session that
	// ChecksDeterminism (a *rollback.SyncTestSession, or a wrapper of one)
	// turns on the World's checked mode (ecs.World.SetChecks), so that a
	// Step writing through Read access in a query panics with
	// ecs.ErrWriteThroughRead naming the type and entity.
	World    *ecs.World
	Registry *snapshot.Registry
	// Session drives the frames.
	Session Session
	// Step simulates one frame.
	Step Step
	// ReadInput returns local player h's input for the next frame. It is
	// called once per frame for each local player, outside the simulation.
	ReadInput func(h rollback.PlayerHandle) []byte
	// FPS is the simulation rate. Default 60.
	FPS int
	// SlowdownPermille is the clock rate used while the session is ahead of
	// its peers (FramesAhead > 0): 1100 runs frames 10% longer. Default 1100.
	SlowdownPermille uint32
	// Depth overrides the snapshot ring depth. Default: the session's
	// SnapshotDepth (2*MaxPrediction+4 for a P2P session), at least 1.
	Depth int
	// ChecksumAll computes the checksum of every saved frame, not only of
	// the frames the session asks for (see rollback's WantsChecksum), so
	// that Confirmed sees every confirmed frame. It costs one checksum per
	// save; tests and the demo use it to compare peers frame by frame.
	ChecksumAll bool
	// Confirmed, when set, is called with the checksum of each saved state
	// that became final (the session will never roll it back), once per
	// frame and in frame order. Only frames saved with a checksum are
	// reported (every saved frame with ChecksumAll). With
	// rollback.Config.EndFrame the last one is EndFrame itself.
	Confirmed func(f rollback.Frame, sum uint64)
	// Effects are followers of the rollbacks (usually package effect's
	// Trackers: sounds, particles and hit markers that play once, and are
	// cancelled when a rollback removes what fired them). The Runner calls
	// Rewind(f) at a load of frame f, Resimulated when the re-simulation
	// has caught up with the frame the load interrupted, and Confirm(f)
	// for the session's confirmed frames. Step fires effects with the
	// frame it simulates (tick.Tick(ctx.Frame)).
	Effects []effect.Follower
	// Dumps, above 0, keeps dumps (snapshot.Dump: each entity's values in
	// canonical form with the types' field layouts) of the world at the
	// last Dumps frames the session wants a checksum of (its checked
	// frames; ChecksumAll does not add to them), so that a desync can be
	// examined down to the entity and field: after an
	// EventDesyncDetected of frame f, Runner.Dump(f, ev.Types) is this
	// side's state of the differing types, to write to a file
	// (snapshot.WriteDumpFile) and compare with the other side's
	// ("rewind diff", snapshot.DiffDumps). A P2P session compares its
	// checked frames (every DesyncInterval) some frames after saving them:
	// Dumps covers Dumps*DesyncInterval frames. It costs one canonical
	// encoding of the world per checked frame (and per re-save of one in
	// a rollback). Default 0 (off), except for a session that
	// ChecksDeterminism (SyncTest): the session's snapshot depth + 2,
	// and a mismatch RunFrame returns is then a *DesyncError with the
	// differing fields. Negative turns dumps off.
	Dumps int
	// With a P2P session whose rollback.Config.DesyncDumpBytes is set, the
	// Runner is the session's DumpSource: the peers exchange their dumps
	// and EventDesyncDump carries both (DiffDumpEvent compares them).
	//
	// DumpLabel labels this side's dumps ("peer 1"). Default "local".
	DumpLabel string
	// DumpMaxBytes bounds one dump's value bytes (snapshot.DumpOptions.MaxBytes;
	// default snapshot.DefaultDumpMaxBytes). A dump over it is not kept.
	DumpMaxBytes int
}
