package webserve

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rewindgo/rewind/ops/dashboard"
)

// Paths the handler serves, relative to where it is mounted.
const (
	// PagePath is the page; the empty path serves it too.
	PagePath = "index.html"
	// WasmExecPath is Go's wasm_exec.js.
	WasmExecPath = "wasm_exec.js"
	// WasmPath is the game's wasm.
	WasmPath = "game.wasm"
	// ReportPath receives POSTed reports when Config.Report is set.
	ReportPath = "report"
)

// DefaultMaxReportBytes is the default Config.MaxReportBytes: 64 KiB.
const DefaultMaxReportBytes = 64 << 10

// ErrNoWasm is the error of a handler that has no wasm to serve: none
// embedded and none it could build.
var ErrNoWasm = errors.New("webserve: no wasm")

//go:embed wasm_exec.js
var wasmExec []byte

//go:embed page.html
var defaultPage string

// Config configures New. The zero value serves the default page and
// wasm_exec.js, and answers game.wasm with 503.
type Config struct {
	// Title is the default page's title. Empty means "rewind".
	Title string
	// Page, when not nil, is served as index.html instead of the default
	// page. It should load WasmExecPath and WasmPath by relative URLs.
	Page []byte
	// Wasm holds a prebuilt wasm (typically an embed.FS filled by `go
	// generate`); nil means none.
	Wasm fs.FS
	// WasmFile is the wasm's name in Wasm. Empty means "game.wasm".
	WasmFile string
	// Build says how to build the wasm when Wasm does not hold WasmFile.
	Build Build
	// CacheDir is where an on-demand build is written. Empty means
	// "rewind-webserve" in os.UserCacheDir (or os.TempDir without one).
	CacheDir string
	// Report, when not nil, receives the body of each POST to ReportPath,
	// on the request's goroutine. The body belongs to Report.
	Report func(body []byte)
	// MaxReportBytes bounds a report's body; a longer one is refused with
	// 413. Zero means DefaultMaxReportBytes.
	MaxReportBytes int
	// Logger receives what the handler does (which wasm it serves, build
	// progress). Nil means silent.
	Logger *slog.Logger
}

// Build says how to build a game's wasm with the local Go toolchain.
type Build struct {
	// Package is the main package to build, as `go build` takes it (an
	// import path, or a directory relative to Dir such as "."). Empty
	// means no on-demand build.
	Package string
	// Dir is the directory `go build` runs in, inside the game's module.
	// Empty means the current directory. A game can find its own source
	// directory with runtime.Caller in a file of its main package.
	Dir string
	// Go is the go command. Empty means "go" on the PATH.
	Go string
}

// Handler serves a game's page, wasm_exec.js and wasm; see the package
// documentation. It is an http.Handler safe for concurrent use.
type Handler struct {
	cfg  Config
	page []byte
	log  *slog.Logger

	once   sync.Once
	done   chan struct{} // closed when the wasm is ready or failed
	wasm   []byte        // embedded, or nil
	path   string        // built file, when not embedded
	mod    time.Time
	err    error
	source string
}

// New returns a handler for cfg. It checks cfg and renders the page; it
// does not build anything (see Prepare).
func New(cfg Config) (*Handler, error) {
	if cfg.Title == "" {
		cfg.Title = "rewind"
	}
	if cfg.WasmFile == "" {
		cfg.WasmFile = WasmPath
	}
	if cfg.MaxReportBytes <= 0 {
		cfg.MaxReportBytes = DefaultMaxReportBytes
	}
	if cfg.Build.Go == "" {
		cfg.Build.Go = "go"
	}
	if cfg.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		cfg.CacheDir = filepath.Join(dir, "rewind-webserve")
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, done: make(chan struct{})}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.page = cfg.Page
	if h.page == nil {
		var b bytes.Buffer
		t := template.Must(template.New("page").Parse(defaultPage))
		if err := t.Execute(&b, struct{ Title string }{cfg.Title}); err != nil {
			return nil, fmt.Errorf("webserve: page: %w", err)
		}
		h.page = b.Bytes()
	}
	return h, nil
}

