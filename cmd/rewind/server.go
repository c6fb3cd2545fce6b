package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/dashboard"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
)

// serverOptions are the settings of a server demo run.
type serverOptions struct {
	Clients, Entities, Ticks int
	Latency, Jitter          time.Duration
	Loss, Dup                float64
	Seed                     uint64
	JSON                     bool
	// Priority is the replication priority of every entity (1: its
	// changes are sent every tick; 0.25: every 4th tick).
	Priority float64
	// PingEvery is the number of ticks between two Pings of each client
	// (0: no messages).
	PingEvery int
	// Drain is how long the server keeps ticking without changes before
	// the clients' state is compared; MaxDrain how long it waits at most
	// for them to converge.
	Drain, MaxDrain time.Duration
	// ConnectTimeout bounds the time until every client is connected.
	ConnectTimeout time.Duration
	// StatsEvery is the live statistics period (0: none).
	StatsEvery time.Duration
	// Disrupt cuts client 0 off (its proxy drops every datagram both
	// ways) for this long, a third into the run (0: never).
	Disrupt time.Duration
	// Dashboard is the address of the live dashboard ("": none).
	Dashboard string
	// ResyncAfter is the clients' ClientConfig.ResyncAfterSilence: a
	// client that received nothing for this long asks for a resync when
	// traffic resumes (0: never).
	ResyncAfter time.Duration

	// stall, for tests, stops the whole loop (server and clients) for this
	// long before simulation tick stallAt, as a loaded machine does.
	stall   time.Duration
	stallAt int
}

// Limits of the server demo's flags.
const (
	maxServerClients = 64
	serverTickRate   = 60
	// convergeCheckEvery is the number of drain ticks between two
	// comparisons of the clients' state with the server's.
	convergeCheckEvery = 10
	dialAttempts       = 3
	dialTimeout        = 10 * time.Second
)

