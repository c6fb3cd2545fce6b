package predict

import "github.com/rewindgo/rewind/tick"

// Stats counts what a Timeline did since it was created.
type Stats struct {
	// Rollbacks is the number of Steps that rolled back.
	Rollbacks uint64
	// TicksResimulated counts the ticks simulated again by rollbacks (a
	// rollback to T at tick now re-simulates now-T ticks).
	TicksResimulated uint64
	// RangeFaults counts authoritative values and changes for ticks older
	// than the window, applied at the oldest tick held (Timeline.Oldest;
	// see Timeline.Confirmed for what holds until the resync they ask
	// for); LastRangeFault is the tick of the newest one.
	RangeFaults    uint64
	LastRangeFault tick.Tick
	// Superseded counts authoritative values and removals of a component
	// older than the window that a newer one for the same entity and type
	// replaced before the next Step (a batch that was held up arrives at
	// once): never range faults; dropped when the newer one is older than
	// the window too, applied from the oldest tick held until the newer
	// one otherwise (see late.go).
	Superseded uint64
	// Corrections counts the correction records made (types registered
	// with LogCorrections).
	Corrections uint64
	// Dropped counts authoritative values or changes for entities that no
	// longer exist when they are applied (each time: a re-simulation
	// through their tick counts them again).
	Dropped uint64
	// Refused counts authoritative values dropped by ReceiveHook because
	// their tick was more than the window ahead, or older than the last
	// resync.
	Refused uint64
	// PredictedSpawns counts the entities the simulation spawned with
	// Spawn (a re-simulation spawning a key again reuses its entity and
	// does not count); PredictedSpawnsMatched those a server spawn with
	// the same key adopted; PredictedSpawnsDropped those despawned without
	// one, mispredictions: when their tick, or a later one, completed
	// without the server's spawn (refused: PredictedSpawnsRefused counts
	// these as well), when their tick left the window unconfirmed (it
	// never completed), or when a rollback's re-simulation no longer
	// spawned them (PredictedSpawnsUndone counts these as well).
	// PredictedSpawnsRefused also counts the Spawn calls refused before
	// any entity was made (a key of a tick already complete without the
	// server's spawn: no entity, not in PredictedSpawns or Dropped).
	// ServerSpawnsUnpredicted counts server spawns with a key the client
	// had not spawned, spawned normally.
	PredictedSpawns, PredictedSpawnsMatched, PredictedSpawnsDropped uint64
	PredictedSpawnsUndone, PredictedSpawnsRefused                   uint64
	ServerSpawnsUnpredicted                                         uint64
	// Resyncs counts resyncs (Resync), LastResync is the tick of the
	// newest, and Obsolete counts values, changes and requests refused
	// because their tick is older than it (resync.go).
	Resyncs    uint64
	LastResync tick.Tick
	Obsolete   uint64
	// ChecksumsReported counts the checksum reports sent with the
	// predicted types' history (AttachChecksum), ChecksumsDropped those
	// not sent: their tick left the window, or a full resync replaced it,
	// before a Step made it final.
	ChecksumsReported, ChecksumsDropped uint64
	// HistoryBytes is the memory held by the history of every registered
	// type (values and entity layouts of W+1 ticks).
	HistoryBytes int
	// Types has one entry per registered type, in registration order.
	Types []TypeStats
}

// TypeStats counts per registered component or resource type.
type TypeStats struct {
	Name string
	// Mispredictions counts authoritative values that differed from the
	// prediction (by the type's compare function) when their tick was
	// checked, including values for components the prediction lacked and
	// removals of components it had.
	Mispredictions uint64
	// Corrections counts correction records of this type.
	Corrections uint64
	// HistoryBytes is the memory held by this type's history.
	HistoryBytes int
}
