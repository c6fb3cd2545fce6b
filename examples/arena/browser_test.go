//go:build !js

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserClient plays the arena in headless Chromium: a native server
// with --web, the browser client (wasm, WebSocket) as a bot, and a native
// bot client over QUIC beside it. The browser client must converge with
// the server (its confirmed state equal to the server's truths, none
// differing), and a screenshot of the page must show both players' ships
// and the net graph (checkshot). The summaries of both clients (bytes/s
// over WebSocket and over QUIC) are logged and, with REWIND_BROWSER_OUT
// set, written there (browser.json, native.json, browser.png).
//
// It needs a display (Xvfb: the native programs link Ebitengine),
// Chromium, and REWIND_BROWSER=1 (CI sets it); otherwise it is skipped.
// The first run builds the wasm (about a minute).
func TestBrowserClient(t *testing.T) {
	if os.Getenv("REWIND_BROWSER") == "" {
		t.Skip("set REWIND_BROWSER=1 (and have chromium and a display) to play the arena in a browser")
	}
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" || os.Getenv("DISPLAY") == "" {
		t.Fatalf("REWIND_BROWSER is set but chromium (%q) or a display (DISPLAY=%q) is missing", exe, os.Getenv("DISPLAY"))
	}
	out := os.Getenv("REWIND_BROWSER_OUT")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "arena")
	shotBin := filepath.Join(t.TempDir(), "checkshot")
	for _, b := range [][2]string{{bin, "."}, {shotBin, "./checkshot"}} {
		if o, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, o)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()

	// The server: QUIC and --web on free ports; it ends once a player
	// joined and all have left.
	srv := exec.CommandContext(ctx, bin, "server", "--listen", "127.0.0.1:0", "--web", "127.0.0.1:0",
		"--ticks", "300", "--timeout", "5m", "--json")
	srvOut := &strings.Builder{}
	srv.Stdout = srvOut
	errPipe, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	srvLog := &lockedLog{}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			srvLog.add(sc.Text())
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", srvLog)
		}
	}()
	var quicAddr, page string
	quicRe := regexp.MustCompile(`serving on (\S+) \(QUIC\)`)
	pageRe := regexp.MustCompile(`open (http://\S+)`)
	for quicAddr == "" || page == "" || !strings.Contains(srvLog.String(), "browser client ready") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server ended: %v", <-srvDone)
			}
			if m := quicRe.FindStringSubmatch(l); m != nil {
				quicAddr = m[1]
			}
			if m := pageRe.FindStringSubmatch(l); m != nil {
				page = m[1]
			}
			if strings.Contains(l, "browser client unavailable") {
				t.Fatal(l)
			}
		case <-ctx.Done():
			t.Fatal("the server did not get ready")
		}
	}
	// Keep draining the server's log; firstJoin closes at its first
	// "joined".
	firstJoin := make(chan struct{})
	go func() {
		seen := false
		for l := range lines {
			if !seen && strings.Contains(l, " joined") {
				close(firstJoin)
				seen = true
			}
		}
	}()

	// The browser client, a bot.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(screenW, screenH),
		// WebGL without a GPU, for Ebitengine: ANGLE on SwiftShader.
		chromedp.Flag("use-gl", "angle"), chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true), chromedp.Flag("ignore-gpu-blocklist", true),
		// Keep the page running at full speed though nobody looks at it.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	url := page + "?bot=1&seed=2&ticks=1&timeout=3m"
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(screenW, screenH), chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	// The native bot over QUIC joins as soon as the browser has joined,
	// while the page is still setting up (its first frames take seconds):
	// two players joining together, one of them slow. (The arena's client
	// used to start only
	// once the update tick's own mutations were complete; over WebSocket
	// a backed-up socket drops its oldest unreliable messages, which could
	// be those every time while nothing moved, and neither client started.
	// It now starts at the newest complete tick.) It plays until 30 s of
	// the server's ticks have passed and its state matched the server's.
	select {
	case <-firstJoin:
	case <-ctx.Done():
		t.Fatal("the browser client did not join")
	}
	native := exec.CommandContext(ctx, bin, "client", "--server", quicAddr, "--seed", "1", "--headless", "--json",
		"--ticks", "1800", "--timeout", "2m", "--screenshot", filepath.Join(out, "native.png"))
	nativeOut, nativeErr := &strings.Builder{}, &strings.Builder{}
	native.Stdout, native.Stderr = nativeOut, nativeErr
	if err := native.Start(); err != nil {
		t.Fatal(err)
	}
	nativeDone := make(chan error, 1)
	go func() { nativeDone <- native.Wait() }()
	// The browser's summary appears once its state matched the server's
	// truths five times (or the run failed).
	const state = `JSON.stringify({summary: globalThis.arenaSummary || "", error: globalThis.arenaError || globalThis.rewindError || ""})`
	type pageState struct{ Summary, Error string }
	readState := func() pageState {
		js, err := chromedp.Run(bctx, chromedp.Evaluate[string](state))
		if err != nil {
			t.Fatalf("evaluate: %v", err)
		}
		var st pageState
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			t.Fatalf("page state %q: %v", js, err)
		}
		return st
	}
	if err := chromedp.Do(bctx, chromedp.Poll[chromedp.Void](`globalThis.arenaSummary || globalThis.arenaError || globalThis.rewindError`,
		chromedp.WithPollingTimeout(3*time.Minute), chromedp.WithPollingInterval(250*time.Millisecond))); err != nil {
		t.Fatalf("no summary from the browser client: %v", err)
	}
	st := readState()
	if st.Error != "" {
		t.Fatalf("browser client: %s (summary %s)", st.Error, st.Summary)
	}
	var first clientSummary
	if err := json.Unmarshal([]byte(st.Summary), &first); err != nil {
		t.Fatalf("summary %q: %v", st.Summary, err)
	}
	if !first.Converged || first.TruthMismatch != 0 || !first.OK {
		t.Fatalf("browser client did not converge: %s", st.Summary)
	}

	// Screenshots of the page until one shows both ships and the net
	// graph (the native player joins a moment after it starts).
	shot := filepath.Join(out, "browser.png")
	var checked string
	for {
		png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := exec.Command(shotBin, "--players", "2", shot).CombinedOutput()
		checked = string(o)
		if err == nil {
			break
		}
		select {
		case err := <-nativeDone:
			t.Fatalf("the native client ended (%v) before a screenshot showed both ships: %s\nnative: %s\n%s", err, checked, nativeOut, nativeErr)
		case <-ctx.Done():
			t.Fatalf("no screenshot showed both ships: %s", checked)
		case <-time.After(500 * time.Millisecond): // the next frame to look at
		}
	}
	t.Logf("checkshot: %s", strings.TrimSpace(checked))

	// The native client finishes; the browser's summary then covers the
	// same stretch of the match.
	select {
	case err := <-nativeDone:
		if err != nil {
			t.Fatalf("native client: %v\n%s\n%s", err, nativeOut, nativeErr)
		}
	case <-ctx.Done():
		t.Fatal("the native client did not finish")
	}
	st = readState()
	var last clientSummary
	if err := json.Unmarshal([]byte(st.Summary), &last); err != nil {
		t.Fatal(err)
	}
	var nat clientSummary
	if err := json.Unmarshal([]byte(nativeOut.String()), &nat); err != nil {
		t.Fatalf("native summary %q: %v", nativeOut, err)
	}
	// Still converged, and no truth ever differed. (A browser drawing
	// under 30 frames a second holds its rollbacks, predict's overload
	// protection, and leaves the truths of those frames unchecked: its
	// count of matched truths may stand still.)
	if !last.Converged || last.TruthMismatch != 0 || !last.OK || last.Desyncs != 0 {
		t.Fatalf("browser client, at the end: %s", st.Summary)
	}
	if !nat.Converged || nat.TruthMismatch != 0 || !nat.OK {
		t.Fatalf("native client: %s", nativeOut)
	}
	writeOut(t, out, "browser.json", st.Summary)
	writeOut(t, out, "native.json", strings.TrimSpace(nativeOut.String()))
	t.Logf("browser (WebSocket): %s", st.Summary)
	t.Logf("native (QUIC): %s", strings.TrimSpace(nativeOut.String()))
	t.Logf("bytes/s in/out: browser over WebSocket %.0f/%.0f, native over QUIC %.0f/%.0f; truths matched %d / %d, none differing",
		last.BytesInPerSec, last.BytesOutPerSec, nat.BytesInPerSec, nat.BytesOutPerSec, last.TruthsMatched, nat.TruthsMatched)

	// Closing the page ends the browser player; the server then ends.
	bcancel()
	acancel()
	select {
	case err := <-srvDone:
		if err != nil {
			t.Fatalf("server: %v\n%s", err, srvOut)
		}
	case <-ctx.Done():
		t.Fatal("the server did not end after both players left")
	}
	t.Logf("server: %s", strings.TrimSpace(srvOut.String()))
}

func writeOut(t *testing.T, dir, name, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lockedLog collects a process's log lines for a failure report.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
