package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rewindgo/rewind/transport"
)

type netsimOptions struct {
	Listen, Target, Upstream string
	Latency, Jitter          time.Duration
	Loss, Dup, Reorder       float64
	Bandwidth                int64
	Seed                     uint64
	StatsEvery               time.Duration
}

func netsimFlags() (*flag.FlagSet, *netsimOptions) {
	o := &netsimOptions{}
	fs := flag.NewFlagSet("rewind netsim", flag.ContinueOnError)
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:0", "UDP `address` the client sends to")
	fs.StringVar(&o.Target, "target", "", "UDP `address` datagrams are forwarded to (required)")
	fs.StringVar(&o.Upstream, "upstream", "", "local UDP `address` to send to the target from (default: any free port)")
	fs.DurationVar(&o.Latency, "latency", 0, "one-way latency, each direction")
	fs.DurationVar(&o.Jitter, "jitter", 0, "latency jitter: each datagram gets ± up to this much")
	fs.Float64Var(&o.Loss, "loss", 0, "probability that a datagram is lost (0..1)")
	fs.Float64Var(&o.Dup, "dup", 0, "probability that a datagram is duplicated (0..1)")
	fs.Float64Var(&o.Reorder, "reorder", 0, "probability that a datagram is held back so later ones overtake it (0..1)")
	fs.Int64Var(&o.Bandwidth, "bandwidth", 0, "bandwidth cap in bytes per second, each direction (0: unlimited)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the random decisions")
	fs.DurationVar(&o.StatsEvery, "stats", time.Second, "statistics period (0: off)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind netsim --target ADDR [flags]

Forwards UDP datagrams sent to --listen on to --target, and the target's
replies back to the most recent client, under the given network conditions
(applied in both directions), until interrupted. Put any UDP game behind it.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

func netsimCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := netsimFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if o.Target == "" {
		return usageError("--target is required")
	}
	if o.Latency < 0 || o.Jitter < 0 || o.Bandwidth < 0 || o.StatsEvery < 0 {
		return usageError("durations and --bandwidth must not be negative")
	}
	for _, p := range []float64{o.Loss, o.Dup, o.Reorder} {
		if !(p >= 0 && p <= 1) {
			return usageError("--loss, --dup and --reorder are probabilities: want 0..1")
		}
	}
	return runNetsim(ctx, *o, stdout, nil)
}

// runNetsim runs the proxy until ctx is done, printing statistics to w.
// started, when not nil, receives the proxy once it listens.
func runNetsim(ctx context.Context, o netsimOptions, w io.Writer, started func(*transport.Proxy)) error {
	link := transport.LinkConfig{Latency: o.Latency, Jitter: o.Jitter, Loss: o.Loss, Duplicate: o.Dup,
		Reorder: o.Reorder, BandwidthBytesPerSec: o.Bandwidth}
	p, err := transport.NewProxy(ctx, transport.ProxyConfig{
		Listen: o.Listen, Target: o.Target, Upstream: o.Upstream, Up: link, Down: link, Seed: o.Seed,
	})
	if err != nil {
		return err
	}
	defer p.Close()
	fmt.Fprintf(w, "netsim: listening on %v, forwarding to %s from %v (latency %v ±%v, loss %g, dup %g, reorder %g, bandwidth %s)\n",
		p.Addr(), o.Target, p.UpstreamAddr(), o.Latency, o.Jitter, o.Loss, o.Dup, o.Reorder, bandwidthString(o.Bandwidth))
	if started != nil {
		started(p)
	}
	var tick <-chan time.Time
	if o.StatsEvery > 0 {
		t := time.NewTicker(o.StatsEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(w, "netsim: stopped; %s\n", proxyStats(p.Stats()))
			return nil
		case <-tick:
			fmt.Fprintf(w, "netsim: %s\n", proxyStats(p.Stats()))
		}
	}
}

func bandwidthString(b int64) string {
	if b == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d B/s", b)
}

func proxyStats(s transport.ProxyStats) string {
	dir := func(l transport.LinkStats) string {
		return fmt.Sprintf("%d sent %d delivered %d lost %d dup %d reordered %d queue-dropped",
			l.Sent, l.Delivered, l.Lost, l.Duplicated, l.Reordered, l.DroppedQueue)
	}
	client := "none yet"
	if s.Client.IsValid() {
		client = s.Client.String()
	}
	return fmt.Sprintf("client %s | up: %s | down: %s | stray %d", client, dir(s.Up), dir(s.Down), s.DroppedStray)
}