func serverFlags() (*flag.FlagSet, *serverOptions) {
	o := &serverOptions{}
	fs := flag.NewFlagSet("rewind demo server", flag.ContinueOnError)
	fs.IntVar(&o.Clients, "clients", 4, fmt.Sprintf("number of clients (1..%d)", maxServerClients))
	fs.IntVar(&o.Entities, "entities", 300, "number of replicated entities the server keeps alive")
	fs.IntVar(&o.Ticks, "ticks", 600, "server ticks to simulate (60 per second)")
	fs.DurationVar(&o.Latency, "latency", 30*time.Millisecond, "one-way latency of every client's link")
	fs.DurationVar(&o.Jitter, "jitter", 0, "latency jitter: each datagram gets ± up to this much")
	fs.Float64Var(&o.Loss, "loss", 0, "probability that a datagram is lost (0..1)")
	fs.Float64Var(&o.Dup, "dup", 0, "probability that a datagram is duplicated (0..1)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the simulation and the link conditions")
	fs.Float64Var(&o.Priority, "priority", 0.25, "replication priority of every entity: 1 sends its changes every tick, 0.25 every 4th tick (0..1]")
	fs.IntVar(&o.PingEvery, "ping-every", 30, "ticks between two ping messages of each client (0: none)")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object on stdout")
	fs.DurationVar(&o.Drain, "drain", time.Second, "how long the server keeps ticking without changes before comparing")
	fs.DurationVar(&o.MaxDrain, "max-drain", 6*time.Second, "how long it waits at most for the clients to converge")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", 20*time.Second, "how long the clients may take to connect")
	fs.DurationVar(&o.StatsEvery, "stats", time.Second, "live statistics period, on stderr (0: off)")
	fs.DurationVar(&o.Disrupt, "disrupt", 0, "cut client 0 off for this long, a third into the run (0: never)")
	fs.DurationVar(&o.ResyncAfter, "resync-after", time.Second, "a client that received nothing for this long asks for a resync (0: never)")
	dashboardFlag(fs, &o.Dashboard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind demo server [flags]

Runs a replication server and --clients clients in this process, over QUIC
on loopback, each client's link through its own link-conditioning proxy.
The server simulates --entities moving entities (spawned, hit, shielded,
destroyed and replaced as it runs) for --ticks ticks and replicates them;
clients ping the server, which echoes every ping to every client. The
world's random generator and every entity's random stream draw every tick
and replicate too. With --disrupt, client 0's proxy drops everything for
that long, a third into the run; the client, silent for --resync-after,
asks for a resync when traffic resumes. Then the server stops changing
anything and keeps ticking until the clients hold exactly its replicated
state, random state included. Live statistics go to stderr. Exits with
status 1 when a client did not converge or a message went missing.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

func (o *serverOptions) check() error {
	switch {
	case o.Clients < 1 || o.Clients > maxServerClients:
		return usageError("--clients %d: want 1..%d", o.Clients, maxServerClients)
	case o.Entities < 1 || o.Entities > demo.MaxArenaEntities:
		return usageError("--entities %d: want 1..%d", o.Entities, demo.MaxArenaEntities)
	case o.Ticks < 1:
		return usageError("--ticks %d: want at least 1", o.Ticks)
	case o.Latency < 0 || o.Jitter < 0:
		return usageError("--latency and --jitter must not be negative")
	case !(o.Loss >= 0 && o.Loss < 1) || !(o.Dup >= 0 && o.Dup <= 1):
		return usageError("--loss wants 0..1 (1 excluded), --dup 0..1")
	case !(o.Priority > 0 && o.Priority <= 1):
		return usageError("--priority %v: want more than 0, at most 1", o.Priority)
	case o.PingEvery < 0:
		return usageError("--ping-every %d: want 0 or more", o.PingEvery)
	case o.Drain < 0 || o.MaxDrain < 0 || o.ConnectTimeout <= 0 || o.StatsEvery < 0:
		return usageError("--drain, --max-drain and --stats must not be negative, --connect-timeout must be positive")
	case o.Disrupt < 0 || o.ResyncAfter < 0:
		return usageError("--disrupt and --resync-after must not be negative")
	case o.Disrupt > 0 && o.Ticks < int(o.Disrupt.Seconds()*serverTickRate)+2*serverTickRate:
		return usageError("--disrupt %v needs --ticks of at least %d (the disruption and 2 s more)", o.Disrupt, int(o.Disrupt.Seconds()*serverTickRate)+2*serverTickRate)
	}
	return nil
}

// serverCommand runs "rewind demo server".
func serverCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := serverFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if err := o.check(); err != nil {
		return err
	}
	sum, err := runServerDemo(ctx, *o, stderr)
	if err != nil {
		return err
	}
	return report(stdout, o.JSON, sum)
}

// demoClient is one client of the server demo: its proxy, QUIC conn,
// world and replication client, and the messages it exchanged.
type demoClient struct {
	rigLink
	world *ecs.World
	proto *demo.ArenaProtocol
	id    replicate.ClientID

	pingsSent []time.Time // send time of each Ping, by sequence number
	echoes    []demo.Echo // every Echo received, in order
	echoRTT   time.Duration
	echoN     int
	events    []string
}

// serverDemo is a running server demo: the arena, the replication server,
// its QUIC listener and the clients.
type serverDemo struct {
	quicRig
	drawing []ecs.Entity // drawRandom's entities of the tick (reused)
	o       serverOptions
	arena   *demo.Arena
	proto   *demo.ArenaProtocol
	clients []*demoClient

	runStart  time.Time                       // when every client was connected
	ticks     int                             // server ticks run (Send calls)
	since     int                             // ticks since the simulation started
	cut       bool                            // client 0 is cut off (--disrupt)
	echoes    []demo.Echo                     // broadcast by the server, in order
	pingsSeen map[replicate.ClientID][]uint32 // received by the server, per client
	events    []string
	resyncs   []string        // the reasons of the resyncs sent, in order
	clock     loopClock       // the clients' clock
	mx        *metrics.Server // the --dashboard's recorder (nil: none)
	live      io.Writer       // where the dashboard's address is printed
}

// loopClock is the clients' clock (ClientConfig.Now): wall time, except
// that it advances by at most maxLoopStep from one server tick to the
// next. The server and every client run in one loop, so when the loop
// stalls (a loaded machine, a long GC) the server sends nothing and no
// client listens: a client must not take that for a network interruption
// (ResyncAfterSilence) and ask for a resync. A real one, such as
// --disrupt's cut, happens while the loop runs and is measured in full.
type loopClock struct {
	last, at time.Time
}

// maxLoopStep is the most loopClock advances per tick: far above a tick
// (17 ms), far below any ResyncAfterSilence worth setting.
const maxLoopStep = 100 * time.Millisecond

// advance moves the clock to now, by at most maxLoopStep.
func (c *loopClock) advance() {
	real := time.Now()
	if c.last.IsZero() {
		c.at = real
	} else {
		c.at = c.at.Add(min(real.Sub(c.last), maxLoopStep))
	}
	c.last = real
}

// now is the clock's time.
func (c *loopClock) now() time.Time {
	if c.at.IsZero() {
		c.advance()
	}
	return c.at
}

// runServerDemo runs a server demo as configured and returns its summary.
// Live statistics and notable events go to live.
func runServerDemo(ctx context.Context, o serverOptions, live io.Writer) (*serverSummary, error) {
	d := &serverDemo{o: o, pingsSeen: map[replicate.ClientID][]uint32{}, live: live}
	sum := &serverSummary{
		Mode: "server", Ticks: o.Ticks, Priority: o.Priority, Clients: o.Clients, TargetEntities: o.Entities,
		Link: linkSummary{LatencyMS: ms(o.Latency), JitterMS: ms(o.Jitter), Loss: o.Loss, Dup: o.Dup},
	}
	return runRig(ctx, d, sum, live)
}

// start opens the QUIC listener, the server and its accept loop, then one
// proxy and one client per client, and dials every client through its
// proxy. Everything closes with ctx or close.
func (d *serverDemo) start(ctx context.Context) error {
	o := d.o
	var err error
	d.arena, err = demo.NewArena(demo.ArenaConfig{Entities: o.Entities, Seed: o.Seed})
	if err != nil {
		return err
	}
	if d.proto, err = newDemoProtocol(); err != nil {
		return err
	}
	d.seedRandom()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: d.arena.World(), Protocol: d.proto.Protocol, TickRate: serverTickRate})
	if err != nil {
		return err
	}
	d.srv = srv
	d.prioritize()
	if err := d.listen(ctx, srv); err != nil {
		return err
	}
	if o.Dashboard != "" {
		d.mx = metrics.NewServer(srv, metrics.ServerConfig{})
		if err := serveDashboard(ctx, o.Dashboard, dashboard.Config{Title: "rewind demo server", Server: d.mx}, d.live); err != nil {
			return err
		}
	}
	proxies, err := d.proxies(ctx, o.Clients, d.link(), o.Seed)
	if err != nil {
		return err
	}
	for i, p := range proxies {
		d.clients = append(d.clients, &demoClient{rigLink: rigLink{idx: i, proxy: p}, world: ecs.New()})
	}
	for _, dc := range d.clients {
		if dc.proto, err = newDemoProtocol(); err != nil {
			return err
		}
		ccfg := replicate.ClientConfig{World: dc.world, Protocol: dc.proto.Protocol, ResyncAfterSilence: o.ResyncAfter,
			Now: d.clock.now}
		if dc.rc, err = replicate.NewClient(ccfg); err != nil {
			return err
		}
	}
	return d.connect(ctx, d.links())
}

