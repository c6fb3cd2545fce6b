package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport/quic"
)

// "rewind load": thin clients (the replication protocol only: they
// connect, apply and acknowledge what the server sends, and simulate
// nothing) against match servers, and "rewind load serve": match servers
// of the replication arena to load, each on its own port, with tick
// duration statistics. Together they measure how many matches a core
// holds.

// loadOptions are the settings of "rewind load".
type loadOptions struct {
	Addr           string
	Matches        int
	Clients        int
	Duration       time.Duration
	ConnectTimeout time.Duration
	JSON           bool
}

// loadServeOptions are the settings of "rewind load serve".
type loadServeOptions struct {
	Listen    string
	Matches   int
	Entities  int
	Priority  float64
	Duration  time.Duration
	Wait      int
	WaitFor   time.Duration
	Procs     int
	JSON      bool
	Dashboard string
}

func loadFlags() (*flag.FlagSet, *loadOptions) {
	o := &loadOptions{}
	fs := flag.NewFlagSet("rewind load", flag.ContinueOnError)
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:7000", "the first match server's `host:port` (QUIC); match k is on port+k")
	fs.IntVar(&o.Matches, "matches", 1, "number of match servers, on consecutive ports")
	fs.IntVar(&o.Clients, "clients", 8, "thin clients per match")
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "how long to measure once every client is connected")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", 60*time.Second, "how long the clients may take to connect")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind load [flags]
       rewind load serve [flags]

"rewind load" connects --clients thin clients to each of --matches match
servers ("rewind load serve", or any server of the replication arena's
protocol) and reports what they receive: bytes per second, round-trip
times, resyncs, disconnections. A thin client speaks the protocol only:
it applies and acknowledges the server's updates and simulates nothing,
so one process holds hundreds. The server's certificate is not verified
(load testing only).

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

