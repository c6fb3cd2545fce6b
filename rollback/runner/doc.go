// Package runner connects a rollback session (package rollback) to a world
// (package ecs) and its snapshots (package snapshot), the way bevy_ggrs
// connects GGRS to Bevy.
//
// The game registers its rollback state (components, resources, the world's
// rng.Rand) in a snapshot.Registry, writes its simulation as a Step, and
// calls Runner.Update every rendered frame with the elapsed wall time. The
// Runner runs a fixed-timestep clock (10% slower while the session is ahead
// of its peers), reads local input once per frame, and carries out the
// session's requests: Save (into a snapshot.Ring whose depth follows the
// prediction window, with checksums and per-type parts when the session uses
// them), Load (the ring restores entities, components and resources
// exactly), and Advance (the Step, with deterministic time derived from the
// frame number). Confirmed frames free older snapshots.
//
// The Runner depends on the rollback.Session contract, so any session type,
// or a wrapper that forwards the contract, drives it: the ring depth is the
// session's SnapshotDepth (2*MaxPrediction+4 for P2P), checksums are
// reported when the session WantsChecksum, and the World's checked mode
// (ecs.World.SetChecks) is on when the session ChecksDeterminism (SyncTest).
//
// Config.Confirmed receives the checksum of every saved state once the
// session will never roll it back (with Config.ChecksumAll, of every saved
// frame): two peers that compare these compare their simulations frame by
// frame.
//
// Desyncs down to the entity and field: with Config.Dumps the Runner keeps
// snapshot dumps of the session's checked frames, so that after an
// EventDesyncDetected of frame f, Dump(f, ev.Types) is this peer's state of
// the differing types; written to a file (snapshot.WriteDumpFile) on each
// peer, two dumps compare with "rewind diff" (snapshot.DiffDumps) and show
// which entities and fields differ, with both values. With a P2P session
// whose rollback.Config.DesyncDumpBytes is set the peers also exchange the
// dumps, and DiffDumpEvent compares the two of an EventDesyncDump. With a SyncTest
// session dumps are on by default and a mismatch is a *DesyncError listing
// the differing fields of the first simulation and the re-simulation.
//
// To end a match, set rollback.Config.EndFrame to its length N and call
// Update (or RunFrame) until Finished: the world then stands at frame N,
// Confirmed has been called for every state 0..N, and every peer has
// confirmed, checked and recorded the whole match.
//
// Requests are checked against the world's frame (ErrRequestOrder), and a
// Step reports a failure with Context.Fail, which stops the Runner.
//
// Rejoining a P2P match (rollback.Config.RejoinBytes, Config.Rejoin): a
// Runner is its P2P session's StateSource, serving the ring's frames in
// their exact byte form (snapshot.Ring.Encode) with their checksums, and
// carries out a rejoining session's LoadStateRequest by decoding the
// state into the world (snapshot.Ring.LoadEncoded: same entity ids, same
// free list, same checksum) and continuing from that frame as after a
// Load. It needs a world whose types are all registered with Copy or
// Codec (a Clone type has no exact byte form: the Runner then sets no
// StateSource, and a LoadStateRequest fails with
// snapshot.ErrNotEncodable), and checksummed frames to serve (the checked
// frames of DesyncInterval, or ChecksumAll; see Runner.StateSource).
//
// Games that do not use the world drive a session directly: see the
// rollback package.
package runner
