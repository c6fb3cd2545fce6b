// Package webrtc is a transport.PacketConn over WebRTC data channels, for
// peer-to-peer rollback sessions between browsers and native programs. It
// lives in the contrib module so that the library does not depend on
// github.com/pion/webrtc/v4.
//
// [Dial] joins a room of the signalling server of package
// github.com/rewindgo/rewind/transport/signal (for example "rewind
// signal", or a game's own HTTP server with a signal.Server mounted) and
// opens one peer connection to every other peer of the room: a full mesh.
// On each it opens one data channel that is unordered and never
// retransmits (Ordered false, MaxRetransmits 0): datagrams that may be
// lost or reordered, as over UDP, with DTLS encryption and congestion
// control from SCTP. The channel is negotiated out of band (Negotiated,
// ID 0), so both sides create it and neither waits for the other to
// announce it. Peer i of the room (its signalling index, 0 for the first to
// join) sends offers to the peers that joined after it and answers those
// that joined before. Dial returns once the data channel to every other
// peer is open.
//
// # Addresses
//
// A rollback session names its peers by netip.AddrPort. A Conn gives each
// member of the room a stable synthetic address from its index: peer i is
// [PeerAddr](i) = 240.0.0.(i+1):7000+i (240.0.0.0/4 is reserved and never
// routed, so the address cannot be mistaken for a real one). Every member
// of a room computes the same addresses, so a game lists its players as
// rollback.Player{Handle: i, Addr: webrtc.PeerAddr(i)} for the others and
// Local for its own index ([Conn.Index]), and rollback.NewP2P runs over the
// Conn unchanged. [Conn.LocalAddr] is PeerAddr(Index()).
//
// # ICE servers
//
// Peers on one machine or one LAN reach each other through their host
// candidates, with no server. Across the Internet a game adds STUN (and,
// for peers behind symmetric NATs, TURN) servers in [Config.ICEServers],
// for example
//
//	webrtc.Config{ICEServers: []pionwebrtc.ICEServer{
//		{URLs: []string{"stun:stun.example.org:3478"}},
//		{URLs: []string{"turn:turn.example.org:3478"}, Username: "game", Credential: "secret"},
//	}}
//
// where pionwebrtc is github.com/pion/webrtc/v4. Every peer of a room
// should use the same list. Config.Loopback (tests, two programs on one
// machine) gathers loopback and IPv4 host candidates only, no mDNS.
//
// # Browsers
//
// The package builds for GOOS=js GOARCH=wasm: pion then drives the
// browser's RTCPeerConnection, and the signalling client the browser's
// WebSocket. Browsers hide a host's local addresses behind mDNS names
// (.local) unless the page may use the camera or microphone; a native peer
// resolves them through mDNS (pion's default), or the browser is started
// with that feature off (the box game's browser test passes
// --disable-features=WebRtcHideLocalIpsWithMdns to Chromium).
//
// # Limits
//
// Send copies the payload (pion queues it in SCTP) and returns at once;
// payloads over transport.MaxPacketSize are refused with
// transport.ErrTooLarge and counted. A datagram sent while the channel's
// send buffer holds more than [Config.MaxBuffered] bytes is dropped and
// counted as a send error (transport.Stats.SendErrors), as a full socket
// would. Received datagrams wait in a bounded queue ([Config.ReceiveQueue]);
// overflow and oversize datagrams are dropped and counted. Nothing in this
// package decodes payloads; the signalling data (session descriptions,
// candidates) is bounded and checked before it reaches pion.
//
// Receive allocates nothing in steady state, but pion does, on both
// sides: BenchmarkSendReceive measured a 64-byte datagram sent and
// received on loopback at about 96 µs, 4.4 kB and 87 allocations, against
// 26 µs and none over transport's UDP conn (BenchmarkSendReceiveUDP); a
// rollback session sends a few such datagrams per frame.
//
// Logging goes to an injected *slog.Logger and is silent by default; the
// package has no mutable global state.
package webrtc
