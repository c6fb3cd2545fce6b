//go:build !js

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "boxgame.local/nodisplay" // a message instead of a panic without a display
	"github.com/hajimehoshi/ebiten/v2"

	"github.com/rewindgo/rewind/examples/internal/webserve"
	"github.com/rewindgo/rewind/ops/dashboard"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/quic"
	"github.com/rewindgo/rewind/transport/websocket"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "server":
		var o serverOptions
		if o, err = parseServer(args[1:], stderr); err == nil {
			return runServer(ctx, o, stdout, stderr)
		}
	case "client":
		var o clientOptions
		if o, err = parseClient(args[1:], stderr); err == nil {
			return runClient(ctx, o, stdout, stderr)
		}
	default:
		err = fmt.Errorf("%w: unknown command %q (want server or client)", errUsage, args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "arena: %v\n", err)
	return 2
}

func logger(on bool, stderr io.Writer) *slog.Logger {
	if !on {
		return nil
	}
	return slog.New(slog.NewTextHandler(stderr, nil))
}

// runServer serves QUIC on o.Listen and ticks the game at 60 Hz until
// interrupted (or, with --ticks, until the players have come and gone).
func runServer(ctx context.Context, o serverOptions, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := newServer(logger(o.Verbose, stderr))
	if err != nil {
		fmt.Fprintf(stderr, "arena: %v\n", err)
		return 1
	}
	// A certificate made at start: the clients do not verify it (see
	// dialServer). Fine for a game example, not for a real deployment.
	srvTLS, _, err := quic.SelfSigned()
	if err != nil {
		fmt.Fprintf(stderr, "arena: %v\n", err)
		return 1
	}
	ln, err := quic.Listen(ctx, o.Listen, quic.Config{TLS: srvTLS})
	if err != nil {
		fmt.Fprintf(stderr, "arena: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "arena: serving on %v (QUIC); Ctrl-C stops\n", ln.Addr())
	if o.Dashboard != "" {
		s.mx = metrics.NewServer(s.srv, metrics.ServerConfig{})
		a, _, err := dashboard.Serve(ctx, o.Dashboard, dashboard.New(dashboard.Config{Title: "arena server", Server: s.mx}))
		if err != nil {
			fmt.Fprintf(stderr, "arena: --dashboard: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "arena: dashboard on http://%v/\n", a)
	}
	s.serve(ctx, ln)
	if o.Web != "" {
		wln := websocket.NewListener(websocket.Config{Logger: logger(o.Verbose, stderr)})
		defer wln.Close()
		h, page, err := webHandler(wln, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "arena: --web: %v\n", err)
			return 1
		}
		a, _, err := webserve.Serve(ctx, o.Web, h)
		if err != nil {
			fmt.Fprintf(stderr, "arena: --web: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "arena: browser clients: open %s (WebSocket on /ws; ?bot=1 for a bot)\n", browseURL(a))
		go func() {
			if err := page.Prepare(ctx); err == nil {
				fmt.Fprintf(stderr, "arena: browser client ready (%s)\n", page.Source())
			} else if ctx.Err() == nil {
				fmt.Fprintf(stderr, "arena: browser client unavailable: %v\n", err)
			}
		}()
		s.serve(ctx, wln)
	}
	start := time.Now()
	next, status := start, start.Add(10*time.Second)
	shown := 0
	var runErr error
	for pace(ctx, &next, time.Second/tickRate) {
		if runErr = s.step(); runErr != nil {
			break
		}
		for ; shown < len(s.events); shown++ {
			fmt.Fprintf(stderr, "arena: %s\n", s.events[shown])
		}
		shown = len(s.events) // the list keeps the last 20 only
		if now := time.Now(); now.After(status) {
			status = now.Add(10 * time.Second)
			scans, hits := s.hits()
			fmt.Fprintf(stderr, "arena: tick %v, %d players, %d bullets in flight, %d scans (%d hits)\n",
				s.tick, len(s.players), s.game.Bullets(), scans, hits)
		}
		if o.Ticks == 0 {
			continue
		}
		if int(s.tick) >= o.Ticks && s.joined > 0 && len(s.players) == 0 {
			break
		}
		if time.Since(start) > o.Timeout {
			runErr = fmt.Errorf("timed out after %v at tick %v (%d players joined, %d still here)", o.Timeout, s.tick, s.joined, len(s.players))
			break
		}
	}
	cancel()
	runErr = errors.Join(runErr, s.close())
	ln.Close()
	if o.JSON {
		_ = json.NewEncoder(stdout).Encode(s.summary(time.Since(start), runErr))
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "arena: %v\n", runErr)
		return 1
	}
	return 0
}

// dialServer connects to the server at addr over QUIC, through a
// link-conditioning proxy on loopback when link is set (QUIC dials an
// address, so the conditions sit in a local proxy, transport.Proxy:
// each direction of the client's link gets link). The server's
// certificate is self-signed and made at its start, so the client does
// not verify it: the example trusts the address it is given.
func dialServer(ctx context.Context, addr string, link transport.LinkConfig, seed uint64, timeout time.Duration) (transport.MessageConn, *transport.Proxy, error) {
	if strings.HasPrefix(addr, "ws://") || strings.HasPrefix(addr, "wss://") {
		return dialWebSocket(ctx, addr, link, timeout)
	}
	var proxy *transport.Proxy
	if link != (transport.LinkConfig{}) {
		var err error
		proxy, err = transport.NewProxy(ctx, transport.ProxyConfig{Listen: "127.0.0.1:0", Target: addr, Up: link, Down: link, Seed: seed})
		if err != nil {
			return nil, nil, err
		}
		addr = proxy.Addr().String()
	}
	cfg := quic.Config{TLS: &tls.Config{InsecureSkipVerify: true}}
	deadline := time.Now().Add(timeout)
	for {
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		conn, err := quic.Dial(dctx, addr, cfg)
		cancel()
		if err == nil {
			return conn, proxy, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			if proxy != nil {
				proxy.Close()
			}
			return nil, nil, err
		}
	}
}

// dialWebSocket connects to the server's --web endpoint (ws://HOST:PORT/ws),
// as the browser client does. Link conditions apply to datagrams only
// (transport.Proxy): a TCP connection cannot be given loss that way.
func dialWebSocket(ctx context.Context, url string, link transport.LinkConfig, timeout time.Duration) (transport.MessageConn, *transport.Proxy, error) {
	if link != (transport.LinkConfig{}) {
		return nil, nil, errors.New("--latency, --jitter and --loss condition QUIC only (a UDP proxy); not a WebSocket")
	}
	deadline := time.Now().Add(timeout)
	for {
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		conn, err := websocket.Dial(dctx, url, websocket.Config{})
		cancel()
		if err == nil {
			return conn, nil, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, nil, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// runClient connects to the server and opens the game's window.
func runClient(ctx context.Context, o clientOptions, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys := &keyboard{}
	read := keys.buttons
	var c *client
	if o.Bot {
		read = func(t tick.Tick) uint8 { return botButtons(o.Seed, uint64(c.rc.ID()), t) }
	}
	c, err := newClient(read, logger(o.Verbose, stderr))
	if err != nil {
		fmt.Fprintf(stderr, "arena: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "arena: connecting to %s ...\n", o.Server)
	conn, proxy, err := dialServer(ctx, o.Server, o.Link, o.Seed, o.ConnectTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "arena: cannot reach the server at %s: %v\n", o.Server, err)
		return 1
	}
	if err := c.connect(conn); err != nil {
		fmt.Fprintf(stderr, "arena: %v\n", err)
		return 1
	}
	g := newGame(ctx, c, o, keys)
	ebiten.SetWindowTitle(fmt.Sprintf("rewind arena (server %s)", o.Server))
	ebiten.SetWindowSize(int(screenW*o.Scale), int(screenH*o.Scale))
	ebiten.SetRunnableOnUnfocused(true) // two windows on one screen both keep running
	ebiten.SetTPS(60)
	err = ebiten.RunGame(g)
	c.close()
	if proxy != nil {
		// The conn's close crosses the proxy with the link's latency:
		// let it through, so that the server sees the player leave now
		// rather than at its idle timeout.
		time.Sleep(2*o.Link.Latency + o.Link.Jitter + 100*time.Millisecond)
		proxy.Close()
	}
	if o.Ticks == 0 {
		if err != nil {
			fmt.Fprintf(stderr, "arena: %v\n", err)
			return 1
		}
		return 0
	}
	sum := c.summary(o, err, g.shotErr)
	if o.JSON {
		_ = json.NewEncoder(stdout).Encode(sum)
	} else {
		fmt.Fprintf(stdout, "player %d: converged at tick %d, %d rollbacks, %d corrections, scans agreed %d/%d\n",
			sum.Player, sum.ConvergedTick, sum.Rollbacks, sum.Corrections, sum.ScansAgreed, sum.ScansAgreed+sum.ScansDisagreed)
	}
	if !sum.OK {
		fmt.Fprintln(stderr, "arena: FAILED:", sum.Failure)
		return 1
	}
	return 0
}
