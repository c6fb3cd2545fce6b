package main

import (
	"testing"
	"time"
)

// TestNetGraph: the graph keeps the last graphSamples frames, oldest
// first, and its rates are bytes per second over the last second.
func TestNetGraph(t *testing.T) {
	var g netGraph
	if g.last() != (sample{}) {
		t.Fatal("an empty graph has a last sample")
	}
	for i := range graphSamples + 10 {
		g.add(sample{in: 100, out: 50, dt: 10 * time.Millisecond, depth: i})
	}
	if g.n != graphSamples || g.at(0).depth != 10 || g.last().depth != graphSamples+9 {
		t.Fatalf("held %d, oldest %d, newest %d", g.n, g.at(0).depth, g.last().depth)
	}
	in, out := g.rates()
	if in != 10000 || out != 5000 {
		t.Fatalf("rates %v in, %v out; want 10000 and 5000 B/s (100 and 50 bytes every 10 ms)", in, out)
	}
}
