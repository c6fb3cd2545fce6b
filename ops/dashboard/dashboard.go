package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rewindgo/rewind/ops/metrics"
)

//go:embed page
var page embed.FS

// Config says what a dashboard shows. Every source is optional.
type Config struct {
	// Title heads the page (default "rewind").
	Title string
	// Server is a replication server's recorder.
	Server *metrics.Server
	// Predicts are predicting clients' recorders, Sessions rollback
	// sessions'.
	Predicts []*metrics.Predict
	Sessions []*metrics.Session
	// Interval is the period of the event stream (default 250 ms).
	Interval time.Duration
	// Logger receives serving errors (default: silent).
	Logger *slog.Logger
}

// Handler serves the dashboard. It is safe for concurrent use.
type Handler struct {
	cfg Config
	mux *http.ServeMux

	mu   sync.Mutex // guards the read buffers
	srv  metrics.ServerFigures
	pred metrics.PredictFigures
	sess metrics.SessionFigures
}

// New returns a dashboard of cfg's sources.
func New(cfg Config) *Handler {
	if cfg.Title == "" {
		cfg.Title = "rewind"
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(mustSub(page, "page"))))
	h.mux.HandleFunc("GET /figures", h.figures)
	h.mux.HandleFunc("GET /events", h.events)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	b, err := page.ReadFile("page/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

func (h *Handler) figures(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(h.View())
}

// events streams the figures every Interval until the client leaves.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	t := time.NewTicker(h.cfg.Interval)
	defer t.Stop()
	for {
		b, err := json.Marshal(h.View())
		if err != nil {
			h.cfg.Logger.Error("dashboard: encoding figures", "err", err)
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}

// Serve listens on addr and serves h until ctx is done. It returns the
// listening address (for a port 0 address) once listening, and a
// channel that yields the serving error (nil after ctx) and closes.
func Serve(ctx context.Context, addr string, h http.Handler) (net.Addr, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
		close(done)
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close() // event streams end with their requests' context
	}()
	return ln.Addr(), done, nil
}
