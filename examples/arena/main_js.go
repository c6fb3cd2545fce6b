//go:build js

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"sort"
	"syscall/js"
	"time"

	"github.com/hajimehoshi/ebiten/v2"

	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport/websocket"
)

// The browser client: the page's query holds the client's flags
// (?bot=1&seed=3&ticks=600&server=ws://host:8080/ws; see "arena client
// -help"), the server defaults to the WebSocket endpoint of the page's
// own host (/ws), and a --ticks run publishes its summary (the native
// client's --json) as the JS global arenaSummary (a JSON string,
// refreshed every second while the page plays on) and POSTs the first
// one to the page's server (report).
func main() {
	// Fewer collections: the browser's one thread does the game, the GC
	// and the rendering.
	debug.SetGCPercent(400)
	loc := js.Global().Get("location")
	href := loc.Get("href").String()
	o, err := browserOptions(href)
	if err != nil {
		fail(err)
		return
	}
	os.Exit(runBrowser(context.Background(), o, href))
}

// browserOptions turns the page's query into the client's flags.
func browserOptions(href string) (clientOptions, error) {
	u, err := url.Parse(href)
	if err != nil {
		return clientOptions{}, err
	}
	q := u.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		args = append(args, "--"+k+"="+q.Get(k))
	}
	var stderr bytes.Buffer
	o, err := parseClient(args, &stderr)
	if err != nil {
		return o, fmt.Errorf("%v: %s", err, stderr.String())
	}
	if !q.Has("server") {
		o.Server = websocket.WebSocketURL(href, "/ws")
	}
	o.Headless, o.Screenshot, o.JSON = false, "", false
	o.Linger = true
	return o, nil
}

// fail shows err on the page and publishes it.
func fail(err error) {
	fmt.Fprintln(os.Stderr, "arena:", err)
	js.Global().Set("arenaError", err.Error())
}

func runBrowser(ctx context.Context, o clientOptions, href string) int {
	keys := &keyboard{}
	read := keys.buttons
	var c *client
	if o.Bot {
		read = func(t tick.Tick) uint8 { return botButtons(o.Seed, uint64(c.rc.ID()), t) }
	}
	c, err := newClient(read, nil)
	if err != nil {
		fail(err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "arena: connecting to %s ...\n", o.Server)
	var conn *websocket.Conn
	deadline := time.Now().Add(o.ConnectTimeout)
	for {
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		conn, err = websocket.Dial(dctx, o.Server, websocket.Config{})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("cannot reach the server at %s: %v", o.Server, err))
			return 1
		}
		time.Sleep(500 * time.Millisecond) // the browser's event loop runs meanwhile
	}
	if err := c.connect(conn); err != nil {
		fail(err)
		return 1
	}
	g := newGame(ctx, c, o, keys)
	posted := false
	publish := func(runErr error) {
		sum := c.summary(o, runErr, nil)
		b, _ := json.Marshal(struct {
			clientSummary
			Transport string `json:"transport"`
		}{sum, "websocket"})
		js.Global().Set("arenaSummary", string(b))
		if posted { // once to the server; the global is refreshed every second
			return
		}
		posted = true
		u, err := url.Parse(href)
		if err != nil {
			return
		}
		report, err := u.Parse("report") // beside the page: webserve.ReportPath
		if err != nil {
			return
		}
		go func() {
			resp, err := http.Post(report.String(), "application/json", bytes.NewReader(b))
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	g.onFinish = func() { publish(nil) }
	ebiten.SetWindowTitle("rewind arena")
	err = ebiten.RunGame(g)
	if g.finished.IsZero() && o.Ticks > 0 {
		publish(err)
	}
	if err != nil {
		fail(err)
	}
	c.close()
	return 0
}
