// Package websocket implements transport.MessageConn over WebSocket
// (RFC 6455) with github.com/coder/websocket, for clients that cannot
// speak QUIC: browsers. Dial builds for GOOS=js GOARCH=wasm (the
// browser's WebSocket dials); the Listener, an http.Handler, is native
// only. A replicate.Server serves QUIC and WebSocket clients at once:
// call its Serve once per listener.
//
// A Listener mounts on the game's own HTTP server, so that the page, the
// wasm and the WebSocket endpoint share one port:
//
//	ln := websocket.NewListener(websocket.Config{})
//	mux.Handle("/ws", ln)
//	go server.Serve(ctx, ln) // beside server.Serve(ctx, quicListener)
//
// or serves on its own with Listen. Clients dial "ws://host:port/ws" (or
// "wss://" behind TLS); the subprotocol is "rewind.ws.v1", and the
// client's hello and the server's welcome, both within
// Config.HandshakeTimeout, open the conn.
//
// # Channels over one stream
//
// A WebSocket is one reliable, ordered byte stream over TCP. Every
// message travels as one binary WebSocket message whose first byte is its
// channel (frame.go documents the format), and:
//
//   - ReliableOrdered: as on QUIC, delivered once and in order.
//   - ReliableUnordered: delivered once, and in fact in order: TCP offers
//     nothing better, so a loss holds back these messages as well.
//   - Unreliable: also sent over the stream, so it is never lost in
//     transit, never duplicated, never reordered with the other channels.
//     What stays unreliable is the sender's queue: at most
//     Config.UnreliableBacklog (8) unreliable messages wait for a socket
//     that is backed up (TCP's send buffer full: a slow or lossy path);
//     a newer one pushes the oldest out, dropped and counted in
//     ChannelStats.DroppedSendQueue. State that is resent until
//     acknowledged or superseded, such as replication's mutations, thus
//     queues behind a stall only as much as the newest few messages,
//     rather than every tick of it.
//
// What loss does: over QUIC, a lost datagram is gone, and the next
// mutation carries newer values; over TCP, a lost segment is
// retransmitted after about a round trip (fast retransmit) or the
// retransmission timeout (at least 200 ms on Linux), and every byte
// behind it, all channels, waits (head-of-line blocking). Loss becomes
// delay and jitter. Measured by replicate's TestStreamVersusDatagrams
// (in-process, seeded, the same 100 ms RTT and 10% loss for both, a
// stream modelled as every message on the ordered channel):
// see ARCHITECTURE.md, "Browsers: WebSocket", for the figures.
//
// # Limits
//
// The same hostile-client limits as transport/quic: every queue is
// bounded (transport.MessageLimits; a reliable message that would
// overflow the receive queue closes the conn with
// transport.ErrReceiveOverflow), a reliable message over MaxMessageSize
// closes it with transport.ErrProtocol and an unreliable one over
// MaxUnreliableSize is dropped and counted, received buffers grow with
// the bytes that arrived and the conns of a Listener share
// Config.MaxBufferedBytes beyond 64 KiB each, a client that does not say
// hello within Config.HandshakeTimeout is dropped before Accept sees it,
// at most Config.MaxPending upgrades wait for their hello (more are
// answered 503) and Config.AcceptBacklog for Accept (more are refused:
// Dial fails with transport.ErrRefused). Malformed frames (an unknown
// kind, a text message, a control frame of the wrong length) close the
// conn with transport.ErrProtocol; nothing a peer sends panics or
// allocates beyond what arrived.
//
// Each side pings every Config.PingInterval (1 s): the pings keep an idle
// conn alive, measure MessageStats.RTT, and a conn that hears nothing
// for Config.IdleTimeout closes with transport.ErrTimeout. Close reasons
// travel in a close frame of this package ahead of the WebSocket close
// (whose own reason is limited to 123 bytes), so the peer's Err is a
// *transport.CloseError with the reason and its cause (ErrProtocol,
// ErrReceiveOverflow, ErrRefused). A browser tab that closes without
// one gives a CloseError with Remote set and the WebSocket close reason
// ("going away").
//
// MessageStats counts WebSocket frames (this package's frame plus the
// WebSocket header); TCP/IP headers, acknowledgements and
// retransmissions are the kernel's and are not counted, and PacketsLost
// is 0 (TCP hides losses).
//
// Goroutines: each Conn runs a reader, a writer and a pinger, which end
// when it closes (Close waits for them, at most Config.CloseTimeout for
// the closing handshake). A Listener runs none of its own beyond
// Listen's HTTP server; each upgrade runs on its HTTP request's
// goroutine until the conn is queued.
//
// Logging goes to Config.Logger and is silent by default. The package has
// no mutable global state.
package websocket