func loadServeFlags() (*flag.FlagSet, *loadServeOptions) {
	o := &loadServeOptions{}
	fs := flag.NewFlagSet("rewind load serve", flag.ContinueOnError)
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:7000", "the first match's UDP `host:port`; match k listens on port+k")
	fs.IntVar(&o.Matches, "matches", 1, "number of match servers in this process, each with its own world, loop and port")
	fs.IntVar(&o.Entities, "entities", 300, "replicated entities per match")
	fs.Float64Var(&o.Priority, "priority", 1, "replication priority of every entity (1: changes sent every tick)")
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "how long to measure, once --wait clients are connected")
	fs.IntVar(&o.Wait, "wait", 0, "clients every match waits for before measuring")
	fs.DurationVar(&o.WaitFor, "wait-for", 2*time.Minute, "how long to wait for them")
	fs.IntVar(&o.Procs, "procs", 0, "GOMAXPROCS: cores the Go scheduler uses (0: all); 1 measures one core")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object")
	dashboardFlag(fs, &o.Dashboard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind load serve [flags]

Runs --matches match servers of the replication arena (--entities moving,
spawned, destroyed entities each, 60 ticks per second) in this process,
each on its own port with its own goroutine, and measures each tick's
duration (receive, simulate, send: the tick's own work) and when each
tick ended after it was due (work plus waiting for the core: the other
matches and the QUIC connections' goroutines share it), once --wait
clients are connected to every match. The summary gives per match the
median, 99th percentile and worst of both, the ticks that ended more than
half the 16.7 ms budget after they were due, and the CPU time the process
used per second. With --procs 1 the matches share one core: a core holds
N matches while every match's ticks end within half the budget (p99).
--dashboard shows match 0 live.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

// loadCommand runs "rewind load" and "rewind load serve".
func loadCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "serve" {
		fs, o := loadServeFlags()
		if err := parseFlags(fs, args[1:], stderr); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usageError("unexpected arguments %q", fs.Args())
		}
		if o.Matches < 1 || o.Entities < 1 || o.Entities > demo.MaxArenaEntities || !(o.Priority > 0 && o.Priority <= 1) || o.Duration <= 0 || o.Wait < 0 || o.Procs < 0 {
			return usageError("--matches, --entities (1..%d), --priority (0..1], --duration want positive values", demo.MaxArenaEntities)
		}
		sum, err := runLoadServe(ctx, *o, stderr)
		if err != nil {
			return err
		}
		return printLoad(stdout, o.JSON, sum)
	}
	fs, o := loadFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if o.Matches < 1 || o.Clients < 1 || o.Duration <= 0 {
		return usageError("--matches, --clients and --duration want positive values")
	}
	sum, err := runLoadClients(ctx, *o, stderr)
	if err != nil {
		return err
	}
	return printLoad(stdout, o.JSON, sum)
}

func printLoad(w io.Writer, asJSON bool, v any) error {
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// thinClient is one connection of "rewind load".
type thinClient struct {
	idx   int
	match int
	rc    *replicate.Client
	conn  *quic.Conn
	in0   uint64
}

// clientsSummary is the summary of "rewind load".
type clientsSummary struct {
	Mode            string  `json:"mode"`
	Matches         int     `json:"matches"`
	Clients         int     `json:"clients"`
	Connected       int     `json:"connected"`
	ConnectSec      float64 `json:"connect_sec"`
	MeasuredSec     float64 `json:"measured_sec"`
	InPerSecClient  float64 `json:"in_bytes_per_sec_per_client"`
	OutPerSecClient float64 `json:"out_bytes_per_sec_per_client"`
	RTTP50MS        float64 `json:"rtt_p50_ms"`
	RTTP99MS        float64 `json:"rtt_p99_ms"`
	EntitiesMin     int     `json:"entities_min"`
	Resyncs         uint64  `json:"resyncs"`
	Disconnected    int     `json:"disconnected"`
	// BusyRetries counts the joins the server refused as busy
	// (ServerConfig.MaxJoining), each retried as a real client would.
	BusyRetries int `json:"busy_retries"`
}

// runLoadClients connects the thin clients, keeps them updated at 60 Hz
// for o.Duration once all are connected, and returns the summary.
func runLoadClients(ctx context.Context, o loadOptions, live io.Writer) (*clientsSummary, error) {
	host, portStr, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, usageError("--addr %q: %v", o.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, usageError("--addr %q: port: %v", o.Addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tlsCfg := &tls.Config{InsecureSkipVerify: true} // load testing a self-signed server; see the usage
	n := o.Matches * o.Clients
	clients := make([]*thinClient, n)
	defer func() {
		for _, c := range clients {
			if c != nil && c.rc != nil {
				c.rc.Close()
			}
			if c != nil && c.conn != nil {
				c.conn.Close()
			}
		}
	}()
	start := time.Now()
	// Dial 8 at a time: a thousand handshakes at once swamp a small
	// machine. A client dialled and connected is handed to the update loop
	// (joined), which runs meanwhile: the server admits the first while
	// the last are dialling.
	sem := make(chan struct{}, 8)
	errs := make([]error, n)
	joined := make(chan *thinClient, n)
	var wg sync.WaitGroup
	// join dials client i with a new replication client, in the
	// background.
	join := func(i int) error {
		c := clients[i]
		proto, err := demo.NewArenaProtocol()
		if err != nil {
			return err
		}
		if c.rc, err = replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: proto.Protocol}); err != nil {
			return err
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			addr := net.JoinHostPort(host, strconv.Itoa(port+c.match))
			if c.conn, errs[i] = dial(ctx, addr, quic.Config{TLS: tlsCfg}); errs[i] == nil {
				if errs[i] = c.rc.Connect(c.conn); errs[i] == nil {
					joined <- c
				}
			}
		})
		return nil
	}
	for i := range clients {
		clients[i] = &thinClient{idx: i, match: i % o.Matches}
		if err := join(i); err != nil {
			return nil, err
		}
	}
	defer wg.Wait() // before the deferred closes
	wait := newPacer(ctx, 0, nil).wait
	deadline := time.Now().Add(o.ConnectTimeout)
	var active []*thinClient
	busy := 0
	update := func() (connected int) {
		for len(joined) > 0 {
			active = append(active, <-joined)
		}
		kept := active[:0]
		for _, c := range active {
			c.rc.Update()
			switch err := c.rc.Err(); {
			case c.rc.State() == replicate.Connected:
				connected++
			case errors.Is(err, replicate.ErrRejected) && strings.Contains(err.Error(), "server busy"):
				// Refused while too many others join: retry, as a game's
				// client would.
				busy++
				c.rc.Close()
				c.conn.Close()
				if join(c.idx) != nil {
					kept = append(kept, c)
				}
				continue
			}
			kept = append(kept, c)
		}
		active = kept
		return connected
	}
	for update() < n {
		if time.Now().After(deadline) {
			cancel()
			states := map[string]int{}
			for _, c := range active {
				st := c.rc.State().String()
				if err := c.rc.Err(); err != nil && states[st] == 0 {
					st += " (" + err.Error() + ")"
				}
				states[st]++
			}
			return nil, errors.Join(fmt.Errorf("%d of %d clients connected after %v (%d dialled; states %v)", update(), n, o.ConnectTimeout, len(active), states), errors.Join(errs...))
		}
		if !wait(phaseConnect) {
			return nil, ctx.Err()
		}
	}
	sum := &clientsSummary{Mode: "load", Matches: o.Matches, Clients: n, ConnectSec: round3(time.Since(start).Seconds())}
	fmt.Fprintf(live, "%d thin clients connected in %.1fs; measuring for %v\n", n, sum.ConnectSec, o.Duration)
	var out0 uint64
	for _, c := range clients {
		st := c.rc.Stats()
		c.in0 = st.BytesIn
		out0 += st.BytesOut
	}
	t0 := time.Now()
	for time.Since(t0) < o.Duration {
		_ = update() // a client refused now is retried, and counted as not connected
		if !wait(phaseRun) {
			break
		}
	}
	el := time.Since(t0).Seconds()
	sum.MeasuredSec = round3(el)
	var in, out uint64
	var rtts []float64
	sum.EntitiesMin = -1
	for _, c := range clients {
		st := c.rc.Stats()
		in += st.BytesIn - c.in0
		out += st.BytesOut
		sum.Resyncs += st.Resyncs
		if c.rc.State() != replicate.Connected {
			sum.Disconnected++
			continue
		}
		sum.Connected++
		rtts = append(rtts, float64(c.conn.Stats().RTT)/float64(time.Millisecond))
		if e := c.rc.Entities(); sum.EntitiesMin < 0 || e < sum.EntitiesMin {
			sum.EntitiesMin = e
		}
	}
	sum.BusyRetries = busy
	sum.InPerSecClient = round3(float64(in) / el / float64(n))
	sum.OutPerSecClient = round3(float64(out-out0) / el / float64(n))
	if len(rtts) > 0 {
		slices.Sort(rtts)
		sum.RTTP50MS = round3(rtts[len(rtts)/2])
		sum.RTTP99MS = round3(rtts[min(len(rtts)-1, len(rtts)*99/100)])
	}
	return sum, nil
}
