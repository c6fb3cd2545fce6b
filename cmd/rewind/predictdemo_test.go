package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestPredictDemo runs "rewind demo predict --json" in this process: a
// server and two predicting clients over QUIC on loopback through lossy,
// jittery proxies, 150 ticks. The JSON must say converged, with every
// client's state compared at complete ticks up to the last one, and the
// counters a run with random bots on a bad link must have non-zero; no
// goroutine may be left running.
func TestPredictDemo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a 3-second demo in real time")
	}
	checkGoroutines := trackGoroutines(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "predict", "--json", "--clients", "2", "--ticks", "150",
		"--latency", "25ms", "--jitter", "8ms", "--loss", "0.05", "--seed", "4"}, &stdout, &stderr)
	t.Logf("live output:\n%s", stderr.String())
	t.Logf("summary: %s", stdout.String())
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	var sum map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	num := func(k string) float64 {
		v, ok := sum[k].(float64)
		if !ok {
			t.Fatalf("field %q missing or not a number: %v", k, sum[k])
		}
		return v
	}
	if sum["converged"] != true || num("clients") != 2 || num("ticks") != 150 || num("converged_tick") < 150 {
		t.Fatalf("not converged at tick 150 or more: %s", stdout.String())
	}
	for _, k := range []string{"rollbacks", "resimulated_ticks", "mispredictions", "max_correction", "ahead_ticks",
		"bytes_per_sec_per_client", "input_bytes_per_sec_per_client", "checked_ticks", "bullets_fired", "server_ticks"} {
		if num(k) <= 0 {
			t.Errorf("%s is %v, want more than 0", k, sum[k])
		}
	}
	// The clients fire their bullets as predicted spawns, adopted by the
	// server's; the few dropped are mispredictions (the others' fire
	// guessed from their last input, inputs lost). Late inputs are a part
	// of the missing ones.
	if m, dr := num("predicted_spawns_matched"), num("predicted_spawns_dropped"); m < num("bullets_fired") || 4*dr > m ||
		m+dr > num("predicted_spawns") || num("late_inputs") > num("missing_inputs") {
		t.Errorf("spawn or input counters: %s", stdout.String())
	}
	// A predicted bullet the server did not fire is refused by the Step
	// after its tick (or a later one) completes, before any comparison of
	// that tick: no complete tick compared holds one. The Timelines'
	// range faults, superseded values and resyncs are reported (none of
	// the first and last on a converged run at 5% loss).
	if num("unconfirmed_bullet_ticks") != 0 || num("predicted_spawns_refused") < 0 ||
		num("range_faults") != 0 || num("superseded") < 0 || num("resyncs") != 0 {
		t.Errorf("refusals, faults or resyncs: %s", stdout.String())
	}
	// 2 clients compared most of the 150 ticks each; the clients ran
	// ahead of the server by at least half the 50 ms round trip.
	if num("checked_ticks") < 200 || num("ahead_ticks") < 1.5 || num("ahead_ticks") > 30 {
		t.Errorf("checked %v ticks, ahead %v ticks", sum["checked_ticks"], sum["ahead_ticks"])
	}
	// Desync detection runs (a report every 30 ticks per client, some
	// skipped under loss) and finds the confirmed states equal.
	if num("checksums_checked") < 2 || num("desyncs") != 0 {
		t.Errorf("%v checksum reports checked, %v desyncs", sum["checksums_checked"], sum["desyncs"])
	}
	if !strings.Contains(stderr.String(), "client 1: ping") || !strings.Contains(stderr.String(), "rollbacks") {
		t.Error("no live statistics printed")
	}
	checkGoroutines()
}

