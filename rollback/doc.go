// Package rollback is peer-to-peer rollback netcode in the GGPO / GGRS model:
// every peer simulates every frame, only inputs cross the network, missing
// remote inputs are predicted, and when a real input differs from its
// prediction the game loads an earlier state and re-simulates.
//
// # Sessions
//
//   - P2PSession: local and remote players (several per process, several
//     behind one address) and spectators, over a transport.PacketConn (real
//     UDP or the simulated network).
//   - SyncTestSession: a determinism checker on one machine; it rolls back
//     and re-simulates CheckDistance frames every frame and reports a
//     *MismatchError naming the frame and the differing types.
//   - SpectatorSession: follows a host's confirmed inputs, catching up when
//     behind.
//   - ReplaySession: plays a recording (Config.Record) back and verifies its
//     checksums.
//
// Every session type implements the Session interface, the one contract
// code that drives sessions (package rollback/runner, a game loop, a
// wrapper) depends on.
//
// Like GGRS, a session never touches game state. Each frame the game adds
// its local inputs and calls AdvanceFrame, which returns an ordered list of
// requests: Save (store the state as frame F and report its checksum with
// ReportChecksum, before the next call: see ReportChecksum), Load (restore
// frame F) and Advance (simulate one frame with these inputs). Game code with one plain struct can carry them out itself;
// package rollback/runner carries them out on an ecs.World with package
// snapshot.
//
// # Ending a match
//
// Set Config.EndFrame to the length of the match N. The session simulates
// frames 0..N-1 and stays at frame N; keep running the game loop
// (AddLocalInput may stop: AdvanceFrame no longer needs inputs at frame N,
// but it still returns the rollbacks late inputs cause and a Save of frame
// N) or call Poll, until Finished reports true. By then every frame
// 0..N-1 is confirmed on every peer, the states 0..N were checked for
// desyncs (each EventDesyncDetected of the match is queued), recorded
// (a recording of N frames holds N frames and the checksum of frame N when
// it falls on the interval) and acknowledged by the spectators, and each
// connected peer said the same of itself; then Close. The runner's
// Runner.Finished forwards it. Without EndFrame a match is endless, and Poll
// still advances the confirmed frame whenever no rollback is due.
//
// # Rejoining a match
//
// A peer that left (its process died, or its link was down for longer than
// DisconnectTimeout) can come back. Every peer sets Config.RejoinBytes
// (the largest state it sends or takes) and a StateSource
// (SetStateSource: the encoded state saved as a frame, and its checksum).
// The others keep playing meanwhile: the player's input is the default
// (Disconnected) from the agreed disconnect frame D on. The returning peer
// starts a new session at its old address with Config.Rejoin; after the
// handshakes it asks the peer with the lowest remote handle (the host) for
// the state. The host picks a final, saved frame F and a frame R after any
// input it has sent, and sends the state of F with its checksum and the
// inputs of frames F..G it knows, in acknowledged pieces; it tells the
// other peers R before any of them can confirm R. From then on every peer
// gives the player the default input after D and before R and its real
// inputs from R (a peer that simulated past R rolls back). The rejoining
// session's first requests are a LoadStateRequest of F and a Save of F;
// if the checksum the game reports for it differs from the host's,
// AdvanceFrame fails with ErrRejoin and none of its inputs is sent.
// Otherwise it replays from F, sends its inputs from R, and raises
// EventRejoined; the others raise EventRejoined when they learn R.
//
// Package rollback/runner carries rejoins out for an ecs world: it serves
// its snapshot ring's frames in their exact byte form (snapshot.Ring.Encode)
// and loads a LoadStateRequest's state with snapshot.Ring.LoadEncoded (same
// entity ids, same checksum); its world's types must be registered with
// Copy or Codec (a Clone type has no exact byte form). The command
// "rewind peer --rejoin" restarts a peer of the demo match that way.
//
// Limits: every peer the rejoiner lists must be reachable, because it
// asks for the state only once every handshake completed: that is how it knows every peer accepts its return (a peer
// that disconnected it on purpose, with DisconnectPlayer or for
// malformed traffic, ignores its handshake, and a host must not readmit
// a player another peer refuses); so a peer that left for good blocks
// later rejoins. One rejoin at a time; spectators cannot join mid-match; the
// rejoining session cannot record (Config.Record); not with Lockstep or
// SparseSaving. The rejoining peer's frames before F are never simulated
// there, and the other peers may wait for its inputs at R for about the
// time the state takes to arrive (one second on a 40 ms, 5% loss link in
// TestRejoinAfterRestart).
//
// # Differences from GGRS, on purpose
//
//   - At the prediction threshold AdvanceFrame still returns the rollback it
//     scheduled (never an error that drops it: GGRS #70/#75); Advanced
//     reports that the frame did not advance.
//   - Desync detection compares checksums of frames that are final for every
//     peer (the agreed frame, see below), only after their saves; on a
//     mismatch the peers exchange per-type checksum parts, so
//     EventDesyncDetected names the component types that differ. Checksum
//     reports ride on the Input messages and are repeated until the peer
//     acknowledges them (up to 8 per message, the last 32 checked frames
//     held; GGRS sends each once, so a lost datagram means an unchecked
//     frame); each (peer, frame) is compared once, so each
//     differing checked frame raises exactly one event per peer, whatever
//     the loss, duplication or reordering. Lockstep sessions save the
//     check frames too, so detection works there as well. With
//     Config.DesyncDumpBytes the peers then exchange their dumps of the
//     differing types at the first desynced frame (SetDumpSource; the
//     runner supplies them) and EventDesyncDump carries both, so that the
//     entities and fields that differ can be shown (rollback/runner's
//     DiffDumpEvent).
//   - The confirmed frame is the agreed frame: inputs known here and, for
//     remote players, known to every other peer too (from the gossiped
//     connection statuses). A disconnect is agreed at the lowest last frame
//     any peer has, and that frame is never older than the agreed frame, so
//     a disconnect rollback always finds its saved state (SnapshotDepth).
//   - Inputs are byte strings of up to MaxInputSize bytes whose length may
//     vary; the wire format delta-encodes each frame against the previous one
//     and run-length compresses the result. A 2-player match at 60 fps with
//     2-byte inputs sends about 1.1 kB/s per peer under 100 ms RTT and 5%
//     loss (BenchmarkP2PBandwidth).
//   - Sessions copy inputs, pace their sends (one datagram per peer per
//     frame, acks piggybacked), allocate nothing per frame in steady state
//     (BenchmarkP2PFrame), and have recording and replay built in.
//   - Time sync follows GGRS (30-frame window of frame advantages, measured
//     from received inputs and quality reports) but takes no sample before a
//     peer's first input, rounds the averaged lead where GGRS truncates, and
//     recommends waiting from 1 frame ahead at most every 20 frames (GGRS: 3
//     frames every 60), so a clock 5% fast stays within 2 frames.
//
// # Wire protocol
//
// Every datagram starts with a version byte (2 since checksum reports moved
// into the Input messages), so builds that speak different
// versions fail to connect with EventVersionMismatch instead of desyncing.
// A five-round-trip handshake exchanges a random magic number per endpoint;
// afterwards datagrams with another magic are dropped. Inputs carry every
// unacknowledged frame (redundancy against loss); quality reports every
// 200 ms measure ping and frame advantage for time sync; keep-alives keep
// quiet links alive. See rollback/internal/wire for the byte format.
//
// Everything received is hostile: decoders return errors on bad bytes (and
// have fuzz targets), queues have caps, a peer that floods has its excess
// dropped and counted, and one that keeps sending garbage is disconnected.
// Nothing a peer sends can stall or crash the others.
//
// # Time
//
// Sessions read Config.Now (default time.Now) for timeouts, retries and
// pings, never for the simulation. Inside a testing/synctest bubble with the
// simulated network (transport.NewPacketNetwork) a whole match runs on virtual
// time: exact, seeded and instant.
package rollback
