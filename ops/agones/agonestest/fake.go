// Package agonestest is a fake of the Agones SDK server's REST API for
// tests: it answers the endpoints package agones uses, keeps a
// GameServer object whose state follows the calls (Ready, Allocate,
// Reserve, Shutdown, labels and annotations), streams it to watchers at
// every change, and records every call.
//
// Serve it over loopback (httptest.NewServer(fake)) or in memory
// (fake.Client(), which needs no network and works inside
// testing/synctest bubbles).
package agonestest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/rewindgo/rewind/ops/agones"
)

// Call is one request the fake received.
type Call struct {
	Method, Path string
	// Body is the request's body (JSON for /reserve and /metadata/*).
	Body string
}

// Fake is an in-process Agones SDK server. The zero value is not usable;
// call New.
type Fake struct {
	mu       sync.Mutex
	gs       agones.GameServer
	calls    []Call
	watchers []chan agones.GameServer
	down     bool // answer nothing (the sidecar is not up yet)
	changed  chan struct{}
}

// New returns a fake whose GameServer is called name, in state
// Scheduled.
func New(name string) *Fake {
	return &Fake{
		gs:      agones.GameServer{ObjectMeta: agones.ObjectMeta{Name: name, Namespace: "default"}, Status: agones.Status{State: agones.StateScheduled, Address: "127.0.0.1"}},
		changed: make(chan struct{}),
	}
}

// SetDown makes the fake refuse connections (true), as a sidecar that
// has not started yet, or serve again (false).
func (f *Fake) SetDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// Calls returns the calls received so far, in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Paths returns "METHOD /path" of every call received, in order, leaving
// out health pings (which depend on timing).
func (f *Fake) Paths() []string {
	var out []string
	for _, c := range f.Calls() {
		if c.Path != "/health" {
			out = append(out, c.Method+" "+c.Path)
		}
	}
	return out
}

// Count counts the calls of path.
func (f *Fake) Count(path string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Path == path {
			n++
		}
	}
	return n
}

// GameServer returns the fake's GameServer object.
func (f *Fake) GameServer() agones.GameServer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return clone(f.gs)
}

// Changed returns a channel closed at the next change of the
// GameServer object or the next call.
func (f *Fake) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// SetState sets the GameServer's state as the Agones controller does (an
// allocation through the Kubernetes API: SetState(agones.StateAllocated))
// and tells the watchers.
func (f *Fake) SetState(state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gs.Status.State = state
	f.notify()
}

// notify sends the object to every watcher and wakes Changed; f.mu held.
func (f *Fake) notify() {
	for _, w := range f.watchers {
		select {
		case w <- clone(f.gs):
		default: // a watcher that does not read loses intermediate states
		}
	}
	f.wake()
}

// wake closes the Changed channel; f.mu held.
func (f *Fake) wake() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func clone(gs agones.GameServer) agones.GameServer {
	c := gs
	c.ObjectMeta.Labels = cloneMap(gs.ObjectMeta.Labels)
	c.ObjectMeta.Annotations = cloneMap(gs.ObjectMeta.Annotations)
	c.Status.Ports = append([]agones.Port(nil), gs.Status.Ports...)
	return c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// ServeHTTP answers one request of the SDK's REST API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, Call{Method: r.Method, Path: r.URL.Path, Body: string(body)})
	route := r.Method + " " + r.URL.Path
	switch route {
	case "POST /ready":
		f.gs.Status.State = agones.StateReady
	case "POST /health": // changes nothing of the object
		f.wake()
		f.mu.Unlock()
		io.WriteString(w, "{}")
		return
	case "POST /allocate":
		f.gs.Status.State = agones.StateAllocated
	case "POST /reserve":
		var in struct {
			Seconds json.Number `json:"seconds"`
		}
		if json.Unmarshal(body, &in) != nil {
			f.mu.Unlock()
			http.Error(w, `{"error":"bad body"}`, http.StatusBadRequest)
			return
		}
		f.gs.Status.State = agones.StateReserved
	case "POST /shutdown":
		f.gs.Status.State = agones.StateShutdown
	case "PUT /metadata/label", "PUT /metadata/annotation":
		var kv struct{ Key, Value string }
		if json.Unmarshal(body, &kv) != nil || kv.Key == "" {
			f.mu.Unlock()
			http.Error(w, `{"error":"want {\"key\": ..., \"value\": ...}"}`, http.StatusBadRequest)
			return
		}
		m := &f.gs.ObjectMeta.Labels
		if strings.HasSuffix(r.URL.Path, "annotation") {
			m = &f.gs.ObjectMeta.Annotations
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)["agones.dev/sdk-"+kv.Key] = kv.Value
	case "GET /gameserver":
		gs := clone(f.gs)
		f.wake()
		f.mu.Unlock()
		writeJSON(w, gs)
		return
	case "GET /watch/gameserver":
		f.watch(w, r) // unlocks
		return
	default:
		f.wake()
		f.mu.Unlock()
		http.Error(w, `{"error":"unknown endpoint"}`, http.StatusNotFound)
		return
	}
	f.notify()
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, "{}")
}

// watch streams the object, now and at every change, as the gateway
// does: one {"result": {...}} line each. f.mu is held on entry.
func (f *Fake) watch(w http.ResponseWriter, r *http.Request) {
	ch := make(chan agones.GameServer, 16)
	ch <- clone(f.gs)
	f.watchers = append(f.watchers, ch)
	f.wake()
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		for i, c := range f.watchers {
			if c == ch {
				f.watchers = append(f.watchers[:i], f.watchers[i+1:]...)
				break
			}
		}
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case gs := <-ch:
			if enc.Encode(map[string]any{"result": gs}) != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
