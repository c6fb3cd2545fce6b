package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDesyncDumpDiff: a demo match in which the last peer moves player 0
// one unit further at frame 60 (--corrupt) fails with a desync; each peer
// writes its dump of the desynced frame (--dump-dir), and rewind diff of
// the two files names player 0's Position .X with both values, 1.0 apart
// in Q32.32 (2^32), and exits 1; a dump compared with itself is the same
// state (exit 0). The peers also exchange their dumps over the session,
// and the summary lists the same field from each peer's side.
func TestDesyncDumpDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), []string{"demo", "--peers", "2", "--frames", "150", "--corrupt", "60",
		"--desync-interval", "20", "--latency", "10ms", "--jitter", "0", "--loss", "0.2", "--dump-dir", dir, "--json", "--stats", "0"}, &out, io.Discard)
	var sum demoSummary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || code != 1 {
		t.Fatalf("exit %d, output %q: %v", code, out.String(), err)
	}
	if sum.Desyncs == 0 || len(sum.DumpFiles) != 2 {
		t.Fatalf("desyncs %d, dump files %v", sum.Desyncs, sum.DumpFiles)
	}
	// The peers exchanged their dumps too: each names the field.
	if len(sum.DesyncFields) != 2 {
		t.Fatalf("desync fields %q, want one line per peer", sum.DesyncFields)
	}
	for _, f := range sum.DesyncFields {
		if !strings.Contains(f, "at frame 80: ") || !strings.Contains(f, "demo.Position entity 0v1 .X: ") {
			t.Errorf("desync field line %q", f)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.rwdump"))
	if len(files) != 2 || !strings.HasSuffix(files[0], "-peer0.rwdump") || !strings.HasSuffix(files[1], "-peer1.rwdump") {
		t.Fatalf("dump files %v", files)
	}
	out.Reset()
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"diff", files[0], files[1]}, &out, &errOut); code != 1 {
		t.Fatalf("rewind diff: exit %d, want 1\n%s%s", code, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{"A: peer 0, frame 80,", "B: peer 1, frame 80,", "demo.Position\n", "  entity 0v1 ", " .X ", "(B-A 4294967296)", "\n1 difference\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"diff", files[0], files[0]}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "same state") {
		t.Fatalf("a dump against itself: exit %d\n%s", code, out.String())
	}
	bad := filepath.Join(dir, "bad.rwdump")
	if err := os.WriteFile(bad, []byte("not a dump"), 0o644); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"diff", bad, files[0]}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "malformed dump") {
		t.Fatalf("a damaged file: exit %d, %q", code, errOut.String())
	}
}
