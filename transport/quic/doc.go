// Package quic implements transport.MessageConn over QUIC (RFC 9000) with
// github.com/quic-go/quic-go, for client/server games on the Internet.
//
// The three channels map onto QUIC like this:
//
//   - ReliableOrdered: one long-lived bidirectional stream that the dialer
//     opens. Messages are length-prefixed (a minimal uvarint, then the
//     bytes); a lost packet holds back the messages behind it, as TCP would.
//   - ReliableUnordered: one unidirectional stream per message, carrying one
//     length-prefixed frame. QUIC retransmits each stream on its own, so a
//     loss delays only that message.
//   - Unreliable: QUIC DATAGRAM frames (RFC 9221): never retransmitted,
//     never duplicated, at most Conn.MaxUnreliableSize bytes. A datagram
//     packs one or more messages (a count byte, then each message but the
//     last with a length prefix): the messages waiting together go out
//     together. Conn implements transport.Batcher, so a game loop that
//     calls Hold before a tick's sends and Flush after them (as
//     replicate.Server does) has the tick's unreliable messages share
//     datagrams and its reliable ones handed to QUIC at the same moment,
//     which packs them into the same packets where they fit. In `rewind
//     demo predict`, with predict.ClientFrame holding its acknowledgements
//     for its input, this took a client's downstream from 142 to 105 QUIC
//     packets a second (about 30 of them QUIC's own acknowledgements).
//
// Send never blocks: each channel has a bounded send queue drained by a
// writer goroutine, and reader goroutines fill one bounded receive queue
// that Receive polls (transport.MessageLimits sets every bound). A reliable
// message announced longer than MessageLimits.MaxMessageSize, malformed
// framing, or a stream the peer may not open closes the conn with
// transport.ErrProtocol; a peer whose reliable messages overflow the
// receive queue is disconnected with transport.ErrReceiveOverflow.
// Neither disturbs other conns of the same Listener. Close reasons travel
// in the QUIC CONNECTION_CLOSE frame and come back from the peer's Err as a
// *transport.CloseError.
//
// # Memory bound
//
// A peer's announced lengths cost nothing: the buffer of a reliable message
// grows with the bytes that arrived (it starts at 512 bytes and doubles, so
// it is at most twice what arrived), never with the length the peer
// announced. What a conn holds of received data is bounded by:
//
//   - reliable messages waiting for Receive or still arriving:
//     MessageLimits.ReceiveQueueBytes (8 MiB by default) and
//     ReceiveQueueMessages, counting each buffer's capacity;
//   - datagrams waiting for Receive: UnreliableQueue messages of at most
//     MaxUnreliableSize bytes each, each holding on to the datagram it came
//     in (at most 1452 bytes: 256 × 1452 bytes by default);
//   - stream data quic-go has received and the conn not yet read:
//     Config.ReceiveWindow (1 MiB by default), QUIC flow control.
//
// The conns of one Listener share a further cap: beyond the first 64 KiB of
// each, their reliable and unreliable buffers together hold at most
// Config.MaxBufferedBytes (64 MiB by default). A conn that would need more
// is closed with transport.ErrReceiveOverflow (a datagram is dropped), so
// the server holds at most conns × 64 KiB + MaxBufferedBytes of received
// messages, and a client that keeps its few small messages under 64 KiB is
// never refused because of what other conns hold. With 100 hostile peers
// that each announce 8 MiB of messages and send 256 KiB, a replication
// server's heap (peers included, in one process) grew from 0.7 to 21.5 MiB,
// where reserving the announced lengths took 815 MiB.
//
// Connections use TLS 1.3 (QUIC requires it) with the ALPN protocol
// "rewind/2" (version 1 sent one message per datagram; the handshake
// between versions fails on ALPN, with TLS's "no application protocol"). SelfSigned makes a certificate for development; in
// production, pass a *tls.Config with a real certificate in Config.TLS.
// Certificate verification is never skipped by default.
//
// Goroutines: a Listener runs one accept loop; each Conn runs a handful of
// readers and writers (plus one per ReliableUnordered message being
// received). All of them end when the Conn is closed, by either side, or
// when the Listener it came from is closed or its context is cancelled.
// Close returns after they have ended.
//
// Logging goes to Config.Logger and is silent by default. The package has
// no mutable global state.
package quic
