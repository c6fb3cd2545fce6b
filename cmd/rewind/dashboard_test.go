package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var dashboardURL = regexp.MustCompile(`dashboard: (http://\S+/)`)

// runWithDashboard runs args with --dashboard on a free port, and calls
// check with each /figures object while the command runs until check
// reports true; it fails when the command ends first or fails.
func runWithDashboard(t *testing.T, args []string, check func(map[string]any) bool) {
	t.Helper()
	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- run(ctx, append(args, "--dashboard", "127.0.0.1:0", "--stats", "0"), &out, &errOut) }()
	url := ""
	for seen := false; !seen; {
		select {
		case c := <-code:
			t.Fatalf("ended (exit %d) before the dashboard showed the match: %s", c, errOut.String())
		case <-time.After(50 * time.Millisecond): // polling a real-time run
		}
		if url == "" {
			if m := dashboardURL.FindStringSubmatch(errOut.String() + out.String()); m != nil {
				url = m[1]
			}
			continue
		}
		resp, err := http.Get(url + "figures")
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		seen = check(v)
	}
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, errOut.String())
	}
}

// The server demo's dashboard shows its clients while it runs.
func TestServerDemoDashboard(t *testing.T) {
	// Not parallel: real-time load beside the timing-sensitive demo tests
	// would starve their loops (a stall taken for a network interruption).
	runWithDashboard(t, []string{"demo", "server", "--clients", "2", "--entities", "20", "--ticks", "120", "--latency", "5ms", "--drain", "100ms"},
		func(v map[string]any) bool {
			s, _ := v["server"].(map[string]any)
			cs, _ := s["clients"].([]any)
			return len(cs) == 2 && s["samples"].(float64) > 10
		})
}

// The P2P demo's dashboard shows every peer's session.
func TestP2PDemoDashboard(t *testing.T) {
	// Not parallel: real-time load beside the timing-sensitive demo tests
	// would starve their loops (a stall taken for a network interruption).
	runWithDashboard(t, []string{"demo", "--peers", "2", "--frames", "120", "--latency", "5ms", "--jitter", "0", "--loss", "0"},
		func(v map[string]any) bool {
			ss, _ := v["sessions"].([]any)
			if len(ss) != 2 {
				return false
			}
			s := ss[0].(map[string]any)
			return s["frame"].(float64) > 10 && len(s["peers"].([]any)) == 1
		})
}