// links returns the clients' parts of the rig.
func (d *serverDemo) links() []*rigLink {
	ls := make([]*rigLink, len(d.clients))
	for i, dc := range d.clients {
		ls[i] = &dc.rigLink
	}
	return ls
}

// prioritize gives the entities the arena just spawned their replication
// priority.
func (d *serverDemo) prioritize() {
	for _, e := range d.arena.Spawned() {
		d.srv.SetPriority(e, float32(d.o.Priority))
	}
}

// close shuts everything down (quicRig.close). It is safe on a partly
// started demo.
func (d *serverDemo) close() error { return d.quicRig.close(d.links()) }

// phase names the stages of a run in the live statistics.
type phase string

const (
	phaseConnect phase = "connecting"
	phaseRun     phase = "running"
	phaseDrain   phase = "draining"
)

// play runs the server and every client from this goroutine at 60 ticks
// per second of wall-clock time: until every client is connected, then
// o.Ticks ticks of simulation, then ticks without changes until the
// clients converged (or MaxDrain). It stops early when ctx is done.
func (d *serverDemo) play(ctx context.Context, sum *serverSummary, live io.Writer, start time.Time) error {
	o := d.o
	wait := newPacer(ctx, o.StatsEvery, func(ph phase) { d.liveStats(live, time.Since(start), ph) }).wait

	// Connect.
	deadline := time.Now().Add(o.ConnectTimeout)
	for !d.allConnected() {
		if time.Now().After(deadline) {
			return fmt.Errorf("clients not connected after %v: %s", o.ConnectTimeout, d.connectState())
		}
		_ = d.tick(live, false, 0)
		if !wait(phaseConnect) {
			sum.Interrupted = true
			return nil
		}
	}
	for _, dc := range d.clients {
		dc.id = dc.rc.ID()
	}
	sum.ConnectSec = round3(time.Since(start).Seconds())
	if o.StatsEvery > 0 {
		fmt.Fprintf(live, "%d clients connected in %.2fs\n", len(d.clients), sum.ConnectSec)
	}
	d.runStart = time.Now()
	for _, dc := range d.clients {
		dc.markStart(d.srv)
	}

	// Simulate.
	for k := range o.Ticks {
		if o.stall > 0 && k == o.stallAt {
			time.Sleep(o.stall) // the scenario of a test: not synchronisation
		}
		if err := d.tick(live, true, k); err != nil {
			return err
		}
		if !wait(phaseRun) {
			sum.Interrupted = true
			return nil
		}
	}

	// Drain: no more changes; compare once the traffic had time to settle.
	drainStart := time.Now()
	for k := 1; ; k++ {
		_ = d.tick(live, false, 0)
		waited := time.Since(drainStart)
		if d.cut {
			drainStart = time.Now() // the drain starts once the link is back
		}
		if (waited >= o.Drain && k%convergeCheckEvery == 0 && !d.cut && d.diff() == "") || waited >= o.MaxDrain {
			break
		}
		if !wait(phaseDrain) {
			sum.Interrupted = true
			return nil
		}
	}
	sum.DrainSec = round3(time.Since(drainStart).Seconds())
	return nil
}

