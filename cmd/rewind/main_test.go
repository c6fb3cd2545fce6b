package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rewindgo/rewind/transport"
)

// TestDemo plays a real demo match (2 peers and a spectator over UDP on
// loopback, through proxies) with recording, checks the summary, and plays
// the recording back: the replay must reproduce the match exactly.
func TestDemo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("plays a 3-second match in real time")
	}
	rec := filepath.Join(t.TempDir(), "match.rwnd")
	o := demoOptions{
		Peers: 2, Spectators: 1, NPCs: 6, Frames: 180, Seed: 7,
		Latency: 15 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.02, Dup: 0.02,
		InputDelay: 2, DesyncInterval: 30, Record: rec, Drain: time.Second, StatsEvery: time.Second,
	}
	var live bytes.Buffer
	sum, err := runDemo(context.Background(), o, &live)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live output:\n%s", live.String())
	js, _ := json.Marshal(sum)
	t.Logf("summary: %s", js)
	if !sum.ok() || !sum.FramesReached || !sum.Finished || !sum.ChecksumsEqual || sum.Desyncs != 0 {
		t.Fatalf("demo failed: %s", js)
	}
	// Every state 0..180 is confirmed and compared, the last one included.
	if sum.CheckedFrames != 181 || sum.ConfirmedTail != 180 {
		t.Fatalf("%d frames compared, confirmed tail %d; want 181 and 180", sum.CheckedFrames, sum.ConfirmedTail)
	}
	if sum.SpectatorChecked != 18 || sum.SpectatorFrames[0] != 180 { // states 0, 10, ..., 170 (taken before each step)
		t.Fatalf("spectator reached frame %d, %d checksums compared", sum.SpectatorFrames[0], sum.SpectatorChecked)
	}
	for i, p := range sum.PeerStats {
		if p.Frame != 180 || p.Confirmed != 179 || p.BytesPerSec <= 0 || p.ConfirmedFrames != 181 {
			t.Fatalf("peer %d: %+v", i, p)
		}
	}
	if sum.Events["desync-detected"] != 0 || sum.Events["disconnected"] != 0 {
		t.Fatalf("events %v", sum.Events)
	}
	if !strings.Contains(live.String(), "peer 1: frame") {
		t.Errorf("no live statistics printed")
	}

	res, err := replayFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replay: %+v", res)
	// Every frame is recorded, and one checksum every 60 frames: 0, 60, 120, 180.
	if !res.Match || res.Frames != 180 || res.Checksums != 4 || res.Players != 2 || res.Seed != 7 {
		t.Fatalf("replay: %+v", res)
	}

	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"replay", "--json", rec}, &out, &errOut); code != 0 {
		t.Fatalf("rewind replay: exit %d, %s %s", code, out.String(), errOut.String())
	}
	var res2 replayResult
	if err := json.Unmarshal(out.Bytes(), &res2); err != nil || !res2.Match || res2.Frames != res.Frames {
		t.Fatalf("rewind replay --json printed %q (%v)", out.String(), err)
	}

	// A recording whose game differs (another seed in its metadata) must
	// fail at the first recorded checksum, naming the differing types.
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("rwdemo"))
	if i < 0 {
		t.Fatal("no demo metadata in the recording")
	}
	b[i+len("rwdemo")+3] ^= 1 // magic, version, players, NPCs, then the seed
	resealHeader(t, b)        // a recording of another game, not a damaged one
	bad := filepath.Join(t.TempDir(), "bad.rwnd")
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"replay", bad}, &out, &errOut); code != 1 {
		t.Fatalf("replay of a tampered recording: exit %d: %s %s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "MISMATCH") || !strings.Contains(out.String(), "frame 0") ||
		!strings.Contains(out.String(), "internal/demo.Position") {
		t.Fatalf("replay of a tampered recording printed %q", out.String())
	}
	t.Log(strings.TrimSpace(out.String()))
}

func TestUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		code int
		want string // in stdout+stderr
	}{
		{nil, 2, "Usage:"},
		{[]string{"bogus"}, 2, "unknown command"},
		{[]string{"help"}, 0, "rewind demo"},
		{[]string{"help", "demo"}, 0, "-peers"},
		{[]string{"help", "netsim"}, 0, "-bandwidth"},
		{[]string{"help", "demo", "server"}, 0, "-entities"},
		// --help and help end with a legend of the summary's terms.
		{[]string{"help", "demo"}, 0, "confirmed_tail in --json"},
		{[]string{"demo", "--help"}, 0, "wait recommendation"},
		{[]string{"help", "demo", "predict"}, 0, "corrections    moves of a shown entity caused by a rollback; max in arena\n                 units"},
		{[]string{"demo", "predict", "--help"}, 0, "late           inputs that reached the server after"},
		{[]string{"demo", "server", "--clients", "0"}, 2, "--clients 0"},
		{[]string{"demo", "server", "--priority", "2"}, 2, "--priority 2"},
		{[]string{"demo", "server", "extra"}, 2, "unexpected arguments"},
		{[]string{"demo", "--json", "server"}, 2, "after \"server\""},
		{[]string{"demo", "--peers", "0"}, 2, "--peers 0"},
		{[]string{"demo", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"demo", "lan"}, 2, "unknown demo"},
		{[]string{"replay"}, 2, "one recording FILE"},
		{[]string{"replay", filepath.Join(t.TempDir(), "missing")}, 1, "no such file"},
		{[]string{"netsim"}, 2, "--target is required"},
		{[]string{"netsim", "--target", "127.0.0.1:9", "--loss", "2"}, 2, "probabilities"},
		// A duration without a unit says which unit to add, for every command.
		{[]string{"demo", "--latency", "30"}, 2, `invalid value "30" for flag --latency: a duration needs a unit, e.g. 30ms`},
		{[]string{"demo", "predict", "--jitter", "5"}, 2, "--jitter: a duration needs a unit, e.g. 5ms"},
		{[]string{"peer", "--remote", "127.0.0.1:9", "--timeout", "fast"}, 2, "--timeout: want a duration such as 30ms"},
		{[]string{"demo", "--peers", "x"}, 2, "-peers: parse error"},
		// The in-process demo has no --drain (it never waited): not offered.
		{[]string{"demo", "--drain", "1s"}, 2, "flag provided but not defined: -drain"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), c.args, &out, &errOut)
		all := out.String() + errOut.String()
		if code != c.code || !strings.Contains(all, c.want) {
			t.Errorf("rewind %q: exit %d (want %d), output %q (want %q)", c.args, code, c.code, all, c.want)
		}
	}
	var help bytes.Buffer
	run(context.Background(), []string{"help", "demo"}, &help, &help)
	if strings.Contains(help.String(), "-drain") {
		t.Errorf("help demo offers --drain:\n%s", help.String())
	}
}

