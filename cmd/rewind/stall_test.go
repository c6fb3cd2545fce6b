package main

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"
)

// TestServerDemoStall: when the whole demo loop stalls (a loaded machine:
// the server and every client run in it), no client heard anything for
// the stall's length, but the network was never interrupted: no client
// asks for a resync (ResyncAfter is well below the stall), and all
// converge. Before, every client did, which is why, in one of two
// "demo server --disrupt 3s" runs on a loaded machine, all four clients
// resynced instead of only the one cut off.
func TestServerDemoStall(t *testing.T) {
	t.Parallel()
	o := serverOptions{
		Clients: 3, Entities: 60, Ticks: 150, Seed: 2, Priority: 1,
		Latency: 5 * time.Millisecond, Drain: 300 * time.Millisecond, MaxDrain: 5 * time.Second,
		ConnectTimeout: 10 * time.Second, ResyncAfter: 300 * time.Millisecond,
		stall: time.Second, stallAt: 60,
	}
	sum, err := runServerDemo(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(sum)
	if sum.Resyncs != 0 || !sum.Converged || !sum.ok() {
		t.Errorf("after a 1 s stall of the loop: %d resyncs %v, converged %v; want none and converged:\n%s",
			sum.Resyncs, sum.ResyncReasons, sum.Converged, js)
	}
}