// tick runs one server frame and one update of every client. In the
// simulation phase (sim), clients send their pings, and the server frame
// is the one of replicate's doc: its receive phase reads the pings, which
// are echoed in this frame; the arena steps (simulation tick k); its send
// phase replicates the values after the step with the echoes.
func (d *serverDemo) tick(live io.Writer, sim bool, k int) error {
	d.clock.advance()
	t0 := time.Now()
	if sim && d.o.PingEvery > 0 {
		for _, dc := range d.clients {
			if (k+dc.idx*7)%d.o.PingEvery != 0 || dc.rc.State() != replicate.Connected {
				continue
			}
			seq := uint32(len(dc.pingsSent))
			if err := dc.proto.Ping.SendToServer(dc.rc, demo.Ping{Seq: seq}); err != nil {
				d.note(live, &dc.events, fmt.Sprintf("client %d: ping %d: %v", dc.idx, seq, err))
				continue
			}
			dc.pingsSent = append(dc.pingsSent, time.Now())
		}
	}
	d.srv.Receive()
	for _, m := range d.proto.Ping.ReceiveFromClients(d.srv) {
		d.pingsSeen[m.Client] = append(d.pingsSeen[m.Client], m.Message.Seq)
		e := demo.Echo{Client: uint64(m.Client), Seq: m.Message.Seq}
		if err := d.proto.Echo.SendToClients(d.srv, replicate.All(), e); err != nil {
			d.note(live, &d.events, fmt.Sprintf("server: echo: %v", err))
			continue
		}
		d.echoes = append(d.echoes, e)
	}
	if sim {
		if err := d.arena.Step(); err != nil {
			return err
		}
		d.prioritize()
		d.seedRandom()
		d.drawRandom(k)
	}
	if !d.runStart.IsZero() {
		d.disrupt(d.since)
		d.since++
	}
	d.srv.Send() // the send phase, with the tick after the last
	d.ticks++
	evs := d.srv.Events()
	if d.mx != nil {
		d.mx.Sample(sinceTick(t0))
		d.mx.Events(evs)
	}
	for _, ev := range evs {
		if ev.Kind == replicate.ClientResync {
			d.resyncs = append(d.resyncs, fmt.Sprintf("%s (%v): %s", d.label(ev.Client), ev.Resync, ev.Reason))
		}
		if ev.Kind != replicate.ClientConnected {
			d.note(live, &d.events, fmt.Sprintf("server: %s %v: %s", d.label(ev.Client), ev.Kind, ev.Reason))
		}
	}
	for _, dc := range d.clients {
		dc.rc.Update()
		for _, ev := range dc.rc.Events() {
			to := &dc.events // disconnections and rejections
			if ev.Kind == replicate.EventResync || ev.Kind == replicate.EventDesync {
				to = &d.events
			}
			if ev.Kind != replicate.EventConnected {
				d.note(live, to, fmt.Sprintf("client %d: %s %s", dc.idx, clientEventName(ev.Kind), ev.Reason))
			}
		}
		for _, e := range dc.proto.Echo.ReceiveFromServer(dc.rc) {
			dc.echoes = append(dc.echoes, e)
			if replicate.ClientID(e.Client) == dc.id && int(e.Seq) < len(dc.pingsSent) {
				dc.echoRTT += time.Since(dc.pingsSent[e.Seq])
				dc.echoN++
			}
		}
	}
	return nil
}

