package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// lineWriter collects what a command prints and closes seen once a line
// containing want has been written.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func newLineWriter(want string) *lineWriter {
	return &lineWriter{want: want, seen: make(chan struct{})}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && w.want != "" && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// peerArgs are the arguments of peer handle of a two-player match on
// ports.
func peerArgs(ports []int, handle int, extra ...string) []string {
	a := []string{"peer", "--listen", fmt.Sprintf("127.0.0.1:%d", ports[handle]), "--handle", fmt.Sprint(handle),
		"--remote", fmt.Sprintf("127.0.0.1:%d", ports[1-handle]), "--seed", "3", "--stats", "0"}
	return append(a, extra...)
}

// runPair plays a two-player match in this process, one "rewind peer" per
// goroutine; with interrupt1, peer 1 is interrupted (its context
// cancelled, as Ctrl-C does) once it printed "running". It returns each
// peer's exit status and output.
func runPair(t *testing.T, frames int, interrupt1 bool) (codes [2]int, outs [2]*lineWriter) {
	t.Helper()
	ports := freePorts(t, 2)
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	var wg sync.WaitGroup
	for h := range 2 {
		outs[h] = newLineWriter("running")
		ctx := context.Background()
		if h == 1 {
			ctx = ctx1
		}
		wg.Go(func() {
			codes[h] = run(ctx, peerArgs(ports, h, "--frames", fmt.Sprint(frames), "--timeout", "20s"), outs[h], outs[h])
		})
	}
	if interrupt1 {
		<-outs[0].seen // Ctrl-C once the match runs on both
		<-outs[1].seen
		cancel1()
	}
	wg.Wait()
	return codes, outs
}

// TestPeerVerdictFinished: two peers that finish the match both exit 0
// with the same digest, each labels its summary with its own handle, and
// the end of the match (the other closing its session) is no alarm.
func TestPeerVerdictFinished(t *testing.T) {
	t.Parallel()
	codes, outs := runPair(t, 60, false)
	digest := regexp.MustCompile(`digest ([0-9a-f]+) over frames 0..60 \(compare`)
	var digests [2]string
	for h, out := range outs {
		s := out.String()
		if codes[h] != 0 || !strings.Contains(s, "\nOK\n") {
			t.Errorf("peer %d: exit %d, want 0 and OK:\n%s", h, codes[h], s)
		}
		if !strings.Contains(s, fmt.Sprintf("\n  peer %d: frame 60", h)) {
			t.Errorf("peer %d: summary not labelled with its handle:\n%s", h, s)
		}
		if strings.Contains(s, "disconnected us") || strings.Contains(s, "ABANDONED") {
			t.Errorf("peer %d: the normal end of the match reported as a disconnection:\n%s", h, s)
		}
		if m := digest.FindStringSubmatch(s); m != nil {
			digests[h] = m[1]
		}
	}
	if digests[0] == "" || digests[0] != digests[1] {
		t.Errorf("digests %q and %q, want the same", digests[0], digests[1])
	}
}

// TestPeerVerdictAbandoned: when one peer is interrupted mid-match, it
// says its checksums were not compared and exits 1; the other, which plays
// the rest alone, says the match was abandoned by whom and exits 1, not OK.
func TestPeerVerdictAbandoned(t *testing.T) {
	t.Parallel()
	codes, outs := runPair(t, 120, true)
	s0, s1 := outs[0].String(), outs[1].String()
	if codes[1] != 1 || !strings.Contains(s1, "confirmed checksums: not compared (interrupted)") || !strings.Contains(s1, "\nINTERRUPTED\n") {
		t.Errorf("interrupted peer: exit %d, want 1, \"not compared (interrupted)\" and INTERRUPTED:\n%s", codes[1], s1)
	}
	if codes[0] != 1 || !regexp.MustCompile(`ABANDONED: peer 1 at 127\.0\.0\.1:\d+ left at frame \d+`).MatchString(s0) || strings.Contains(s0, "\nOK\n") {
		t.Errorf("abandoned peer: exit %d, want 1 and ABANDONED naming peer 1:\n%s", codes[0], s0)
	}
	if !strings.Contains(s0, "of a match that did not finish properly") {
		t.Errorf("abandoned peer offers its digest for comparison:\n%s", s0)
	}
}

// TestPeerVerdictNeverAnswered: a peer whose remote never answers says
// so, offers no digest and exits 1; with --json the remote is listed in
// never_answered.
func TestPeerVerdictNeverAnswered(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}) // reads nothing, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	remote := silent.LocalAddr().String()
	args := []string{"peer", "--listen", "127.0.0.1:0", "--handle", "1", "--remote", remote, "--frames", "30", "--timeout", "1s", "--stats", "0"}

	var out bytes.Buffer
	code := run(context.Background(), args, &out, &out)
	want := "FAILED: no match: peer 0 at " + remote + " never answered"
	if s := out.String(); code != 1 || !strings.Contains(s, want) || !strings.Contains(s, "no digest: no frame confirmed") || strings.Contains(s, "EQUAL") {
		t.Errorf("exit %d, want 1 with %q and no digest:\n%s", code, want, s)
	}

	out.Reset()
	var errOut bytes.Buffer
	code = run(context.Background(), append(args, "--json"), &out, &errOut)
	var res struct {
		NeverAnswered []string `json:"never_answered"`
		Running       bool     `json:"running"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("--json printed %q: %v", out.String(), err)
	}
	if code != 1 || res.Running || len(res.NeverAnswered) != 1 || !strings.Contains(res.NeverAnswered[0], remote) {
		t.Errorf("--json: exit %d, %+v; want 1, not running, never_answered [%s]", code, res, remote)
	}
}
