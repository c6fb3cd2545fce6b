// Package signal pairs the peers of a WebRTC mesh: a small WebSocket
// signalling server ([Server]) and its client ([Join]).
//
// WebRTC peers cannot reach each other before they have exchanged session
// descriptions (offers and answers) and ICE candidates through some other
// channel. This package is that channel, and nothing more: it carries no
// game traffic. Package github.com/rewindgo/rewind/contrib/webrtc builds a
// transport.PacketConn on top of it.
//
// A room is a URL path, /room/NAME?n=N: the first peer to connect creates
// room NAME for N peers (2..[MaxPeers]; default 2), the next ones join it,
// and each is given its index in the room, 0..N-1, in the order they
// joined ([TypeWelcome]). Once N peers are in, every one of them is told
// that the room is complete ([TypeReady]); from then on each peer sends
// offers, answers and candidates to another by index ([TypeOffer],
// [TypeAnswer], [TypeCandidate]) and the server relays them, stamped with
// the sender's index. A peer that leaves is announced to the others
// ([TypeLeave]). A room that is full refuses more peers; it is deleted when
// its last peer leaves or when it expires ([ServerConfig.RoomTTL]), which
// disconnects the peers still in it.
//
// Messages are JSON objects ([Message]) in WebSocket text frames. Every
// message from the network is hostile: [Decode] bounds its size
// ([MaxMessageSize]), checks its type and indexes, and returns an error
// rather than panicking; the server drops and counts what it cannot decode
// or relay ([ServerStats]) without disturbing the other peers, and each
// peer's outgoing queue is bounded (a peer that does not read is
// disconnected).
//
// The client builds for GOOS=js GOARCH=wasm (it uses the browser's
// WebSocket there), so a game in a browser joins the same rooms as a
// native one. The server is served by "rewind signal", or mounted on a
// game's own HTTP server (Server is an http.Handler). Logging goes to an
// injected *slog.Logger and is silent by default; the package has no
// mutable global state.
package signal