// TestPredictDemoDefaults runs the demo with the default link (30 ms
// ± 5 ms, no loss) and 3 clients for 150 ticks: it converges, every
// client's bullets are predicted and matched, and the predicted bullets
// dropped (the other ships' fire guessed wrong, an input late) are under a
// fifth of those matched (about a twelfth in the runs measured).
func TestPredictDemoDefaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a 3-second demo in real time")
	}
	fs, o := predictFlags()
	if err := fs.Parse([]string{"--ticks", "150", "--stats", "0"}); err != nil {
		t.Fatal(err)
	}
	sum, err := runPredictDemo(context.Background(), *o, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(sum)
	t.Logf("summary: %s", js)
	if !sum.ok() || sum.Clients != 3 || sum.ConvergedTick < 150 {
		t.Fatalf("not converged: %s", js)
	}
	// Each bullet is predicted by its owner and, the other ships being
	// predicted, by the two other clients as well (all three but for the
	// last few and a wrong guess).
	if m := sum.PredictedSpawnsMatched; 2*m < 3*sum.BulletsFired || 5*sum.PredictedSpawnsDropped >= m {
		t.Fatalf("%d bullets fired, %d predicted spawns matched, %d dropped", sum.BulletsFired, m, sum.PredictedSpawnsDropped)
	}
	for i, c := range sum.ClientStats {
		if c.PredictedSpawnsMatched == 0 {
			t.Errorf("client %d: no predicted bullet matched", i)
		}
	}
	// A predicted bullet the server did not fire is refused (despawned,
	// its tick re-simulated without it) by the Step after its tick, or a
	// later one, completes: it is in the history of no complete tick
	// compared (before the refusal: up to BulletTTL each).
	if sum.UnconfirmedBulletTicks != 0 {
		t.Fatalf("%d unconfirmed bullet-ticks", sum.UnconfirmedBulletTicks)
	}
	var faults, superseded, resyncs, refused uint64
	for _, c := range sum.ClientStats {
		faults, superseded, resyncs, refused = faults+c.RangeFaults, superseded+c.Superseded, resyncs+c.Resyncs, refused+c.PredictedSpawnsRefused
	}
	if faults != sum.RangeFaults || superseded != sum.Superseded || resyncs != sum.Resyncs || refused != sum.PredictedSpawnsRefused || sum.RangeFaults != 0 || sum.Resyncs != 0 {
		t.Fatalf("range faults %d (clients %d), superseded %d (%d), resyncs %d (%d), refused %d (%d); want the sums, no fault or resync",
			sum.RangeFaults, faults, sum.Superseded, superseded, sum.Resyncs, resyncs, sum.PredictedSpawnsRefused, refused)
	}
}

// TestPredictDemoInterpolated: with --others interpolate, the other
// ships are shown from interpolation buffers, which hold the server's
// values at every complete tick compared, the clients' checksum reports
// (counting those buffers' values) all match, and the run converges.
func TestPredictDemoInterpolated(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a 2-second demo in real time")
	}
	o := predictOptions{Clients: 2, Ticks: 90, Latency: 15 * time.Millisecond, Jitter: 4 * time.Millisecond, Loss: 0.03,
		Seed: 2, Others: "interpolate", MaxDrain: 5 * time.Second, ConnectTimeout: 10 * time.Second}
	sum, err := runPredictDemo(context.Background(), o, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(sum)
	if !sum.ok() || sum.ConvergedTick < 90 || sum.CheckedTicks < 100 || sum.Others != "interpolate" ||
		sum.ChecksumsChecked < 2 || sum.Desyncs != 0 || sum.Resyncs != 0 {
		t.Fatalf("%s", js)
	}
	var out bytes.Buffer
	sum.print(&out)
	if !strings.Contains(out.String(), "EQUAL") || !strings.HasSuffix(out.String(), "OK\n") {
		t.Fatalf("printed summary:\n%s", out.String())
	}
}

func TestPredictDemoHelpAndUsage(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"help", "demo", "predict"}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "Usage: rewind demo predict") || !strings.Contains(stdout.String(), "-others") {
		t.Fatalf("help: status %d\n%s", code, stdout.String())
	}
	for _, args := range [][]string{
		{"demo", "predict", "--others", "extrapolate"},
		{"demo", "predict", "--clients", "0"},
		{"demo", "predict", "--loss", "1"},
		{"demo", "--ticks", "3", "predict"},
	} {
		stderr.Reset()
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: status %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}
