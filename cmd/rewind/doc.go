// Command rewind runs rewind's demos and tools.
//
// Usage:
//
//	rewind demo [p2p] [flags]   play the demo game between N peers over UDP on loopback
//	rewind demo server          (arrives with replication)
//	rewind replay [flags] FILE  play a recording back and verify its checksums
//	rewind netsim [flags]       put any UDP program behind bad network conditions
//	rewind help [command]       print help
//
// demo p2p runs every peer (and optional spectators) in one process, each
// with its own world, rollback.P2PSession and runner.Runner, on real UDP
// sockets. Every link between two peers goes through a transport.Proxy that
// adds the configured latency, jitter, loss and duplication. It prints live
// statistics once a second and a summary at the end (one JSON object with
// --json), and exits with status 1 when the peers' confirmed checksums
// differ or a desync was detected. --record FILE records peer 0's match;
// rewind replay FILE plays it back and checks every recorded checksum.
//
// netsim forwards datagrams from --listen to --target and the replies back,
// applying the link conditions in both directions, until interrupted.
package main
