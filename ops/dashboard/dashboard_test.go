package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/dashboard"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rollback"
)

type pos struct{ X, Y float32 }

func newServer(t *testing.T) (*replicate.Server, *metrics.Server) {
	p := replicate.NewProtocol()
	if _, err := replicate.Component[pos](p, replicate.WithOwnRule()); err != nil {
		t.Fatal(err)
	}
	srv, err := replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, metrics.NewServer(srv, metrics.ServerConfig{})
}

func get(t *testing.T, url string) (string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b), resp.Header.Get("Content-Type")
}

// The page, its script and the figures are served, also under a prefix.
func TestServesPageAndFigures(t *testing.T) {
	srv, m := newServer(t)
	srv.Send()
	m.Sample(3 * time.Millisecond)
	sess := metrics.NewSession(metrics.SessionConfig{Name: "peer 0"})
	sess.Sample(rollback.SessionStats{Frame: 42}, nil, nil)
	h := dashboard.New(dashboard.Config{Title: "match 1", Server: m, Sessions: []*metrics.Session{sess}})
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", h)) // the one line a game adds
	ts := httptest.NewServer(mux)
	defer ts.Close()

	body, ct := get(t, ts.URL+"/ops/")
	if !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, `id="plot-tick"`) || !strings.Contains(body, `src="static/dash.js"`) {
		t.Fatalf("page (%s): %.200s", ct, body)
	}
	if js, _ := get(t, ts.URL+"/ops/static/dash.js"); !strings.Contains(js, "EventSource(\"events\")") {
		t.Fatalf("script: %.200s", js)
	}
	body, _ = get(t, ts.URL+"/ops/figures")
	var v dashboard.View
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.Title != "match 1" || v.Server == nil || v.Server.Samples != 1 || v.Server.LastTickMS != 3 ||
		len(v.Sessions) != 1 || v.Sessions[0].Frame != 42 {
		t.Fatalf("figures %s", body)
	}
}

// The event stream sends the figures as they change, until the client
// leaves.
func TestEventsFollowTheMatch(t *testing.T) {
	srv, m := newServer(t)
	h := dashboard.New(dashboard.Config{Server: m, Interval: 5 * time.Millisecond})
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	next := func() dashboard.View {
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var v dashboard.View
				if err := json.Unmarshal([]byte(data), &v); err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return dashboard.View{}
	}
	if v := next(); v.Server.Samples != 0 {
		t.Fatalf("first event: %d samples", v.Server.Samples)
	}
	for k := 1; k <= 3; k++ {
		srv.Send()
		m.Sample(time.Millisecond)
		for {
			if v := next(); v.Server.Samples == uint64(k) {
				break
			} else if v.Server.Samples > uint64(k) {
				t.Fatalf("samples %d, want %d", v.Server.Samples, k)
			}
		}
	}
}

// Serve serves until its context ends.
func TestServe(t *testing.T) {
	_, m := newServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	addr, done, err := dashboard.Serve(ctx, "127.0.0.1:0", dashboard.New(dashboard.Config{Server: m}))
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := get(t, "http://"+addr.String()+"/figures"); !strings.Contains(body, `"server"`) {
		t.Fatalf("figures %s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
