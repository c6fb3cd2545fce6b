//go:build !js

package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/rewindgo/rewind/examples/internal/webserve"
	"github.com/rewindgo/rewind/transport/signal"
)

//go:generate env GOOS=js GOARCH=wasm go build -o web/boxgame.wasm .

// webDir holds web/boxgame.wasm once go generate built it (and a README,
// so that the pattern matches in a clean clone).
//
//go:embed web
var webDir embed.FS

// webServer is what --web serves on one port: the page, wasm_exec.js and
// the box game's wasm (package webserve) at /, and the signalling rooms
// of package transport/signal at /room/NAME, so that the page's origin
// and the rooms' are the same and a browser needs no other server.
// Browser builds POST their --frames summaries to /report; each is passed
// to report.
func webServer(report func([]byte), log *slog.Logger) (http.Handler, *webserve.Handler, *signal.Server, error) {
	sub, err := fs.Sub(webDir, "web")
	if err != nil {
		return nil, nil, nil, err
	}
	_, file, _, _ := runtime.Caller(0)
	page, err := webserve.New(webserve.Config{
		Title: "rewind box game", Wasm: sub, WasmFile: "boxgame.wasm",
		Build:  webserve.Build{Package: ".", Dir: filepath.Dir(file)},
		Report: report, Logger: log,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	rooms := signal.NewServer(signal.ServerConfig{Logger: log})
	mux := http.NewServeMux()
	mux.Handle("/room/{name}", rooms)
	mux.Handle("/", page)
	return mux, page, rooms, nil
}

// serveWeb serves webServer on o.Web until ctx is done, prints where to
// point a browser, and returns the URL of the room this process joins.
func serveWeb(ctx context.Context, o options, stdout, stderr io.Writer) (string, error) {
	var mu sync.Mutex
	report := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stdout, "browser report: %s\n", b)
	}
	h, page, rooms, err := webServer(report, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return "", err
	}
	go page.Prepare(ctx) // an on-demand wasm build starts now, not at the first visit
	addr, _, err := webserve.Serve(ctx, o.Web, h)
	if err != nil {
		return "", err
	}
	context.AfterFunc(ctx, func() { rooms.Close() })
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	self := net.JoinHostPort(host, port)
	q := url.Values{"room": {o.Room}}
	if o.NumPlayers != 2 {
		q.Set("num-players", strconv.Itoa(o.NumPlayers))
	}
	fmt.Fprintf(stderr, "boxgame: serving the browser build on %s: open http://%s/?%s (from another machine: this machine's address, port %s)\n",
		addr, self, q.Encode(), port)
	return roomURL(fmt.Sprintf("ws://%s/room/%s", self, o.Room), o.NumPlayers)
}