// label names client id as the rest of the demo's output does: by the
// demo's index ("client 2"), or by the server's id while it is not known
// yet ("client id 7").
func (d *serverDemo) label(id replicate.ClientID) string {
	for _, dc := range d.clients {
		if id != 0 && (dc.id == id || dc.rc.ID() == id) {
			return fmt.Sprintf("client %d", dc.idx)
		}
	}
	return fmt.Sprintf("client id %d", id)
}

// note records a notable event and prints it.
func (d *serverDemo) note(live io.Writer, to *[]string, s string) {
	*to = append(*to, s)
	fmt.Fprintln(live, s)
}

func clientEventName(k replicate.ClientEventKind) string { return k.String() }

func (d *serverDemo) allConnected() bool {
	for _, dc := range d.clients {
		if dc.rc.State() != replicate.Connected {
			return false
		}
	}
	return true
}

func (d *serverDemo) connectState() string {
	s := ""
	for _, dc := range d.clients {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("client %d %v", dc.idx, dc.rc.State())
		if err := dc.rc.Err(); err != nil {
			s += fmt.Sprintf(" (%v)", err)
		}
	}
	return s
}

// diff compares every client's replicated state, random state included,
// with the server's. It returns "" when all are equal, else the first
// difference found.
func (d *serverDemo) diff() string {
	want := demo.ArenaView(d.arena.World(), nil)
	for _, dc := range d.clients {
		if s := demo.DiffArenaViews(want, demo.ArenaView(dc.world, dc.rc.ServerEntity)); s != "" {
			return fmt.Sprintf("client %d: %s", dc.idx, s)
		}
		if s := d.rngDiff(dc); s != "" {
			return fmt.Sprintf("client %d: %s", dc.idx, s)
		}
	}
	return ""
}

// liveStats prints a line for the server and one per client.
func (d *serverDemo) liveStats(w io.Writer, at time.Duration, ph phase) {
	st := d.arena.Stats()
	fmt.Fprintf(w, "[%5.1fs] %-10s server tick %5d | %4d entities (%d spawned, %d destroyed) | %d echoes\n",
		at.Seconds(), ph, d.srv.Tick(), d.arena.Entities(), st.Spawned, st.Despawned, len(d.echoes))
	for _, dc := range d.clients {
		cs, err := d.srv.Stats(dc.rc.ID())
		if err != nil {
			fmt.Fprintf(w, "[%5.1fs]   client %d: %v\n", at.Seconds(), dc.idx, dc.rc.State())
			continue
		}
		fmt.Fprintf(w, "[%5.1fs]   client %d: rtt %4.0fms | %8.0f B/s out | %4d entities | %5d mutation msgs | resent %5d | acked tick %5d\n",
			at.Seconds(), dc.idx, ms(cs.RTT), cs.OutPerSec, dc.rc.Entities(), cs.MutationMessages, cs.Resent, cs.AckedTick)
	}
}
