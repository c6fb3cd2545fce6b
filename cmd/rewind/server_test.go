package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// TestServerDemo runs the server demo in this process: a server and two
// clients over QUIC on loopback through lossy proxies, 200 ticks. Every
// client must converge, every message arrive, the numbers make sense, and
// nothing may be left running afterwards.
func TestServerDemo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a 4-second demo in real time")
	}
	checkGoroutines := trackGoroutines(t)
	o := serverOptions{
		Clients: 2, Entities: 120, Ticks: 200, Seed: 3, Priority: 0.5, PingEvery: 20,
		Latency: 10 * time.Millisecond, Jitter: 3 * time.Millisecond, Loss: 0.03, Dup: 0.01,
		Drain: 500 * time.Millisecond, MaxDrain: 5 * time.Second, ConnectTimeout: 10 * time.Second,
		StatsEvery: time.Second,
	}
	var live bytes.Buffer
	sum, err := runServerDemo(context.Background(), o, &live)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live output:\n%s", live.String())
	js, _ := json.Marshal(sum)
	t.Logf("summary: %s", js)
	if !sum.ok() || !sum.Converged || !sum.MessagesOK {
		t.Fatalf("demo failed: %s", js)
	}
	if sum.Clients != 2 || len(sum.ClientStats) != 2 || len(sum.RTTMS) != 2 || sum.Ticks != 200 || sum.ServerTicks < 200 {
		t.Fatalf("counts: %s", js)
	}
	if sum.Entities < 100 || sum.Entities > 120 || sum.Spawned == 0 || sum.Despawned == 0 {
		t.Fatalf("the arena did not live: %d entities, %d spawned, %d destroyed", sum.Entities, sum.Spawned, sum.Despawned)
	}
	if sum.BytesPerSecPerClient <= 0 || sum.UDPBytesPerSecPerClient <= 0 || sum.DurationSec < 200.0/60 || sum.DurationSec > 30 {
		t.Fatalf("rates or duration: %s", js)
	}
	if sum.Pings != 20 || sum.Echoes != 20 {
		t.Fatalf("%d pings, %d echoes, want 20 each", sum.Pings, sum.Echoes)
	}
	for i, c := range sum.ClientStats {
		// 2 x 10 ms of latency each way, plus jitter and QUIC's ack delay.
		if c.RTTMS < 15 || c.RTTMS > 500 {
			t.Errorf("client %d: rtt %v ms", i, c.RTTMS)
		}
		if c.Entities != sum.Entities || c.Updates == 0 || c.Mutations == 0 || c.MutationMessages == 0 ||
			c.BytesOut == 0 || c.PingsSent != 10 || c.EchoesGot != 20 || c.EchoRTTMS < c.RTTMS/2 || c.Violations != 0 {
			t.Errorf("client %d: %+v", i, c)
		}
	}
	if !strings.Contains(live.String(), "client 1: rtt") || !strings.Contains(live.String(), "entities") {
		t.Error("no live statistics printed")
	}
	var out bytes.Buffer
	sum.print(&out)
	if !strings.Contains(out.String(), "EQUAL on every client") || !strings.HasSuffix(out.String(), "OK\n") {
		t.Errorf("summary printed %q", out.String())
	}
	checkGoroutines()
}

// TestServerDemoCommand runs "rewind demo server --json" briefly and
// checks the JSON object it prints.
func TestServerDemoCommand(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	args := []string{"demo", "server", "--clients", "1", "--entities", "20", "--ticks", "30",
		"--latency", "1ms", "--drain", "100ms", "--stats", "0", "--json"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	for _, k := range []string{"ticks", "clients", "entities", "bytes_per_sec_per_client", "resent", "rtt_ms", "converged", "rng_equal", "resyncs", "duration_sec"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, out.String())
		}
	}
	if m["converged"] != true || m["rng_equal"] != true || m["resyncs"] != 0.0 || m["clients"] != 1.0 || m["ticks"] != 30.0 {
		t.Errorf("summary %s", out.String())
	}
}

