package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/ops/dashboard"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/predict/ticksync"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// predictOptions are the settings of a prediction demo run.
type predictOptions struct {
	Clients, Ticks  int
	Latency, Jitter time.Duration
	Loss            float64
	// Internet is the "internet" preset: an ordinary path of 150 ms
	// RTT (Latency 75 ms, Jitter 20 ms, Loss 10%), for the flags of
	// those not given.
	Internet bool
	Seed     uint64
	// Others is how a client shows the other players' ships: "predict"
	// (simulated with their forwarded inputs) or "interpolate".
	Others     string
	InputDelay int
	JSON       bool
	// MaxDrain is how long the server keeps ticking at most after Ticks,
	// until every client has checked a complete tick at or after Ticks.
	MaxDrain       time.Duration
	ConnectTimeout time.Duration
	StatsEvery     time.Duration
	// Dashboard is the address of the live dashboard ("": none).
	Dashboard string
}

// Settings of the prediction demo.
const (
	maxPredictClients = 16
	// predictWindow is the clients' rollback window: 2 s, so that an
	// update delayed by a few retransmissions on a lossy link still lands
	// inside it.
	predictWindow = 120
	// predictStates is how many ticks of server state are kept for the
	// comparisons.
	predictStates = 256
	// predictChecksumInterval is the desync detection's report interval
	// (replicate's ChecksumInterval): half a second. With --others
	// interpolate, a client's report counts the other ships' bodies from
	// its interp.Buffer (predict.AttachSplit).
	predictChecksumInterval = 30
)

// checksumInterval is the run's ChecksumInterval, with either --others.
func (o *predictOptions) checksumInterval() int {
	return predictChecksumInterval
}

