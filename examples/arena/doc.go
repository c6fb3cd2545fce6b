// Command arena is a top-down arena shooter on rewind and Ebitengine,
// client/server over QUIC: "arena server" is the dedicated,
// authoritative server (60 ticks per second), "arena client" a player's
// window. Each client predicts its own ship and bullets (predicted
// spawns, package predict), shows the other ships interpolated (package
// predict/interp), and smooths corrections away (key C turns the
// smoothing off to show what it hides). Hit-scans are judged by the
// server with lag compensation (package lagcomp) against the ships as
// the shooter's screen showed them; shot flashes and hit markers are
// effects (package effect) that play once and vanish when a rollback
// removes them.
//
// The game is internal/shooter, the simulation of "rewind demo predict";
// this package adds the server and client loops (server.go, client.go),
// the messages (protocol.go), the window, overlays and net graph
// (game.go, graph.go) and the flags (options.go). examples/README.md
// says how to play it.
//
// It also builds for GOOS=js GOARCH=wasm: main_js.go is the browser
// client, over WebSocket (package transport/websocket), and "arena
// server --web :8080" serves it (web.go, package
// examples/internal/webserve) beside QUIC, to the same game. A client
// may also dial the WebSocket natively: --server ws://HOST:8080/ws.
package main
