// Command rewind runs rewind's demos and tools.
//
// Usage:
//
//	rewind demo [p2p] [flags]   play the demo game between N peers over UDP on loopback
//	rewind demo server [flags]  a replication server and clients over QUIC on loopback
//	rewind demo predict [flags] predicting clients of an authoritative server over QUIC
//	rewind peer [flags]         one peer of the demo match per process (two terminals, two machines)
//	rewind replay [flags] FILE  play a recording back and verify its checksums
//	rewind netsim [flags]       put any UDP program behind bad network conditions
//	rewind vet [packages]       check simulation code for non-determinism
//	rewind diff A B             compare two desync dumps entity by entity, field by field
//	rewind load [flags]         thin clients against match servers (load testing)
//	rewind load serve [flags]   match servers to load, with tick duration statistics
//	rewind help [command]       print help
//
// demo p2p runs every peer (and optional spectators) in one process, each
// with its own world, rollback.P2PSession and runner.Runner, on real UDP
// sockets. Every link between two peers goes through a transport.Proxy that
// adds the configured latency, jitter, loss and duplication (by default
// 60 ms ±20 ms and 5% loss, so that rollbacks happen). The match ends
// (rollback.Config.EndFrame = --frames) once every peer and spectator has
// finished it: every frame confirmed, checked for desyncs, recorded and
// sent to the spectators. It prints live statistics once a second and a
// summary at the end (one JSON object with --json: "finished" and
// "confirmed_tail", the newest state every peer confirmed, which is
// --frames for a finished match), and exits with status 1 when the match
// did not finish, the peers' confirmed checksums differ or a desync was
// detected; a legend of the summary's terms follows it (and the flags in
// --help). --record FILE records peer 0's match; rewind replay FILE plays
// it back (all --frames frames) and checks every recorded checksum, and
// refuses a damaged file (a CRC-32C per block).
//
// diff compares two desync dumps (snapshot.Dump files): with --dump-dir,
// demo and peer keep dumps of the checked frames (runner.Config.Dumps)
// and each peer writes its state of the differing types at its first
// desync to DIR/desync-f<frame>-peer<i>.rwdump (listed in the summary,
// dump_files in --json); diff prints which entities and which fields
// differ with both values (and B-A for numbers), and exits with status 1
// when they differ. demo --corrupt F is a deliberate desync to try it on:
// the last peer moves player 0 one unit further at frame F.
//
// vet runs the determinism analyzer (package cmd/internal/simcheck) on
// the packages, through go vet with this program as the vet tool: every
// runner.Step, predict sim and //rewind:sim function, and what it calls in
// the same module, is checked for map iteration, wall-clock time, global
// random generators, goroutines, channels, unsafe, pointer addresses and
// package-level writes (-float: notes on float x*y+z, which may fuse into
// FMA). It exits with status 1 when there are findings.
//
// peer plays one peer of the demo p2p match in this process: --listen is
// its UDP address, --handle its player, --remote the other peers' addresses
// in handle order, --spectators those of spectators it hosts, and --latency,
// --jitter and --loss condition what it sends (transport.Condition). It
// plays --frames frames (rollback.Config.EndFrame) until the match is
// finished on every peer, keeps answering the other peers for --drain, and
// prints the demo's summary
// (--json: the same fields) plus the digest of its confirmed checksums:
// processes that print the same digest computed the same state at every
// frame. It exits with status 1, saying why, when a remote never
// answered, when a peer left before the match finished (abandoned: the
// rest was played without it) or when it was interrupted. With --spectate HOST --players N it is a spectator of the peer at
// HOST (which lists it in --spectators) and prints the digest of the
// states it simulated.
//
// demo server runs a replicate.Server and --clients replicate.Clients in one
// process over QUIC (transport/quic) on loopback, each client's link through
// its own transport.Proxy. The server simulates a few hundred moving entities
// (spawned, hit, shielded and destroyed as it runs) at 60 ticks per second
// and replicates them, with the world's random generator and a random
// stream per entity; clients ping the server, which echoes every ping to
// every client. --disrupt D cuts client 0 off for D a third into the run;
// it asks for a resync when traffic resumes. Afterwards the server stops
// changing anything and keeps ticking until every client holds exactly its
// replicated state, random state included (resyncs, rng_equal and
// converged in the summary). It prints
// live statistics to stderr once a second, a summary at the end (one JSON
// object with --json), and exits with status 1 when a client did not
// converge or a message went missing.
//
// demo predict runs an authoritative server and --clients predicting
// clients (default 3) in one process over QUIC on loopback, each client's
// link through its own transport.Proxy (--latency, --jitter, --loss,
// --seed). Bots steer the ships and fire; the server simulates each tick
// with the inputs it buffered (predict.ServerFrame) and spawns every
// bullet under a predict.SpawnKey; each client runs predict.ClientFrame:
// it runs ahead of the server (ticksync.Sync), sends its inputs with
// redundancy, predicts its own ship and its bullets (predicted spawns,
// adopted by the server's under the same key), predicts (with the
// forwarded inputs, bullets included) or interpolates (--others) the
// other ships, and rolls back when the server disagrees.
// After every step each client's confirmed state at every complete
// server tick older than its present is compared with the server's state
// at that tick. Live statistics once a second (ping, ticks ahead,
// rollbacks, corrections, bytes/s); --json prints the summary (rollbacks,
// resimulated_ticks, mispredictions, max_correction, ahead_ticks,
// late_inputs, predicted_spawns_matched, predicted_spawns_dropped,
// predicted_spawns_refused, unconfirmed_bullet_ticks, range_faults,
// superseded, resyncs, bytes_per_sec_per_client, input_bytes_per_sec_per_client, converged,
// converged_tick ...). It runs --ticks (240, four seconds),
// then until every client compared a tick at or after it, and exits with
// status 1 when a comparison differed.
//
// netsim forwards datagrams from --listen to --target and the replies back,
// applying the link conditions in both directions, until interrupted.
//
// --dashboard ADDR (demo p2p, demo server, demo predict, peer, load serve)
// serves a live dashboard of the match (package ops/dashboard) on ADDR
// while it runs, and prints its address: the server's tick durations,
// each client's round-trip time and bandwidth, rollbacks, the last
// desyncs and resyncs.
//
// load serve runs --matches arena match servers in one process, each on
// its own port (--listen, then the next ports), and measures each tick's
// work and how late it ended once --wait clients are connected to every
// match; --procs 1 confines them to one core. load connects --clients
// thin clients to each (protocol only: they apply and acknowledge
// updates and simulate nothing) and reports bytes per second, round-trip
// times, resyncs and disconnections. ARCHITECTURE.md ("Operations")
// gives the figures they measured and how.
package main
