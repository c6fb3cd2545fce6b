//go:build !js

package main

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"

	"github.com/rewindgo/rewind/examples/internal/webserve"
	"github.com/rewindgo/rewind/transport/websocket"
)

//go:generate env GOOS=js GOARCH=wasm go build -o web/arena.wasm .

// webFiles holds web/arena.wasm when `go generate` built it (see
// web/README.md); otherwise webserve builds it on demand.
//
//go:embed web
var webFiles embed.FS

// webHandler returns the handler of --web: the page, wasm_exec.js and
// the wasm (package webserve) at /, the WebSocket listener at /ws. A
// browser client's summary POSTed to /report is printed on stderr.
func webHandler(ln *websocket.Listener, stderr io.Writer) (http.Handler, *webserve.Handler, error) {
	wasm, err := fs.Sub(webFiles, "web")
	if err != nil {
		return nil, nil, err
	}
	// The source directory for an on-demand build: this file's, or the
	// package's import path from the current directory (a -trimpath
	// build has no directory to go by).
	build := webserve.Build{Package: "github.com/rewindgo/rewind/examples/arena"}
	if _, file, _, ok := runtime.Caller(0); ok {
		if st, err := os.Stat(filepath.Dir(file)); err == nil && st.IsDir() {
			build = webserve.Build{Package: ".", Dir: filepath.Dir(file)}
		}
	}
	page, err := webserve.New(webserve.Config{
		Title:    "rewind arena",
		Wasm:     wasm,
		WasmFile: "arena.wasm",
		Build:    build,
		Report: func(body []byte) {
			fmt.Fprintf(stderr, "arena: browser client report: %s\n", body)
		},
		Logger: slog.New(slog.NewTextHandler(stderr, nil)),
	})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", ln)
	mux.Handle("/", page)
	return mux, page, nil
}

// browseURL is the address to open for a server listening on a.
func browseURL(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok && (t.IP == nil || t.IP.IsUnspecified()) {
		return fmt.Sprintf("http://localhost:%d/", t.Port)
	}
	return fmt.Sprintf("http://%v/", a)
}
