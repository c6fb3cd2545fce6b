package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rewindgo/rewind/transport"
)

// serverOptions are the settings of "arena server".
type serverOptions struct {
	Listen string
	// Ticks > 0 ends the server once it has run that many ticks, a player
	// has joined and every player has left (CI); 0 serves until
	// interrupted.
	Ticks   int
	Timeout time.Duration
	JSON    bool
	Verbose bool
	// Dashboard is the address of a live dashboard of the server's
	// figures per client (package ops/dashboard; "": none).
	Dashboard string
	// Web is the HTTP address that serves the browser client (page,
	// wasm_exec.js, the wasm) and its WebSocket endpoint /ws, feeding the
	// same game as the QUIC listener ("": none).
	Web string
}

// clientOptions are the settings of "arena client".
type clientOptions struct {
	Server string
	Bot    bool
	Seed   uint64
	Link   transport.LinkConfig

	// Ticks > 0 ends the run once the client's state matched the
	// server's at a tick at or after Ticks, and matchedTail more (CI).
	Ticks      int
	Headless   bool
	Screenshot string
	JSON       bool
	Timeout    time.Duration
	Scale      float64
	NoSmooth   bool
	Outlines   bool
	// ConnectTimeout bounds the QUIC dial (retried until then).
	ConnectTimeout time.Duration
	Verbose        bool
	// Linger keeps a --ticks run playing after it finished (the browser
	// client: the page stays, its summary published).
	Linger bool
}

var errUsage = errors.New("usage")

const usage = `Usage:
  arena server [flags]    the dedicated server (no window)
  arena client [flags]    a player's window

A top-down arena shooter over QUIC on rewind: the server simulates, each
client predicts its own ship and bullets and shows the other ships
interpolated; hit-scans are judged by the server with lag compensation.
Three terminals on one machine:

  arena server --listen :7777
  arena client --server 127.0.0.1:7777
  arena client --server 127.0.0.1:7777 --bot

In a browser: "arena server --web :8080" also serves the browser client
at http://localhost:8080/ (WebSocket; ?bot=1 for a bot), beside QUIC.

Keys: WASD or arrows move, Space fires, E hit-scans, C smoothing on/off,
T the server's positions as outlines, G the net graph.
Run "arena server -help" or "arena client -help" for the flags.
`

func parseServer(args []string, stderr io.Writer) (serverOptions, error) {
	var o serverOptions
	fs := flag.NewFlagSet("arena server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Listen, "listen", ":7777", "UDP `address` to serve QUIC on")
	fs.IntVar(&o.Ticks, "ticks", 0, "stop after N ticks, once a player joined and all have left (0: serve until interrupted)")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "with --ticks: give up after this long")
	fs.BoolVar(&o.JSON, "json", false, "print a JSON summary on stdout at the end")
	fs.BoolVar(&o.Verbose, "v", false, "log players joining and leaving to stderr")
	fs.StringVar(&o.Dashboard, "dashboard", "", "serve a live dashboard of the server's figures on this HTTP `address` (e.g. :8080)")
	fs.StringVar(&o.Web, "web", "", "serve the browser client and its WebSocket endpoint (/ws) on this HTTP `address` (e.g. :8080)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if o.Ticks < 0 || o.Timeout <= 0 {
		return o, fmt.Errorf("%w: --ticks must not be negative, --timeout must be positive", errUsage)
	}
	return o, nil
}

func parseClient(args []string, stderr io.Writer) (clientOptions, error) {
	var o clientOptions
	fs := flag.NewFlagSet("arena client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Server, "server", "127.0.0.1:7777", "the server: `host:port` over QUIC, or ws://HOST:PORT/ws over WebSocket (a server's --web; the browser's default: its page's host)")
	fs.BoolVar(&o.Bot, "bot", false, "a bot plays (moves, fires, scans) instead of the keyboard")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the bot and the link conditions")
	fs.DurationVar(&o.Link.Latency, "latency", 0, "added one-way latency, each direction of this client's link")
	fs.DurationVar(&o.Link.Jitter, "jitter", 0, "latency jitter: each datagram gets ± up to this much")
	fs.Float64Var(&o.Link.Loss, "loss", 0, "probability that a datagram is lost, each direction (0..1)")
	fs.IntVar(&o.Ticks, "ticks", 0, "stop once the state matched the server's at a tick at or after N (0: play until the window closes)")
	fs.BoolVar(&o.Headless, "headless", false, "CI run: --bot, exit after --ticks (needs a display, e.g. xvfb-run)")
	fs.StringVar(&o.Screenshot, "screenshot", "", "with --ticks: write the last frame to this PNG `file`")
	fs.BoolVar(&o.JSON, "json", false, "with --ticks: print a JSON summary on stdout")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "with --ticks: give up after this long")
	fs.Float64Var(&o.Scale, "scale", 1, "window scale")
	fs.BoolVar(&o.NoSmooth, "no-smooth", false, "start with correction smoothing off (key C toggles it)")
	fs.BoolVar(&o.Outlines, "outlines", false, "start with the server's positions outlined (key T toggles them)")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", 30*time.Second, "how long to keep trying to reach the server")
	fs.BoolVar(&o.Verbose, "v", false, "log connection events to stderr")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if o.Headless {
		o.Bot = true
	}
	switch {
	case !(o.Link.Loss >= 0 && o.Link.Loss < 1) || o.Link.Latency < 0 || o.Link.Jitter < 0:
		return o, fmt.Errorf("%w: --loss is a probability (0..1, 1 excluded), --latency and --jitter not negative", errUsage)
	case o.Ticks < 0:
		return o, fmt.Errorf("%w: --ticks %d", errUsage, o.Ticks)
	case o.Headless && o.Ticks == 0:
		return o, fmt.Errorf("%w: --headless needs --ticks", errUsage)
	case o.Scale <= 0 || o.Timeout <= 0 || o.ConnectTimeout <= 0:
		return o, fmt.Errorf("%w: --scale, --timeout and --connect-timeout must be positive", errUsage)
	}
	return o, nil
}