// TestDemoOnePeer: a match of one peer (no network) still runs and checks.
func TestDemoOnePeer(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code := run(context.Background(), []string{"demo", "p2p", "--peers", "1", "--frames", "30", "--json"}, &out, io.Discard)
	var sum demoSummary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || code != 0 {
		t.Fatalf("exit %d, output %q: %v", code, out.String(), err)
	}
	if !sum.FramesReached || !sum.Finished || !sum.ChecksumsEqual || sum.CheckedFrames != 31 || sum.ConfirmedTail != 30 || sum.Peers != 1 {
		t.Fatalf("summary %+v", sum)
	}
}

// TestNetsim runs the proxy in front of a UDP echo server.
func TestNetsim(t *testing.T) {
	t.Parallel()
	echo, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			_, _ = echo.WriteToUDPAddrPort(buf[:n], from)
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan *transport.Proxy, 1)
	done := make(chan error, 1)
	var log bytes.Buffer // read after runNetsim returned
	go func() {
		done <- runNetsim(ctx, netsimOptions{Listen: "127.0.0.1:0", Target: echo.LocalAddr().String(),
			Latency: 5 * time.Millisecond, StatsEvery: 20 * time.Millisecond}, &log, func(p *transport.Proxy) { ready <- p })
	}()
	var p *transport.Proxy
	select {
	case p = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	start := time.Now()
	if _, err := client.WriteToUDPAddrPort([]byte("ping"), p.Addr()); err != nil {
		t.Fatal(err)
	}
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 100)
	n, _, err := client.ReadFromUDPAddrPort(buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("echo through netsim: %q, %v", buf[:n], err)
	}
	if rtt := time.Since(start); rtt < 10*time.Millisecond {
		t.Errorf("round trip %v through a 5 ms link each way", rtt)
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := log.String()
	if !strings.Contains(out, "listening on") || !strings.Contains(out, "1 delivered") || !strings.Contains(out, "stopped") {
		t.Fatalf("netsim output %q", out)
	}
}

