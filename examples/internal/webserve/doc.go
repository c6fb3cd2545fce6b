// Package webserve serves a game's browser build from the game's own
// HTTP server: a page (index.html), Go's wasm_exec.js and the game
// compiled for GOOS=js GOARCH=wasm, so that the page, the game and the
// game's WebSocket endpoint share one port:
//
//	page, err := webserve.New(webserve.Config{
//		Title: "rewind arena",
//		Wasm:  embedded, // web/arena.wasm when `go generate` built it
//		Build: webserve.Build{Package: ".", Dir: srcDir},
//	})
//	mux := http.NewServeMux()
//	mux.Handle("/ws", wsListener) // package transport/websocket
//	mux.Handle("/", page)
//	addr, done, err := webserve.Serve(ctx, ":8080", mux)
//
// The handler serves, under whatever prefix it is mounted at
// (http.StripPrefix works; every URL in the page is relative):
//
//   - "" and "index.html": Config.Page, or a plain page that runs the game
//     full-window and shows what it is doing while the wasm loads;
//   - "wasm_exec.js": the support script of Go's js/wasm port, a copy of
//     $(go env GOROOT)/lib/wasm/wasm_exec.js (Go 1.26) embedded here; the
//     wasm must be built by the same Go release;
//   - "game.wasm": the game (Content-Type application/wasm);
//   - "report": with Config.Report, a POST whose body (at most
//     Config.MaxReportBytes) is handed to Report: a browser build sends its
//     summary there for tests and CI.
//
// # Where the wasm comes from
//
// A wasm can only be embedded after it has been built, and a clean clone
// has none, yet `go run ./arena server --web :8080` must work from one.
// The scheme:
//
//  1. The game has a directory embedded into its native build (say web/,
//     holding a README so that the embed pattern matches in a clean clone)
//     and a go:generate line that builds the wasm into it:
//     `go generate ./arena` makes web/arena.wasm, and the next native
//     build embeds it. Config.Wasm and Config.WasmFile name it. The .wasm
//     is not committed (git ignores it): it is large and would go stale.
//  2. When the file is absent, the handler builds the wasm itself with
//     the local Go toolchain (`go build` with GOOS=js GOARCH=wasm, of
//     Build.Package in Build.Dir) into Config.CacheDir, and logs that it
//     does so. Prepare starts the build at once; otherwise the first
//     request for game.wasm does, and waits for it. Go's build cache makes
//     the build quick after the first one, and it runs on every start, so
//     the served wasm is never older than the sources.
//  3. With neither (no embedded file, no Build.Package, or no Go
//     toolchain), game.wasm answers 503 with the reason, and the page
//     shows it.
//
// A deployment embeds (step 1) and needs no toolchain; a developer's
// `go run` builds on demand (step 2).
//
// The package has no mutable package-level state; logging goes to
// Config.Logger, silent by default.
package webserve
