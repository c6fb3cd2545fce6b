package main

import (
	"context"
	"encoding/json"
	"testing"
)

// A load server with two matches and thin clients against both: every
// client connects and receives the whole world, and the server measures
// its ticks while they are connected.
func TestLoadServeAndClients(t *testing.T) {
	// Not parallel: real-time load beside the timing-sensitive demo tests
	// would starve their loops (a stall taken for a network interruption).
	var serveOut, serveErr syncBuffer
	served := make(chan int, 1)
	go func() {
		served <- run(context.Background(), []string{"load", "serve", "--matches", "2", "--entities", "50", "--wait", "2",
			"--wait-for", "60s", "--duration", "1s", "--listen", "127.0.0.1:17931", "--json"}, &serveOut, &serveErr)
	}()
	var out, errOut syncBuffer
	if code := run(context.Background(), []string{"load", "--addr", "127.0.0.1:17931", "--matches", "2", "--clients", "2",
		"--duration", "500ms", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("load: exit %d: %s", code, errOut.String())
	}
	var c clientsSummary
	if err := json.Unmarshal([]byte(out.String()), &c); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if c.Clients != 4 || c.Connected != 4 || c.EntitiesMin != 50 || c.InPerSecClient <= 0 || c.Disconnected != 0 {
		t.Fatalf("clients summary %+v", c)
	}
	if code := <-served; code != 0 {
		t.Fatalf("load serve: exit %d: %s", code, serveErr.String())
	}
	var s serveSummary
	if err := json.Unmarshal([]byte(serveOut.String()), &s); err != nil {
		t.Fatalf("%v: %s", err, serveOut.String())
	}
	if s.Matches != 2 || len(s.PerMatch) != 2 || s.CPUPerSec <= 0 {
		t.Fatalf("serve summary %+v", s)
	}
	for _, m := range s.PerMatch {
		if m.Clients != 2 || m.Ticks < 30 || m.P50MS <= 0 || m.EndP99MS < m.P50MS {
			t.Fatalf("match %+v", m)
		}
	}
}

func TestLoadUsage(t *testing.T) {
	// Not parallel: real-time load beside the timing-sensitive demo tests
	// would starve their loops (a stall taken for a network interruption).
	var out, errOut syncBuffer
	if code := run(context.Background(), []string{"load", "--clients", "0"}, &out, &errOut); code != 2 {
		t.Fatalf("--clients 0: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"help", "load", "serve"}, &out, &errOut); code != 0 {
		t.Fatalf("help load serve: exit %d", code)
	}
}
