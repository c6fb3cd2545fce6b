package predict

// ClientFrame: the client's frame of package doc's "The frame", composed
// from the pieces (Timeline, ticksync.Sync, tick.Clock, input.Sender,
// input.Remote), so a game calls one method per rendered frame.

import (
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/predict/ticksync"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// ClientFrameConfig configures a ClientFrame.
type ClientFrameConfig struct {
	// Sync configures the ticksync.Sync (zero: every default). Its TickRate
	// is also the clock's.
	Sync ticksync.Config
	// RTT returns the connection's smoothed round-trip time, for example
	// the transport.MessageConn's Stats().RTT. Required.
	RTT func() time.Duration
	// Hooks are the game's own client hooks, called after the Timeline's
	// (a Despawn is taken when either takes it).
	Hooks replicate.ClientHooks
	// AfterStep, when not nil, is called after each Timeline.Step with
	// the tick simulated: the place to read the Step's corrections
	// (Component.Corrections), which the next Step clears.
	AfterStep func(t tick.Tick)
	// SlowFrame is the frame period (the mean elapsed time given to
	// Frame) beyond which the client counts as overloaded: then a
	// rollback waits (Timeline.HoldRollbacks) until the client has
	// simulated, since the last one, twice as many new ticks as it runs
	// ahead of the newest complete server tick (Ahead; at most a third of
	// the window), so that re-simulation costs about 1.5 times what
	// simulation does rather than every frame's time, and a slow machine
	// does not spiral: longer frames, more steps per frame, deeper
	// rollbacks, longer frames. Corrections then come a few frames later.
	// It ends below 3/4 of SlowFrame. Default 2 ticks (under 30 frames a
	// second at 60 Hz); negative turns it off.
	SlowFrame time.Duration
}

// ClientFrameStats counts what a ClientFrame did.
type ClientFrameStats struct {
	// Frames counts calls of Frame; Steps the ticks simulated (not the
	// re-simulated ones: Timeline.Stats counts those).
	Frames, Steps uint64
	// Samples counts the tick-sync samples taken (one per frame that
	// received a newer complete server tick).
	Samples uint64
	// InputErrors counts inputs that could not be sent (the client not
	// connected yet, or an input too large); each was still kept for
	// re-simulation if it encoded.
	InputErrors uint64
	// Inputs counts the input messages sent and InputBytes their bytes
	// (replication messages, transport framing excluded).
	Inputs, InputBytes uint64
	// SlowFrames counts the frames run overloaded (see
	// ClientFrameConfig.SlowFrame), and HeldFrames the frames whose
	// Steps' rollbacks were held then.
	SlowFrames, HeldFrames uint64
}

// ClientFrame runs a predicting client's frame over a replicate.Client:
// it installs the Timeline's hooks (Hooks) on the client, and each Frame
// receives (replicate.Client.Update and the other players' forwarded
// inputs), feeds the newest complete server tick to a ticksync.Sync, advances
// a tick.Clock at the ticksync.Sync's rate, and for each step due samples the
// game's input for the step's input tick, sends it (input.Sender, with
// redundancy) and runs Timeline.Step. Component types are attached by the
// game (AttachComponent, or its own hooks for entities it interpolates).
//
// Tick sync steers by the server's input reports (see the package
// documentation, "Tick synchronisation"): how early each input message
// arrived and which were lost, so that the inputs arrive in time with
// the margin the measured jitter and loss ask for, and the redundancy
// follows the loss. Until they steer, it steers by the arrival of
// complete server ticks, with the RTT from the connection
// (ClientFrameConfig.RTT) and the jitter measured here (Jitter: the mean
// deviation of each newer complete tick's arrival less its nominal time).
//
// The client steps nothing before the first complete server tick: the
// ticksync.Sync's first sample then snaps, and the client catches up to the
// lead by MaxCatchUp extra steps per frame. The Timeline should therefore
// start near the server's first tick (a game joining a running server
// creates its Timeline at ticksync.Sync.Start's tick of the first server tick
// it receives). A ClientFrame is not safe for concurrent use.
type ClientFrame[T any] struct {
	rc     *replicate.Client
	tl     *Timeline
	sync   *ticksync.Sync
	clock  *tick.Clock
	in     *input.Type[T]
	sender *input.Sender[T]
	remote *input.Remote[T]
	rtt    func() time.Duration
	after  func(t tick.Tick)
	step   time.Duration
	slowAt time.Duration // SlowFrame, 0 when off

	backlog   int           // steps due but not run yet (at most tick.DefaultMaxSteps run a frame)
	period    time.Duration // mean frame period (elapsed), for SlowFrame
	slow      bool
	sinceRB   int    // ticks stepped since the last rollback
	rollbacks uint64 // Timeline rollbacks seen

	now       time.Duration // sum of the elapsed times given to Frame
	held      bool          // the conn holds what is sent (replicate.Client.Hold)
	heldAt    time.Duration // now when the hold began
	newest    tick.Tick     // newest complete server tick
	hasNewest bool
	fresh     bool // newest changed since the last sample
	avg, dev  time.Duration
	stats     ClientFrameStats
}

// NewClientFrame returns the frame of client rc predicting with tl and
// sending inputs of in. As Attach does, it replaces rc's client hooks
// with the Timeline's (Hooks, its Resync hook included) chained with
// cfg.Hooks, makes tl's range faults ask the server for a resync
// (Timeline.OnRangeFault, replicate.Client.RequestResync), makes rc's
// checksum reports describe tl's confirmed state (AttachChecksum) and,
// when the protocol replicates SpawnKey, installs the adoption of
// predicted spawns (AttachSpawns).
func NewClientFrame[T any](rc *replicate.Client, tl *Timeline, in *input.Type[T], cfg ClientFrameConfig) (*ClientFrame[T], error) {
	if cfg.RTT == nil {
		return nil, ErrNoRTT
	}
	sync := ticksync.New(cfg.Sync)
	clock, err := tick.NewClock(sync.Config().TickRate)
	if err != nil {
		return nil, err
	}
	f := &ClientFrame[T]{rc: rc, tl: tl, sync: sync, clock: clock, in: in, sender: in.NewSender(), remote: in.NewRemote(),
		rtt: cfg.RTT, after: cfg.AfterStep, step: time.Second / time.Duration(sync.Config().TickRate)}
	// The clock hands out every step due, up to half the window; Frame
	// runs at most tick.DefaultMaxSteps of them and carries the rest.
	clock.SetMaxSteps(max(tl.Window()/2, tick.DefaultMaxSteps))
	switch {
	case cfg.SlowFrame == 0:
		f.slowAt = 2 * f.step
	case cfg.SlowFrame > 0:
		f.slowAt = cfg.SlowFrame
	}
	Attach(rc, tl) // its client hooks are replaced by the chain below
	own, game := Hooks(tl), cfg.Hooks
	rc.SetClientHooks(replicate.ClientHooks{
		Spawn: game.Spawn,
		Despawn: func(e ecs.Entity, t tick.Tick) bool {
			took := own.Despawn(e, t)
			if game.Despawn != nil && game.Despawn(e, t) {
				took = true
			}
			return took
		},
		TickComplete: func(t tick.Tick) {
			own.TickComplete(t)
			f.complete(t)
			if game.TickComplete != nil {
				game.TickComplete(t)
			}
		},
		Resync: func(t tick.Tick, kind replicate.ResyncKind, reason string) {
			own.Resync(t, kind, reason)
			if game.Resync != nil {
				game.Resync(t, kind, reason)
			}
		},
	})
	return f, nil
}

// complete notes a complete server tick and, when it is the newest, its
// arrival time for the jitter.
func (f *ClientFrame[T]) complete(t tick.Tick) {
	if f.hasNewest && !t.After(f.newest) {
		return
	}
	off := f.now - time.Duration(uint32(t))*f.step
	if !f.hasNewest {
		f.avg = off
	} else {
		d := off - f.avg
		f.avg += d / 8
		f.dev += (max(d, -d) - f.dev) / 4
	}
	f.newest, f.hasNewest, f.fresh = t, true, true
}

// Frame runs one client frame, elapsed being the wall time since the
// previous one: the receive phase, a tick-sync sample when a newer
// server tick is complete, then the steps due. For each step, with F the
// tick it simulates, it calls input(InputTick(F)) once (the game's input
// for that tick, sent at once) and Timeline.Step(sim); sim reads the
// client's own input with Sender().Input and the other players' with
// Remote().Input. It returns the number of ticks simulated.
func (f *ClientFrame[T]) Frame(elapsed time.Duration, input func(t tick.Tick) T, sim func(t tick.Tick)) int {
	f.stats.Frames++
	f.now += max(elapsed, 0)
	// What the client sends (Update's acknowledgements) waits for its next
	// input, to share its packet (replicate.Client.Hold), at most a tick:
	// a frame rate above the tick rate would otherwise send the
	// acknowledgements and the input in packets of their own, and the
	// server acknowledges every second packet with a packet of its own.
	if !f.held {
		f.rc.Hold()
		f.held, f.heldAt = true, f.now
	}
	defer func() {
		if f.held && f.now-f.heldAt >= f.step {
			f.rc.Flush()
			f.held = false
		}
	}()
	f.rc.Update()
	f.remote.Receive(f.rc)
	reps := f.in.Reports(f.rc)
	for i := range reps {
		f.sync.Report(&reps[i])
	}
	if f.fresh {
		f.fresh = false
		f.stats.Samples++
		f.sync.Observe(ticksync.Sample{Server: f.newest, Client: f.tl.Now(),
			Since: time.Duration(f.clock.Alpha() * float64(f.step)), RTT: f.rtt(), Jitter: f.dev})
	}
	if !f.sync.Synced() {
		return 0
	}
	f.clock.SetRate(f.sync.Rate())
	// Steps due beyond tick.DefaultMaxSteps wait for the next frames
	// (a slow frame is caught up over several, the client's tick does not
	// fall behind the server's for good); the clock drops what is due
	// beyond half the window (a stall: tick sync then snaps).
	f.backlog += f.clock.Advance(elapsed)
	due := min(f.backlog, tick.DefaultMaxSteps)
	f.backlog -= due
	n := f.sync.Steps(due)
	since := time.Duration(f.clock.Alpha() * float64(f.step))
	f.overload(elapsed)
	for range n {
		it := f.sync.InputTick(f.tl.Now() + 1)
		if last, ok := f.sender.Last(); !ok || it.After(last) {
			v := input(it)
			before := f.rc.Stats().BytesOut
			f.sender.SetRedundancy(f.sync.Redundancy(f.in.Config().Redundancy))
			if err := f.sender.Add(f.rc, it, v); err != nil {
				f.stats.InputErrors++
			} else {
				f.stats.Inputs++
				f.stats.InputBytes += f.rc.Stats().BytesOut - before
				f.sync.Sent(it, since, f.now)
			}
		}
		if f.held {
			f.rc.Flush()
			f.held = false
		}
		f.tl.Step(sim)
		f.sinceRB++
		if rb := f.tl.Stats().Rollbacks; rb != f.rollbacks {
			f.rollbacks, f.sinceRB = rb, 0
		}
		if f.after != nil {
			f.after(f.tl.Now())
		}
	}
	f.tl.HoldRollbacks(false)
	f.stats.Steps += uint64(n)
	// The steps carried count as run: they will be, whatever the sync
	// says, so it must not correct for them.
	f.sync.Position(f.tl.Now().Add(int32(f.backlog)), since, f.now)
	return n
}

// overload notes the frame period and, for an overloaded client, holds
// the Timeline's rollbacks until it has simulated, since the last,
// twice the ticks it runs ahead (see SlowFrame): never longer than a
// third of the window.
func (f *ClientFrame[T]) overload(elapsed time.Duration) {
	if f.slowAt == 0 {
		return
	}
	f.period += (max(elapsed, 0) - f.period) / 8
	switch {
	case !f.slow && f.period > f.slowAt:
		f.slow = true
	case f.slow && f.period < f.slowAt*3/4:
		f.slow = false
	}
	hold := f.slow && f.sinceRB < 2*int(f.Ahead()) && f.sinceRB < f.tl.Window()/3
	if f.slow {
		f.stats.SlowFrames++
	}
	if hold {
		f.stats.HeldFrames++
	}
	f.tl.HoldRollbacks(hold)
}

// Timeline returns the Timeline the frame steps.
func (f *ClientFrame[T]) Timeline() *Timeline { return f.tl }

// Sync returns the frame's ticksync.Sync.
func (f *ClientFrame[T]) Sync() *ticksync.Sync { return f.sync }

// Clock returns the frame's fixed-step clock (its Alpha is how far the
// client is into its next step, for rendering).
func (f *ClientFrame[T]) Clock() *tick.Clock { return f.clock }

// Sender returns the client's own inputs (Input(t) during the simulation).
func (f *ClientFrame[T]) Sender() *input.Sender[T] { return f.sender }

// Remote returns the other players' forwarded inputs (Input(player, t)
// during the simulation).
func (f *ClientFrame[T]) Remote() *input.Remote[T] { return f.remote }

// Newest returns the newest complete server tick received.
func (f *ClientFrame[T]) Newest() (tick.Tick, bool) { return f.newest, f.hasNewest }

// Jitter returns the measured jitter of the server ticks' arrival.
func (f *ClientFrame[T]) Jitter() time.Duration { return f.dev }

// PresentLead returns the estimated lead of the client's newest simulated
// tick over the server's present, the newest tick the server has
// simulated (ticksync.Sync.PresentLead): the measure that says whether the
// client predicts at all (positive) and how far. Ahead, the lead over the
// newest complete tick received, adds the round trip and the wait for
// lost messages to it.
func (f *ClientFrame[T]) PresentLead() time.Duration {
	return f.sync.PresentLead(f.tl.Now(), f.now)
}

// Ahead returns how many ticks the client's newest simulated tick is
// ahead of the newest complete server tick it received.
func (f *ClientFrame[T]) Ahead() int32 {
	if !f.hasNewest {
		return 0
	}
	return f.tl.Now().Sub(f.newest)
}

// Stats returns the counters.
func (f *ClientFrame[T]) Stats() ClientFrameStats { return f.stats }