func TestCompareChecksums(t *testing.T) {
	t.Parallel()
	a := []frameSum{{0, 1}, {1, 2}, {2, 3}, {3, 4}}
	b := []frameSum{{0, 1}, {1, 2}, {2, 3}}
	c := []frameSum{{1, 2}, {2, 3}, {3, 4}}
	checked, spec, first := compareChecksums([][]frameSum{a, b, c}, [][]frameSum{{{0, 1}, {2, 3}, {9, 9}}})
	if checked != 2 || spec != 2 || first != -1 {
		t.Fatalf("equal: checked %d, spectator %d, first mismatch %d", checked, spec, first)
	}
	c[2].sum = 5 // frame 3: a and c differ, b does not have it
	if _, _, first := compareChecksums([][]frameSum{a, b, c}, nil); first != 3 {
		t.Fatalf("first mismatch %d, want 3", first)
	}
	b[0].sum = 8 // frame 0: b differs from a, c does not have it
	if _, _, first := compareChecksums([][]frameSum{a, b, c}, nil); first != 0 {
		t.Fatalf("first mismatch %d, want 0", first)
	}
	if _, _, first := compareChecksums([][]frameSum{a}, [][]frameSum{{{2, 7}}}); first != 2 {
		t.Fatalf("spectator mismatch at %d, want 2", first)
	}
}

// resealHeader rewrites the CRC-32C that ends the header of recording b
// (see rollback's recording format) after the test changed the header.
func resealHeader(t *testing.T, b []byte) {
	t.Helper()
	n := 5 // magic, version
	uv := func() uint64 {
		v, k := binary.Uvarint(b[n:])
		if k <= 0 {
			t.Fatal("bad recording header")
		}
		n += k
		return v
	}
	for range 4 {
		uv() // players, input size, FPS, checksum interval
	}
	n += int(uv()) // meta
	n += int(uv()) // default input
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)))
}

// TestReplayDamaged: "rewind replay" of a recording with one bit flipped
// in a block exits 1 with an error that says the file is damaged and
// where, instead of replaying it.
func TestReplayDamaged(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "match.rwnd")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--peers", "1", "--frames", "120", "--stats", "0", "--record", rec}, &out, &errOut); code != 0 {
		t.Fatalf("demo --record: exit %d: %s %s", code, out.String(), errOut.String())
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)*2/3] ^= 0x04
	if err := os.WriteFile(rec, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	code := run(context.Background(), []string{"replay", rec}, &out, &errOut)
	if msg := errOut.String(); code != 1 || !strings.Contains(msg, "rewind replay: ") || !strings.Contains(msg, "damaged") ||
		!strings.Contains(msg, "fails its CRC-32C check") || strings.Contains(out.String(), "match") {
		t.Errorf("replay of a damaged recording: exit %d, stdout %q, stderr %q", code, out.String(), msg)
	}
}

// TestDemoDefaults: "rewind demo" at its defaults shows the headline
// feature, rollbacks, and ends with OK and the legend of its terms.
func TestDemoDefaults(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code := run(context.Background(), []string{"demo", "--frames", "180", "--stats", "0"}, &out, &out)
	s := out.String()
	m := regexp.MustCompile(`\nrollbacks (\d+) \(`).FindStringSubmatch(s)
	if code != 0 || m == nil || m[1] == "0" || !strings.Contains(s, "\nOK\n") {
		t.Errorf("exit %d, want 0, OK and rollbacks:\n%s", code, s)
	}
	if !strings.Contains(s, "(latency 60ms ±20ms, loss 5%") || !strings.Contains(s, "Terms:\n") || !strings.Contains(s, "stalls         frames") {
		t.Errorf("defaults or legend missing:\n%s", s)
	}
}