func predictFlags() (*flag.FlagSet, *predictOptions) {
	o := &predictOptions{}
	fs := flag.NewFlagSet("rewind demo predict", flag.ContinueOnError)
	fs.IntVar(&o.Clients, "clients", 3, fmt.Sprintf("number of clients, one ship each (1..%d)", maxPredictClients))
	fs.IntVar(&o.Ticks, "ticks", 240, "server ticks to simulate (60 per second)")
	fs.DurationVar(&o.Latency, "latency", 30*time.Millisecond, "one-way latency of every client's link")
	fs.DurationVar(&o.Jitter, "jitter", 5*time.Millisecond, "latency jitter: each datagram gets ± up to this much")
	fs.Float64Var(&o.Loss, "loss", 0, "probability that a datagram is lost (0..1)")
	fs.BoolVar(&o.Internet, "internet", false, "an ordinary internet path: --latency 75ms --jitter 20ms --loss 0.1 (150 ms RTT), for those of the three not given")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the bots and the link conditions")
	fs.StringVar(&o.Others, "others", "predict", "how clients show the other ships: predict (with their forwarded inputs, their bullets fired at once too) or interpolate (their bullets arrive from the server)")
	fs.IntVar(&o.InputDelay, "input-delay", 0, "ticks by which clients apply their own input late")
	fs.BoolVar(&o.JSON, "json", false, "print the summary as one JSON object on stdout (live stats go to stderr)")
	fs.DurationVar(&o.MaxDrain, "max-drain", 5*time.Second, "how long the server keeps ticking at most for the clients to confirm the last tick")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", 20*time.Second, "how long the clients may take to connect")
	fs.DurationVar(&o.StatsEvery, "stats", time.Second, "live statistics period (0: off)")
	dashboardFlag(fs, &o.Dashboard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind demo predict [flags]

Runs an authoritative server and --clients predicting clients in this
process, over QUIC on loopback, each client's link through its own
link-conditioning proxy. Bots steer the ships and fire; the server
simulates with the inputs it received, each client runs ahead of it (tick
sync), sends its inputs with redundancy, predicts its own ship and fires
its bullets at once (predicted spawns, adopted by the server's), predicts
or interpolates the others (--others) and rolls back when the server
disagrees. After every step, each client's confirmed
state at every complete server tick is compared with the server's state at
that tick (after a range fault, the ticks before the resync it asks for are
not confirmed: counted as unchecked). Exits with status 1 when one differed.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

// Internet preset: a path of 150 ms RTT, 20 ms of jitter and 10% loss
// each way, what a player on an ordinary connection far from the server
// has (issue 20's test path).
const (
	internetLatency = 75 * time.Millisecond
	internetJitter  = 20 * time.Millisecond
	internetLoss    = 0.1
)

// preset applies --internet to the link flags not given.
func (o *predictOptions) preset(fs *flag.FlagSet) {
	if !o.Internet {
		return
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["latency"] {
		o.Latency = internetLatency
	}
	if !set["jitter"] {
		o.Jitter = internetJitter
	}
	if !set["loss"] {
		o.Loss = internetLoss
	}
}

func (o *predictOptions) check() error {
	switch {
	case o.Clients < 1 || o.Clients > maxPredictClients:
		return usageError("--clients %d: want 1..%d", o.Clients, maxPredictClients)
	case o.Ticks < 1:
		return usageError("--ticks %d: want at least 1", o.Ticks)
	case o.Latency < 0 || o.Jitter < 0:
		return usageError("--latency and --jitter must not be negative")
	case !(o.Loss >= 0 && o.Loss < 1):
		return usageError("--loss wants 0..1 (1 excluded)")
	case o.Others != "predict" && o.Others != "interpolate":
		return usageError("--others %q: want predict or interpolate", o.Others)
	case o.InputDelay < 0 || o.InputDelay > 10:
		return usageError("--input-delay %d: want 0..10", o.InputDelay)
	case o.MaxDrain < 0 || o.ConnectTimeout <= 0 || o.StatsEvery < 0:
		return usageError("--max-drain and --stats must not be negative, --connect-timeout must be positive")
	}
	return nil
}

// predictCommand runs "rewind demo predict".
func predictCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := predictFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	o.preset(fs)
	if err := o.check(); err != nil {
		return err
	}
	live := stdout
	if o.JSON {
		live = stderr
	}
	sum, err := runPredictDemo(ctx, *o, live)
	if err != nil {
		return err
	}
	return report(stdout, o.JSON, sum)
}

// predictClient is one predicting client: its proxy and connection, its
// World, Timeline and frame, and what its checks found.
type predictClient struct {
	rigLink
	world  *ecs.World
	tl     *predict.Timeline
	game   *shooter.Client
	body   *predict.Component[shooter.Body]
	bullet *predict.Component[shooter.Bullet]
	interp *interp.Buffer[shooter.Body]
	frame  *predict.ClientFrame[shooter.Stick]
	ships  *ecs.Store[shooter.Ship]
	sim    func(tick.Tick)
	input  func(tick.Tick) shooter.Stick
	last   time.Time // the previous frame

	cliEnt           map[ecs.Entity]ecs.Entity // every server entity replicated, even despawned since
	repl             map[ecs.Entity]bool       // the client entities in cliEnt
	keys             *ecs.Store[predict.SpawnKey]
	ghosts           int         // unconfirmed predicted bullets seen at complete ticks
	pending          []tick.Tick // complete ticks not checked yet
	checked          []tick.Tick // ticks checked, the newest predictStates
	nChecks          int
	lastChk          tick.Tick
	stale            int    // complete ticks not checked: left the window first, or not Confirmed after a range fault
	diff             string // the first difference found
	maxCorr          int32
	aheadSum, aheadN int64 // Ahead after each frame that stepped

	// After the first second of the run (settled): the client's true
	// lead over the server's present after each of its frames, and the
	// counters as they were when it began.
	leads   []int32
	leadEst []time.Duration // the client's estimate (PresentLead) minus the true lead
	at1s    settledBase
}

// settledBase holds a client's counters at the end of the run's first
// second, so that the summary can report what happened once settled.
type settledBase struct {
	set                bool
	snaps              uint64
	inputs, late, miss uint64
	spawns, refused    uint64
	ownShots, ownRef   uint64
	serverTick         tick.Tick
}

// predictDemo is a running prediction demo.
type predictDemo struct {
	quicRig
	o       predictOptions
	proto   *shooter.Protocol
	game    *shooter.Server
	frame   *predict.ServerFrame[shooter.Stick]
	clients []*predictClient

	tick     tick.Tick
	states   map[tick.Tick]map[ecs.Entity]shooter.Entity // the server's entities at the end of each tick
	runStart time.Time
	events   []string
	prev     []predictRates     // the counters at the previous live statistics
	mx       *metrics.Server    // the --dashboard's recorders (nil: none)
	mxPred   []*metrics.Predict // one per client
	live     io.Writer          // where the dashboard's address is printed
}

// predictRates are the counters the live statistics turn into rates.
type predictRates struct{ down, input uint64 }

// runPredictDemo runs a prediction demo as configured and returns its
// summary. Live statistics go to live.
func runPredictDemo(ctx context.Context, o predictOptions, live io.Writer) (*predictSummary, error) {
	d := &predictDemo{o: o, states: map[tick.Tick]map[ecs.Entity]shooter.Entity{}, live: live}
	sum := &predictSummary{Mode: "predict", Clients: o.Clients, Ticks: o.Ticks, Others: o.Others, InputDelay: o.InputDelay,
		Link: linkSummary{LatencyMS: ms(o.Latency), JitterMS: ms(o.Jitter), Loss: o.Loss}}
	return runRig(ctx, d, sum, live)
}

// start opens the listener, the server and its accept loop, one proxy and
// one client per client, and dials them all through their proxies.
func (d *predictDemo) start(ctx context.Context) error {
	o := d.o
	var err error
	if d.proto, err = shooter.NewProtocol(input.Config{}); err != nil {
		return err
	}
	d.game = shooter.NewServer()
	d.game.ShowOthersInterpolated(o.Others == "interpolate")
	srv, err := replicate.NewServer(replicate.ServerConfig{World: d.game.World(), Protocol: d.proto.Protocol, TickRate: serverTickRate,
		ChecksumInterval: o.checksumInterval()})
	if err != nil {
		return err
	}
	d.frame = predict.NewServerFrame(srv, d.proto.Inputs)
	if err := d.listen(ctx, srv); err != nil {
		return err
	}
	proxies, err := d.proxies(ctx, o.Clients, transport.LinkConfig{Latency: o.Latency, Jitter: o.Jitter, Loss: o.Loss}, o.Seed)
	if err != nil {
		return err
	}
	for i, p := range proxies {
		d.clients = append(d.clients, &predictClient{rigLink: rigLink{idx: i, proxy: p}})
	}
	for _, pc := range d.clients {
		if err := d.newClient(pc); err != nil {
			return err
		}
	}
	if o.Dashboard != "" {
		d.mx = metrics.NewServer(srv, metrics.ServerConfig{})
		for _, pc := range d.clients {
			d.mxPred = append(d.mxPred, metrics.NewPredict(metrics.PredictConfig{Name: fmt.Sprintf("predicting client %d", pc.idx)}))
		}
		if err := serveDashboard(ctx, o.Dashboard, dashboard.Config{Title: "rewind demo predict", Server: d.mx, Predicts: d.mxPred}, d.live); err != nil {
			return err
		}
	}
	return d.connect(ctx, d.links())
}

// links returns the clients' parts of the rig.
func (d *predictDemo) links() []*rigLink {
	ls := make([]*rigLink, len(d.clients))
	for i, pc := range d.clients {
		ls[i] = &pc.rigLink
	}
	return ls
}

// newClient builds a client's World, replication client, Timeline and
// frame: Body is predicted (for the other ships too with --others
// predict, else interpolated), and so is Bullet: the client's simulation
// (shooter.Client) fires the bullets of the ships it predicts as predicted
// spawns, adopted by the server's. Inputs come from the bot.
func (d *predictDemo) newClient(pc *predictClient) error {
	proto, err := shooter.NewProtocol(input.Config{})
	if err != nil {
		return err
	}
	pc.world = ecs.New()
	pc.cliEnt = map[ecs.Entity]ecs.Entity{}
	pc.repl = map[ecs.Entity]bool{}
	pc.keys = ecs.Register[predict.SpawnKey](pc.world)
	if pc.rc, err = replicate.NewClient(replicate.ClientConfig{World: pc.world, Protocol: proto.Protocol,
		ChecksumInterval: d.o.checksumInterval()}); err != nil {
		return err
	}
	pc.tl = predict.New(pc.world, 0, predict.Config{Window: predictWindow})
	if pc.game, err = shooter.NewClient(pc.tl, predict.LogCorrections()); err != nil {
		return err
	}
	pc.body, pc.bullet = pc.game.Body(), pc.game.Bullet()
	pc.ships = ecs.Register[shooter.Ship](pc.world)
	pc.interp = interp.NewBuffer[shooter.Body](interp.Config{Capacity: predictWindow}, shooter.LerpBody)
	if d.o.Others == "interpolate" {
		err = predict.AttachSplit(pc.rc, pc.body, pc.interp, pc.remoteShip)
	} else {
		err = predict.AttachComponent(pc.rc, pc.body)
	}
	if err != nil {
		return err
	}
	if err = predict.AttachComponent(pc.rc, pc.bullet); err != nil {
		return err
	}
	// The frame installs the Timeline's hooks and, SpawnKey being in the
	// protocol, the adoption of predicted bullets.
	pc.frame, err = predict.NewClientFrame(pc.rc, pc.tl, proto.Inputs, predict.ClientFrameConfig{
		Sync: ticksync.Config{TickRate: serverTickRate, InputDelay: d.o.InputDelay},
		RTT: func() time.Duration {
			if pc.conn == nil {
				return 0
			}
			return pc.conn.Stats().RTT
		},
		Hooks: replicate.ClientHooks{
			Spawn: func(ce ecs.Entity, _ tick.Tick) {
				se, _ := pc.rc.ServerEntity(ce)
				pc.cliEnt[se] = ce
				pc.repl[ce] = true
			},
			TickComplete: func(t tick.Tick) {
				pc.interp.Complete(t)
				pc.pending = append(pc.pending, t)
			},
		},
		AfterStep: func(tick.Tick) {
			for _, c := range pc.body.Corrections() {
				pc.maxCorr = max(pc.maxCorr, shooter.Distance(c.Before, c.After))
			}
		},
	})
	if err != nil {
		return err
	}
	steer := func(player uint64) shooter.Stick {
		if id := replicate.ClientID(player); id != pc.rc.ID() {
			v, _ := pc.frame.Remote().Input(id, pc.tl.Tick())
			return v
		}
		v, _ := pc.frame.Sender().Input(pc.tl.Tick())
		return v
	}
	pc.sim = func(t tick.Tick) { pc.game.Step(t, steer) }
	seed := d.o.Seed
	pc.input = func(t tick.Tick) shooter.Stick {
		in := shooter.Bot(seed, uint64(pc.rc.ID()), t)
		if shooter.Scans(in, t) {
			// The claim of lag compensation: the moment the screen shows
			// the interpolated ships at as this input is made.
			rt, rf := pc.frame.Sync().Received(t, 0)
			st, sf := pc.interp.ShowAt(rt, rf, pc.interp.Config().Delay(pc.frame.Jitter()))
			in.Seen, _ = lagcomp.NewRecent(t, st, sf)
		}
		return in
	}
	return nil
}

// shown appends to dst the other ships as the client's screen showed
// them for a scan of tick t with claim c: the ships it predicts at the
// present (their Body at the end of t), those it interpolates at the
// claim.
func (pc *predictClient) shown(c lagcomp.Claim, _ tick.Tick, dst []shooter.Target) []shooter.Target {
	for e, sh := range pc.ships.Values() {
		if replicate.ClientID(sh.Player) == pc.rc.ID() {
			continue
		}
		b, ok := pc.body.Store().Get(e)
		if !ok {
			b, ok = pc.interp.At(e, c.Tick, c.Fraction())
		}
		if ok {
			dst = append(dst, shooter.Target{Player: sh.Player, Body: b})
		}
	}
	return dst
}

// remoteShip reports whether e is another player's ship (shown
// interpolated with --others interpolate).
func (pc *predictClient) remoteShip(e ecs.Entity) bool {
	s, ok := pc.ships.Get(e)
	return ok && replicate.ClientID(s.Player) != pc.rc.ID()
}

// close shuts everything down (quicRig.close). It is safe on a partly
// started demo.
func (d *predictDemo) close() error { return d.quicRig.close(d.links()) }
