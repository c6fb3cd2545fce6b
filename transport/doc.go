// Package transport is rewind's network layer: unreliable datagram conns for
// peer-to-peer rollback sessions, over real UDP or over a simulated network,
// and message conns with channels for client/server replication.
//
// A rollback session sends a few small datagrams to each peer and polls for
// new ones once per frame, and must never stall the game loop. [PacketConn]
// is shaped for that: Send copies the payload and returns at once, Receive
// returns the next waiting datagram or reports that none is waiting, and
// every receive queue is bounded (overflow is dropped and counted in
// [Stats]). Peers are identified by [netip.AddrPort], a comparable value
// usable as a map key. Payloads are at most [MaxPacketSize] bytes.
//
// Implementations:
//
//   - [UDPConn], from [ListenUDP]: a UDP socket from the standard library,
//     with a background reader filling a ring of reusable buffers.
//   - [PacketNetworkConn], from [PacketNetwork.Listen]: an endpoint of a
//     deterministic, seeded, in-process [PacketNetwork] with per-link
//     latency, jitter, loss, duplication, reordering, bandwidth caps and
//     partitions ([LinkConfig]).
//     It is timed with the time package, so inside a testing/synctest bubble
//     it runs on virtual time: a scenario replays exactly from its seed and
//     finishes instantly.
//
// [Proxy] applies the same link conditions to real UDP traffic between two
// programs; [Condition] wraps a conn so that what it sends goes through them
// (each peer of a game wraps its own, with no proxy in between).
//
// For client/server games, [MessageConn] carries whole messages on three
// channels: [ReliableOrdered], [ReliableUnordered] and [Unreliable]. It is
// polled the same way (Send queues, Receive never blocks), and every queue
// is bounded by [MessageLimits]. Implementations:
//
//   - [MessageNetworkConn], from [MessageNetwork.Dial] and
//     [MessageNetworkListener.Accept]: a deterministic, seeded, in-process
//     network for tests and listen servers, with the same [LinkConfig]
//     conditions applied per message
//     (reliable messages are delayed by retransmissions instead of lost).
//   - The QUIC conn of package transport/quic, for the Internet. It
//     implements [Batcher]: a tick's unreliable messages share a datagram.
//   - The WebSocket conn of package transport/websocket, for browsers
//     (every channel rides one TCP stream).
//
// Everything that arrives from the network is treated as hostile: datagrams
// longer than the limit are dropped and counted, queues have caps, and
// nothing in this package decodes payloads. Logging goes to an injected
// *slog.Logger and is silent by default. The package has no mutable global
// state; each PacketNetwork and Proxy owns its random number generators.
package transport
