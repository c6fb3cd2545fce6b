// Package dashtest drives the live dashboard of "rewind demo predict
// --dashboard" in headless Chromium (chromedp): the page loads, its plots
// update while the match runs, and a screenshot shows them.
//
// It needs a Chromium binary (CI installs the chromium package); without
// one the test is skipped (fails with REWIND_REQUIRE_CHROMIUM set, as in CI). DASHBOARD_SCREENSHOT names a file to keep the
// screenshot in (default: the test's temporary directory).
package dashtest

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REWIND_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no chromium binary, and REWIND_REQUIRE_CHROMIUM is set (CI)")
	}
	t.Skip("no chromium binary (apt-get install chromium)")
	return ""
}

// buildRewind builds the rewind command from the root module.
func buildRewind(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "rewind")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rewind")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

var dashboardURL = regexp.MustCompile(`dashboard: (http://\S+/)`)

// startDemo starts a prediction demo of 2 clients with a dashboard and
// returns the dashboard's URL; the demo is stopped at the end of the test.
func startDemo(t *testing.T, bin string) string {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "demo", "predict", "--clients", "2", "--ticks", "1800", "--latency", "40ms",
		"--jitter", "10ms", "--stats", "0", "--dashboard", "127.0.0.1:0")
	// The address goes with the live output: stdout, or stderr with --json.
	out, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		pw.Close()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := dashboardURL.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(60 * time.Second):
		t.Fatal("the demo did not print its dashboard's address")
		return ""
	}
}

func TestDashboardInChromium(t *testing.T) {
	exe := chromium(t)
	if testing.Short() {
		t.Skip("starts a browser and a 30 s demo")
	}
	url := startDemo(t, buildRewind(t))

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	// The page loads and the event stream starts.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible("#plot-tick"),
		chromedp.Poll[chromedp.Void](`Number(document.body.dataset.updates) >= 2 && document.querySelectorAll("#clients tr").length === 3`,
			chromedp.WithPollingTimeout(60*time.Second)),
	); err != nil {
		t.Fatalf("page did not load with 2 clients: %v", err)
	}
	title, err := chromedp.Run(ctx, chromedp.Text("#title"))
	if err != nil || title != "rewind demo predict" {
		t.Fatalf("title %q, %v", title, err)
	}

	// The plots update while the match runs: more points, a later tick.
	type probe struct {
		Updates int `json:"updates"`
		Points  int `json:"points"`
		Tick    int `json:"tick"`
		Clients int `json:"clients"`
		Rb      int `json:"rb"`
	}
	const expr = `({updates: updates, points: series.rtt.size ? [...series.rtt.values()][0].length : 0,
		tick: last.server.tick, clients: series.rtt.size, rb: series.rb.size})`
	before, err := chromedp.Run(ctx, chromedp.Evaluate[probe](expr))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`updates >= `+strconv.Itoa(before.Updates+8), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("no updates after %+v: %v", before, err)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[probe](expr))
	if err != nil {
		t.Fatal(err)
	}
	if after.Points <= before.Points || after.Tick <= before.Tick || after.Clients != 2 || after.Rb != 2 {
		t.Fatalf("plots did not follow the match: before %+v, after %+v (want more points, a later tick, 2 clients' RTT and 2 rollback series)", before, after)
	}

	// A screenshot shows the plots: the first client's color in the RTT
	// plot, the budget lines' and the second client's color.
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // PNG
	if err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("DASHBOARD_SCREENSHOT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "dashboard.png")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 600 {
		t.Fatalf("screenshot %v", b)
	}
	for _, c := range []struct {
		name    string
		r, g, b uint8
	}{{"first series (#5dade2)", 0x5d, 0xad, 0xe2}, {"second series (#58d68d)", 0x58, 0xd6, 0x8d}} {
		if n := count(img, c.r, c.g, c.b); n < 200 {
			t.Errorf("screenshot %s: %d pixels of the %s; the plots are not drawn", path, n, c.name)
		}
	}
	t.Logf("screenshot: %s (%d bytes); %d updates, %d points per series", path, len(shot), after.Updates, after.Points)
}

// count counts the pixels within a small distance of the color.
func count(img image.Image, r, g, b uint8) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr>>8, r) && near(pg>>8, g) && near(pb>>8, b) {
				n++
			}
		}
	}
	return n
}

func near(v uint32, c uint8) bool { return v+24 >= uint32(c) && v <= uint32(c)+24 }