// Prepare makes the wasm ready now rather than at its first request:
// the embedded one, or an on-demand build, which it waits for. It
// returns the error game.wasm would answer with (matching ErrNoWasm
// when there is no wasm to serve). Calling it in a goroutine at start
// overlaps the build with the rest of the start-up.
func (h *Handler) Prepare(ctx context.Context) error {
	h.once.Do(func() { go h.load() })
	select {
	case <-h.done:
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Source describes where the served wasm comes from ("embedded
// arena.wasm", or the built file's path); empty until Prepare returned
// nil or game.wasm was served.
func (h *Handler) Source() string {
	select {
	case <-h.done:
		return h.source
	default:
		return ""
	}
}

// load finds or builds the wasm; it runs once, in its own goroutine, so
// that a request giving up does not cancel the build.
func (h *Handler) load() {
	defer close(h.done)
	if h.cfg.Wasm != nil {
		b, err := fs.ReadFile(h.cfg.Wasm, h.cfg.WasmFile)
		if err == nil && len(b) > 0 {
			h.wasm, h.mod, h.source = b, time.Now(), "embedded "+h.cfg.WasmFile
			h.log.Info("webserve: serving the embedded wasm", "file", h.cfg.WasmFile, "bytes", len(b))
			return
		}
	}
	if h.cfg.Build.Package == "" {
		h.err = fmt.Errorf("%w: %s is not embedded and no package to build is configured", ErrNoWasm, h.cfg.WasmFile)
		return
	}
	path, err := h.build()
	if err != nil {
		h.err = fmt.Errorf("%w: %s is not embedded and building it failed: %v", ErrNoWasm, h.cfg.WasmFile, err)
		h.log.Error("webserve: wasm build failed", "err", err)
		return
	}
	st, err := os.Stat(path)
	if err != nil {
		h.err = fmt.Errorf("%w: %v", ErrNoWasm, err)
		return
	}
	h.path, h.mod, h.source = path, st.ModTime(), path
}

// build runs go build for js/wasm into the cache directory and returns
// the file's path.
func (h *Handler) build() (string, error) {
	b := h.cfg.Build
	dir := b.Dir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(h.cfg.CacheDir, 0o755); err != nil {
		return "", err
	}
	key := sha256.Sum256([]byte(abs + "\x00" + b.Package))
	name := strings.TrimSuffix(h.cfg.WasmFile, ".wasm") + "-" + hex.EncodeToString(key[:6]) + ".wasm"
	out := filepath.Join(h.cfg.CacheDir, name)
	tmp, err := os.CreateTemp(h.cfg.CacheDir, name+".*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	h.log.Info("webserve: no embedded wasm (go generate builds one); building it with the local Go toolchain",
		"package", b.Package, "dir", abs, "out", out)
	start := time.Now()
	cmd := exec.Command(b.Go, "build", "-o", tmp.Name(), b.Package)
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return "", fmt.Errorf("%s build %s (GOOS=js GOARCH=wasm, in %s): %v: %s", b.Go, b.Package, abs, err, msg)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	h.log.Info("webserve: wasm built", "out", out, "took", time.Since(start).Round(time.Millisecond))
	return out, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	switch p {
	case "", PagePath:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(h.page)
	case WasmExecPath:
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(wasmExec)
	case WasmPath:
		h.serveWasm(w, r)
	case ReportPath:
		h.serveReport(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) serveWasm(w http.ResponseWriter, r *http.Request) {
	if err := h.Prepare(r.Context()); err != nil {
		if r.Context().Err() == nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
		return
	}
	w.Header().Set("Content-Type", "application/wasm")
	w.Header().Set("Cache-Control", "no-cache")
	if h.wasm != nil {
		http.ServeContent(w, r, WasmPath, h.mod, bytes.NewReader(h.wasm))
		return
	}
	f, err := os.Open(h.path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, WasmPath, h.mod, f)
}

func (h *Handler) serveReport(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Report == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.cfg.MaxReportBytes)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	h.cfg.Report(body)
	w.WriteHeader(http.StatusNoContent)
}

// Serve serves h on addr (host:port; port 0 picks one) until ctx is done,
// with a bounded header read time. It returns the address it listens on
// and a channel that yields the server's error (nil after ctx ended) and
// is then closed. It is ops/dashboard's Serve: the same HTTP server for a
// page as for the dashboard (hijacked conns, such as WebSockets, are their
// owners' to close).
func Serve(ctx context.Context, addr string, h http.Handler) (net.Addr, <-chan error, error) {
	return dashboard.Serve(ctx, addr, h)
}
