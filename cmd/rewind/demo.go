package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/rollback"
)

// demoOptions are the settings of a P2P demo match.
type demoOptions struct {
	Peers, Spectators, NPCs int
	Frames                  int
	Latency, Jitter         time.Duration
	Loss, Dup               float64
	Seed                    uint64
	InputDelay              int
	DesyncInterval          int
	// Record is the file peer 0 records the match to ("" for none).
	Record string
	JSON   bool
	// Drain is how long a peer of "rewind peer" keeps answering the others
	// after finishing. The in-process demo has none: a match ends when
	// every peer has confirmed its last frame (rollback.Config.EndFrame).
	Drain time.Duration
	// Timeout aborts a match that does not finish (0: from Frames).
	Timeout time.Duration
	// StatsEvery is the live statistics period (0: none).
	StatsEvery time.Duration
	// DumpDir, when set, is where each peer writes its dump of the
	// differing types at a desynced frame (for "rewind diff").
	DumpDir string
	// Corrupt, above 0, is the frame at which the last peer corrupts one
	// field of one entity: a deliberate desync.
	Corrupt int
	// Dashboard is the address of the live dashboard ("": none).
	Dashboard string
	// RejoinBytes, above 0, lets a peer that left come back
	// (rollback.Config.RejoinBytes); Rejoin makes this process such a
	// peer (rollback.Config.Rejoin). Only "rewind peer" sets them.
	RejoinBytes int
	Rejoin      bool
}

func demoFlags() (*flag.FlagSet, *demoOptions) {
	o := &demoOptions{}
	fs := flag.NewFlagSet("rewind demo", flag.ContinueOnError)
	fs.IntVar(&o.Peers, "peers", 2, "number of peers, one player each (1..8)")
	fs.IntVar(&o.Frames, "frames", 600, "frames every peer plays (60 per second)")
	// The defaults make rollbacks happen (30 ms and no loss against a
	// 2-frame input delay gave none): the demo shows the headline feature.
	fs.DurationVar(&o.Latency, "latency", 60*time.Millisecond, "one-way latency of every link")
	fs.DurationVar(&o.Jitter, "jitter", 20*time.Millisecond, "latency jitter: each datagram gets ± up to this much")
	fs.Float64Var(&o.Loss, "loss", 0.05, "probability that a datagram is lost (0..1)")
	fs.Float64Var(&o.Dup, "dup", 0, "probability that a datagram is duplicated (0..1)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the game, the bots and the link conditions")
	fs.IntVar(&o.Spectators, "spectators", 0, "number of spectators following peer 0")
	fs.IntVar(&o.NPCs, "npcs", demo.DefaultNPCs, "number of wandering NPCs")
	fs.IntVar(&o.InputDelay, "input-delay", 2, "input delay in frames")
	fs.IntVar(&o.DesyncInterval, "desync-interval", 30, "frames between desync checks (0: off)")
	fs.StringVar(&o.Record, "record", "", "record peer 0's match to `FILE` (play it with rewind replay)")
	fs.StringVar(&o.DumpDir, "dump-dir", "", "on a desync, each peer writes its state of the differing types at that frame to a file in `DIR` (compare two with rewind diff)")
	fs.IntVar(&o.Corrupt, "corrupt", 0, "deliberate desync: the last peer moves player 0 one unit further at this `frame` (0: off); try it with --dump-dir")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object on stdout (live stats go to stderr)")
	fs.DurationVar(&o.Timeout, "timeout", 0, "abort a match that takes longer (0: 3x its length plus 30s)")
	fs.DurationVar(&o.StatsEvery, "stats", time.Second, "live statistics period (0: off)")
	dashboardFlag(fs, &o.Dashboard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind demo [p2p] [flags]

Plays the demo game between --peers peers in this process, over UDP on
loopback, every link between two peers through a link-conditioning proxy.
Exits with status 1 when the peers' confirmed checksums differ or a desync
was detected. "rewind help demo server" describes the replication demo,
"rewind help demo predict" the client-side prediction demo.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

func (o *demoOptions) check() error {
	switch {
	case o.Peers < 1 || o.Peers > rollback.MaxPlayers:
		return usageError("--peers %d: want 1..%d", o.Peers, rollback.MaxPlayers)
	case o.Frames < 1:
		return usageError("--frames %d: want at least 1", o.Frames)
	case o.Spectators < 0 || o.Spectators > rollback.MaxSpectators:
		return usageError("--spectators %d: want 0..%d", o.Spectators, rollback.MaxSpectators)
	case o.NPCs < 0 || o.NPCs > demo.MaxNPCs:
		return usageError("--npcs %d: want 0..%d", o.NPCs, demo.MaxNPCs)
	case o.Latency < 0 || o.Jitter < 0:
		return usageError("--latency and --jitter must not be negative")
	case !(o.Loss >= 0 && o.Loss <= 1) || !(o.Dup >= 0 && o.Dup <= 1):
		return usageError("--loss and --dup are probabilities: want 0..1")
	case o.InputDelay < 0 || o.InputDelay > rollback.MaxInputDelay:
		return usageError("--input-delay %d: want 0..%d", o.InputDelay, rollback.MaxInputDelay)
	case o.DesyncInterval < 0:
		return usageError("--desync-interval %d: want 0 or more", o.DesyncInterval)
	case o.Drain < 0 || o.Timeout < 0 || o.StatsEvery < 0:
		return usageError("--drain, --timeout and --stats must not be negative")
	}
	return nil
}

func demoCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	mode := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		mode, args = args[0], args[1:]
	}
	switch mode {
	case "server":
		return serverCommand(ctx, args, stdout, stderr)
	case "predict":
		return predictCommand(ctx, args, stdout, stderr)
	}
	fs, o := demoFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		if mode != "" || fs.NArg() > 1 {
			return usageError("unexpected arguments %q", fs.Args())
		}
		mode = fs.Arg(0)
	}
	switch mode {
	case "", "p2p":
	case "server", "predict":
		return usageError("put the flags of \"demo %s\" after %q", mode, mode)
	default:
		return usageError("unknown demo %q (want p2p, server or predict)", mode)
	}
	if err := o.check(); err != nil {
		return err
	}
	live := stdout
	if o.JSON {
		live = stderr
	}
	sum, err := runDemo(ctx, *o, live)
	if err != nil {
		return err
	}
	return report(stdout, o.JSON, sum)
}