// TestServerDemoDisrupt runs the server demo with --disrupt: client 0's
// proxy drops everything for 1 s, a third into a 180-tick run. Client 0
// asks for a resync when traffic resumes (after 500 ms of silence it
// counts as an interruption), gets one full resync with that reason, and
// at the end every client holds the server's state and random state; the
// other client never resyncs.
func TestServerDemoDisrupt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a 4-second demo in real time")
	}
	checkGoroutines := trackGoroutines(t)
	o := serverOptions{
		Clients: 2, Entities: 60, Ticks: 180, Seed: 5, Priority: 1, PingEvery: 20,
		Latency: 10 * time.Millisecond, Drain: 300 * time.Millisecond, MaxDrain: 6 * time.Second,
		ConnectTimeout: 10 * time.Second, Disrupt: time.Second, ResyncAfter: 500 * time.Millisecond,
	}
	sum, err := runServerDemo(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(sum)
	t.Logf("summary: %s", js)
	if !sum.ok() || !sum.Converged || !sum.RNGEqual || !sum.MessagesOK {
		t.Fatalf("demo failed: %s", js)
	}
	// The silence the client measured is the cut's length, give or take
	// the ticks on either side of it (998 ms, 1.016 s).
	const why = "client 0 (full): client request: network interruption: nothing received for "
	if sum.Resyncs != 1 || len(sum.ResyncReasons) != 1 || !strings.HasPrefix(sum.ResyncReasons[0], why) {
		t.Fatalf("resyncs: %s", js)
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(sum.ResyncReasons[0], why)); err != nil || d < 900*time.Millisecond || d > 1500*time.Millisecond {
		t.Fatalf("the silence measured (%v, %v) is not the cut's second: %s", d, err, js)
	}
	if sum.DisruptSec != 1 || sum.DisruptAtTick != 60 {
		t.Fatalf("disruption: %s", js)
	}
	c0, c1 := sum.ClientStats[0], sum.ClientStats[1]
	if c0.Resyncs != 1 || c0.ResyncRequests != 1 || c1.Resyncs != 0 || c1.ResyncRequests != 0 || !c0.RNGEqual || !c1.RNGEqual || c0.Disconnects != 0 {
		t.Fatalf("clients: %+v, %+v", c0, c1)
	}
	if c0.CutDown == 0 || c0.CutUp == 0 || c1.CutDown != 0 || c1.CutUp != 0 {
		t.Fatalf("the cut dropped nothing: %+v, %+v", c0, c1)
	}
	var out bytes.Buffer
	sum.print(&out)
	if !strings.Contains(out.String(), "client 0 cut off for 1.0s from tick 60; 1 resyncs") || !strings.Contains(out.String(), "random state: EQUAL on every client") {
		t.Errorf("summary printed %q", out.String())
	}
	checkGoroutines()
}

// TestServerDemoInterrupted: a demo whose context ends early (once its
// clients are connected, mid-run) stops, reports the interruption, and
// leaves nothing running.
func TestServerDemoInterrupted(t *testing.T) {
	t.Parallel()
	checkGoroutines := trackGoroutines(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := serverOptions{
		Clients: 2, Entities: 50, Ticks: 6000, Seed: 1, Priority: 1, PingEvery: 10,
		Latency: time.Millisecond, Drain: time.Second, MaxDrain: time.Second, ConnectTimeout: 10 * time.Second,
		StatsEvery: time.Hour, // only the line saying the clients connected
	}
	live := newLineWriter("clients connected")
	go func() {
		select {
		case <-live.seen:
			cancel()
		case <-ctx.Done():
		}
	}()
	sum, err := runServerDemo(ctx, o, live)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.ok() || sum.ServerTicks >= 6000 {
		t.Fatalf("summary %+v", sum)
	}
	cancel()
	checkGoroutines()
}

// TestServerDemoLargeWorld: a world of 30,000 entities, whose first update
// is over the transport's 1 MiB message limit, reaches the client and
// converges (it exited 1): the demo accepts what its help allows.
func TestServerDemoLargeWorld(t *testing.T) {
	// Not parallel: it runs before the real-time demos, whose loops its
	// garbage collection of a large heap would otherwise pause.
	var out, errOut bytes.Buffer
	args := []string{"demo", "server", "--clients", "1", "--entities", "30000", "--ticks", "10",
		"--latency", "1ms", "--drain", "100ms", "--stats", "0", "--json"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if m["converged"] != true || m["target_entities"] != 30000.0 {
		t.Errorf("summary %s", out.String())
	}
}
