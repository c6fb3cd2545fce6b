package webserve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestServesPageScriptAndEmbeddedWasm(t *testing.T) {
	wasm := []byte("\x00asm\x01\x00\x00\x00")
	h, err := New(Config{Title: "box <game>", Wasm: fstest.MapFS{"box.wasm": {Data: wasm}}, WasmFile: "box.wasm"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/play/", http.StripPrefix("/play", h))
	for _, p := range []string{"/play/", "/play/index.html"} {
		rec := get(t, mux, p)
		body := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(body, "<title>box &lt;game&gt;</title>") ||
			!strings.Contains(body, `src="wasm_exec.js"`) || !strings.Contains(body, `fetch("game.wasm")`) {
			t.Fatalf("%s: %d %q", p, rec.Code, body)
		}
	}
	rec := get(t, mux, "/play/wasm_exec.js")
	if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), "// Copyright 2018 The Go Authors") ||
		!strings.Contains(rec.Body.String(), "globalThis.Go = class") {
		t.Fatalf("wasm_exec.js: %d %.80q", rec.Code, rec.Body.String())
	}
	rec = get(t, mux, "/play/game.wasm")
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), wasm) || rec.Header().Get("Content-Type") != "application/wasm" {
		t.Fatalf("game.wasm: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes())
	}
	if got := h.Source(); got != "embedded box.wasm" {
		t.Fatalf("Source = %q", got)
	}
	if rec := get(t, mux, "/play/nothing"); rec.Code != 404 {
		t.Fatalf("unknown path: %d", rec.Code)
	}
	if rec := get(t, mux, "/play/report"); rec.Code != 404 {
		t.Fatalf("report without Config.Report: %d", rec.Code)
	}
}

func TestNoWasmIs503WithTheReason(t *testing.T) {
	h, err := New(Config{Wasm: fstest.MapFS{"README": {Data: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prepare(context.Background()); !errors.Is(err, ErrNoWasm) {
		t.Fatalf("Prepare = %v, want ErrNoWasm", err)
	}
	rec := get(t, h, "/game.wasm")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "not embedded") {
		t.Fatalf("game.wasm: %d %q", rec.Code, rec.Body.String())
	}
}

func TestReport(t *testing.T) {
	var got []byte
	h, err := New(Config{Report: func(b []byte) { got = b }, MaxReportBytes: 16})
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/report", strings.NewReader(body)))
		return rec.Code
	}
	if code := post(`{"ok":true}`); code != http.StatusNoContent || string(got) != `{"ok":true}` {
		t.Fatalf("report: %d %q", code, got)
	}
	if code := post(strings.Repeat("x", 17)); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized report: %d", code)
	}
	if rec := get(t, h, "/report"); rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET report: %d", rec.Code)
	}
}

// TestBuildsOnDemand builds testdata/hello for js/wasm with the local
// toolchain, as a clean clone's `go run` does.
func TestBuildsOnDemand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm (a few seconds); not in -short")
	}
	h, err := New(Config{Build: Build{Package: "./testdata/hello"}, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/game.wasm")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Fatalf("game.wasm: %d, %d bytes, %.8q", resp.StatusCode, len(b), b)
	}
	if !strings.HasSuffix(h.Source(), ".wasm") {
		t.Fatalf("Source = %q", h.Source())
	}
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h, _ := New(Config{})
	addr, done, err := Serve(ctx, "127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/wasm_exec.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
