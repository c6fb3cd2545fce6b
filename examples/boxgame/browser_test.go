//go:build !js

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserFlags start headless Chromium with a software WebGL (SwiftShader)
// for Ebitengine, and with WebRTC host candidates that show the machine's
// addresses instead of mDNS names, which a native peer on a machine
// without multicast cannot resolve.
func browserFlags(exe string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(800, 700),
		chromedp.Flag("use-gl", "angle"), chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true), chromedp.Flag("ignore-gpu-blocklist", true),
		chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns"),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"))
}

// TestBrowserPeer: the box game's browser build, in headless Chromium, and
// a native peer play 300 frames over WebRTC through the --web server's
// room; both must finish with the same digest of the confirmed states
// 0..300, and a screenshot of the page must show both boxes (checked by
// checkshot).
//
// It needs Chromium and REWIND_BROWSER=1 (CI sets it); it builds the wasm
// (about a minute the first time). BOXGAME_BROWSER_OUT names a directory
// for browser.json, native.json and browser.png (CI prints them).
func TestBrowserPeer(t *testing.T) { browserMatch(t, 1, "") }

// TestBrowserMesh: the same with two native peers, a room of three: the
// browser holds two peer connections (files browser3.json, native3-0.json,
// native3-1.json, browser3.png).
func TestBrowserMesh(t *testing.T) { browserMatch(t, 2, "3") }

// browserMatch plays a 300-frame match between the browser build and
// natives native peers; suffix names the output files.
func browserMatch(t *testing.T, natives int, suffix string) {
	if os.Getenv("REWIND_BROWSER") == "" {
		t.Skip("set REWIND_BROWSER=1 to play against headless Chromium (CI does)")
	}
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Fatal("REWIND_BROWSER is set but there is no chromium binary (apt-get install chromium)")
	}
	out := os.Getenv("BOXGAME_BROWSER_OUT")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	players := natives + 1
	base, page, reports := startWeb(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	if err := page.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("wasm %s ready after %v", page.Source(), time.Since(start).Round(time.Millisecond))

	// The native peers wait in the room for the browser.
	room := "ws" + strings.TrimPrefix(base, "http") + "/room/browser"
	o, err := parseOptions([]string{"--signal", room, "--num-players", fmt.Sprint(players), "--frames", "300", "--script",
		"--timeout", "3m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	type opened struct {
		m   *match
		err error
	}
	native := make(chan opened, natives)
	for range natives {
		go func() {
			m, err := newMatch(ctx, o)
			native <- opened{m, err}
		}()
	}

	actx, acancel := chromedp.NewExecAllocator(ctx, browserFlags(exe)...)
	defer acancel()
	var console logLines
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var b strings.Builder
			for _, a := range ev.Args {
				b.WriteString(strings.Trim(string(a.Value), `"`) + " ")
			}
			console.add(b.String())
		case *runtime.EventExceptionThrown:
			console.add(fmt.Sprintf("exception: %s %v", ev.ExceptionDetails.Text, ev.ExceptionDetails.Exception))
		}
	}))
	defer bcancel()
	pageURL := fmt.Sprintf("%s/?room=browser&num-players=%d&frames=300&headless&drain=5s&timeout=3m", base, players)
	// The browser's side, in its own goroutine while this one runs the
	// native peers: load the page, wait for the match to complete, take
	// the screenshot, wait for the summary.
	type browserResult struct {
		shot    []byte
		summary string
		err     error
	}
	browser := make(chan browserResult, 1)
	go func() {
		var r browserResult
		const ended = "globalThis.rewindExitCode !== undefined || globalThis.rewindError !== undefined"
		r.err = chromedp.Do(bctx, chromedp.Navigate(pageURL),
			chromedp.Poll[chromedp.Void]("globalThis.rewindComplete === true || "+ended, chromedp.WithPollingTimeout(4*time.Minute)))
		if r.err == nil {
			r.shot, r.err = chromedp.Run(bctx, chromedp.CaptureScreenshot())
		}
		if r.err == nil {
			r.err = chromedp.Do(bctx, chromedp.Poll[chromedp.Void]("globalThis.rewindSummary !== undefined || "+ended,
				chromedp.WithPollingTimeout(time.Minute)))
		}
		if r.err == nil {
			r.summary, r.err = chromedp.Run(bctx, chromedp.Evaluate[string](
				`globalThis.rewindSummary || ("exit code " + globalThis.rewindExitCode + ", " + globalThis.rewindError)`))
		}
		browser <- r
	}()

	var ms []*match
	for len(ms) < natives {
		select {
		case n := <-native:
			if n.err != nil {
				t.Fatalf("native peer: %v\nbrowser console:\n%s", n.err, console.String())
			}
			defer n.m.close()
			ms = append(ms, n.m)
		case r := <-browser:
			t.Fatalf("the browser finished before joining: %+v\nconsole:\n%s", r.err, console.String())
		}
	}
	var br browserResult
	gotBrowser := false
	playFor(t, ms, func() bool {
		if !gotBrowser {
			select {
			case br = <-browser:
				gotBrowser = true
			default:
			}
		}
		done := gotBrowser
		for _, m := range ms {
			done = done && m.complete()
		}
		return done
	}, func() string {
		return fmt.Sprintf("native: frames 0..%d confirmed; browser done %v; console:\n%s", ms[0].digest.Frames()-1, gotBrowser, console.String())
	}, 4*time.Minute)
	if br.err != nil {
		t.Fatalf("browser: %v\nconsole:\n%s", br.err, console.String())
	}

	var bs summary
	if err := json.Unmarshal([]byte(br.summary), &bs); err != nil {
		t.Fatalf("browser summary %q: %v\nconsole:\n%s", br.summary, err, console.String())
	}
	files := map[string][]byte{"browser" + suffix + ".json": []byte(br.summary), "browser" + suffix + ".png": br.shot}
	t.Logf("browser: %s", br.summary)
	handles := map[int]bool{bs.Local[0]: true}
	for i, m := range ms {
		ns := m.summary(nil, nil)
		nj, _ := json.Marshal(ns)
		name := "native.json"
		if suffix != "" {
			name = fmt.Sprintf("native%s-%d.json", suffix, i)
		}
		files[name] = nj
		t.Logf("native:  %s", nj)
		if !bs.OK || !ns.OK || bs.Digest != ns.Digest || bs.DigestFrames != 301 || ns.DigestFrames != 301 || bs.Players != players || handles[ns.Local[0]] {
			t.Errorf("browser and native peer %d disagree or failed:\nbrowser %+v\nnative  %+v", i, bs, ns)
		}
		handles[ns.Local[0]] = true
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	select {
	case r := <-reports:
		if string(r) != br.summary {
			t.Errorf("POST /report %q, rewindSummary %q", r, br.summary)
		}
	case <-time.After(10 * time.Second):
		t.Error("the browser did not POST its summary to /report")
	}
	cmd := exec.Command("go", "run", "./checkshot", "--players", fmt.Sprint(players), filepath.Join(out, "browser"+suffix+".png"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("checkshot: %v\n%s", err, b)
	} else {
		t.Logf("checkshot: %s", strings.TrimSpace(string(b)))
	}
}

// logLines collects the browser's console, written by chromedp's
// goroutine.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < 500 {
		l.lines = append(l.lines, s)
	}
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
