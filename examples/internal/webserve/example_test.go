package webserve_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/rewindgo/rewind/examples/internal/webserve"
)

// A game mounts its page beside its WebSocket endpoint on one mux.
func Example() {
	page, err := webserve.New(webserve.Config{
		Title: "my game",
		// Wasm: an embed.FS that `go generate` filled, and
		// Build: webserve.Build{Package: "."} for a clean clone.
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", http.NotFoundHandler()) // the game's WebSocket listener
	mux.Handle("/", page)

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/wasm_exec.js", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(page.Prepare(context.Background()) != nil) // nothing to serve as game.wasm
	// Output:
	// 200 text/javascript; charset=utf-8
	// true
}
