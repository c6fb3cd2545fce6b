package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/tick"
)

// Session is what a Runner drives: the rollback.Session contract, which
// *rollback.P2PSession, *rollback.SyncTestSession,
// *rollback.SpectatorSession and *rollback.ReplaySession implement. The
// Runner uses its methods alone, so a wrapper that forwards them all keeps
// the checksums, snapshot depth, time sync, the end of a match and the
// world's checked mode (New turns it on when the session ChecksDeterminism,
// as a SyncTest session and its wrappers do).
type Session = rollback.Session

// Step is the simulation: it advances the world by one frame with the
// players' inputs. It must be deterministic: read only the world, the
// inputs and ctx (never the wall clock, a global random generator, map
// iteration order or goroutines).
type Step func(ctx *Context)

// Context is what a Step sees.
type Context struct {
	World *ecs.World
	// Frame is the frame being simulated.
	Frame rollback.Frame
	// Inputs holds one input per player, in handle order (valid during the step).
	Inputs []rollback.Input
	// Time is the deterministic game time of the frame.
	Time tick.Time
	err  error
}

// Fail reports that the step could not be carried out (an ecs operation
// failed, which means a bug in the game): the Runner stops after the step
// and Handle, RunFrame and Update return err. The first error is kept.
func (c *Context) Fail(err error) {
	if c.err == nil && err != nil {
		c.err = err
	}
}

// Runner connects a rollback session to an ecs.World and a snapshot.Ring the
// way bevy_ggrs connects GGRS to Bevy: a fixed-timestep clock (slower while
// ahead of the peers), local input read once per frame, Save / Load /
// Advance carried out on the world, checksums (with per-type parts) reported
// when the session uses them, and snapshots freed as frames are confirmed.
type Runner struct {
	cfg    Config
	ring   *snapshot.Ring
	clock  *tick.Clock
	ctx    Context
	frames int
	loads  int
	// frame of the world (the frame the next Advance simulates).
	frame rollback.Frame
	// final is the newest frame passed to Confirmed (or skipped as not held).
	final rollback.Frame
	// A load's re-simulation, for Config.Effects: rewinding until the
	// world is back at frame resimTo.
	rewinding bool
	resimTo   rollback.Frame
	// saved is the newest frame saved or loaded since the world's last
	// Load: the newest state the ring holds for the world's history.
	saved rollback.Frame
	// dumps of the checked frames (Config.Dumps), nil when off
	dumps *snapshot.Dumps
	// sumForRejoin: a state was asked for (StateSource) whose frame was
	// saved without a checksum: saves compute one until a state is served.
	sumForRejoin bool
}

// New returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.World == nil || cfg.Registry == nil || cfg.Session == nil || cfg.Step == nil {
		return nil, fmt.Errorf("%w: World, Registry, Session and Step are required", ErrConfig)
	}
	if cfg.Registry.World() != cfg.World {
		return nil, fmt.Errorf("%w: Registry belongs to another World", ErrConfig)
	}
	if len(cfg.Session.LocalHandles()) > 0 && cfg.ReadInput == nil {
		return nil, fmt.Errorf("%w: the session has local players but ReadInput is nil", ErrConfig)
	}
	if cfg.FPS == 0 {
		cfg.FPS = 60
	}
	if cfg.FPS < 1 || cfg.FPS > 1000 {
		return nil, fmt.Errorf("%w: FPS %d", ErrConfig, cfg.FPS)
	}
	if cfg.SlowdownPermille == 0 {
		cfg.SlowdownPermille = 1100
	}
	depth := cfg.Depth
	if depth == 0 {
		depth = max(cfg.Session.SnapshotDepth(), 1)
	}
	ring, err := snapshot.NewRing(cfg.Registry, depth)
	if err != nil {
		return nil, err
	}
	clock, err := tick.NewClock(uint32(cfg.FPS))
	if err != nil {
		return nil, err
	}
	if cfg.Session.ChecksDeterminism() {
		cfg.World.SetChecks(true)
		if cfg.Dumps == 0 {
			cfg.Dumps = depth + 2
		}
	}
	r := &Runner{cfg: cfg, ring: ring, clock: clock, ctx: Context{World: cfg.World},
		final: rollback.NullFrame, saved: rollback.NullFrame}
	if cfg.Dumps > 0 {
		if cfg.DumpLabel == "" {
			cfg.DumpLabel = "local"
		}
		r.dumps = snapshot.NewDumps(cfg.Registry, cfg.Dumps, snapshot.DumpOptions{Label: cfg.DumpLabel, MaxBytes: cfg.DumpMaxBytes})
		if ds, ok := cfg.Session.(interface{ SetDumpSource(rollback.DumpSource) }); ok {
			// A P2P session with DesyncDumpBytes exchanges these.
			ds.SetDumpSource(func(f rollback.Frame, types []string) []byte {
				d, ok := r.Dump(f, types)
				if !ok {
					return nil
				}
				b, _ := d.MarshalBinary()
				return b
			})
		}
	}
	if ss, ok := cfg.Session.(interface{ SetStateSource(rollback.StateSource) }); ok && cfg.Registry.Encodable() == nil {
		// A P2P session that lets peers rejoin (rollback.Config.RejoinBytes)
		// sends them states from the ring.
		ss.SetStateSource(r.StateSource)
	}
	return r, nil
}

// StateSource is the rollback.StateSource a Runner gives its P2P session
// (New sets it when the Registry is encodable, see
// snapshot.Registry.Encodable): the ring's frame f in its exact byte form
// (snapshot.Ring.Encode) with the checksum it was saved with. It serves
// only frames the ring holds with a checksum (the checked frames of
// rollback.Config.DesyncInterval, or every frame with ChecksumAll); asked
// for another, it answers false and computes the checksum of every save
// from then on until it serves a state. A rejoin's host asks again, for
// a newer final frame, while the answer is false: the state goes out a
// few frames later.
func (r *Runner) StateSource(f rollback.Frame) (state []byte, sum uint64, ok bool) {
	if f < 0 || !r.ring.Held(tick.Tick(f)) {
		return nil, 0, false
	}
	sum, _, ok = r.ring.Checksum(tick.Tick(f))
	if !ok {
		r.sumForRejoin = true
		return nil, 0, false
	}
	state, err := r.ring.Encode(tick.Tick(f), nil)
	if err != nil {
		return nil, 0, false
	}
	r.sumForRejoin = false
	return state, sum, true
}

// Session returns the session the Runner drives.
func (r *Runner) Session() Session { return r.cfg.Session }

// Finished reports whether the session's match is over (see
// rollback.Config.EndFrame): every frame up to the end frame is confirmed,
// and Confirmed has been called for it. Keep calling Update (or RunFrame)
// until then; afterwards they do nothing but poll.
func (r *Runner) Finished() bool { return r.cfg.Session.Finished() }

// Ring returns the snapshot ring (for inspection and Diff).
func (r *Runner) Ring() *snapshot.Ring { return r.ring }

// Frame is the world's current frame.
func (r *Runner) Frame() rollback.Frame { return r.frame }

// Frames counts simulated frames, re-simulations included.
func (r *Runner) Frames() int { return r.frames }

// Loads counts the Load requests carried out.
func (r *Runner) Loads() int { return r.loads }

// Update advances the fixed-timestep clock by the wall time elapsed since the
// last call and runs the frames that are due (each one RunFrame). The clock
// runs at SlowdownPermille while the session is ahead of its peers. It
// returns the number of RunFrame calls.
func (r *Runner) Update(elapsed time.Duration) (int, error) {
	if r.cfg.Session.FramesAhead() > 0 {
		r.clock.SetRate(r.cfg.SlowdownPermille)
	} else {
		r.clock.SetRate(1000)
	}
	n := r.clock.Advance(elapsed)
	if n == 0 {
		r.cfg.Session.Poll()
	}
	for i := 0; i < n; i++ {
		if err := r.RunFrame(); err != nil {
			return i, err
		}
	}
	return n, nil
}

// RunFrame runs one step of the session: reads the local inputs, calls
// AdvanceFrame and carries out its requests. Sessions that are not ready
// (synchronizing, waiting for a spectator's or replay's input) are polled
// and RunFrame returns nil; other session errors are returned.
func (r *Runner) RunFrame() error {
	s := r.cfg.Session
	for _, h := range s.LocalHandles() {
		if err := s.AddLocalInput(h, r.cfg.ReadInput(h)); err != nil {
			return err
		}
	}
	reqs, err := s.AdvanceFrame()
	if errors.Is(err, rollback.ErrNotSynchronized) || errors.Is(err, rollback.ErrWaitingForInput) {
		return nil
	}
	if err != nil {
		return r.explain(err)
	}
	if err := r.Handle(reqs); err != nil {
		return err
	}
	r.confirm()
	return nil
}

// Dump returns this side's dump of frame f (Config.Dumps) restricted to
// the named types (checksum Part names, as EventDesyncDetected.Types
// lists them; all types when empty), or false when f is not held. The
// result is a copy: it stays valid.
func (r *Runner) Dump(f rollback.Frame, types []string) (*snapshot.Dump, bool) {
	if r.dumps == nil || f < 0 {
		return nil, false
	}
	d, ok := r.dumps.At(tick.Tick(f))
	if !ok {
		return nil, false
	}
	return d.Only(types).Clone(), true
}

// DumpDiff is the comparison of the two dumps of an EventDesyncDump.
type DumpDiff struct {
	// Local and Remote are this peer's dump and the other's.
	Local, Remote *snapshot.Dump
	// Diffs are the first differences (at most the max given); Total
	// counts them all.
	Diffs []snapshot.FieldDiff
	Total int
}

// DiffDumpEvent decodes the dumps of an EventDesyncDump (a P2P session
// with rollback.Config.DesyncDumpBytes, driven by a Runner with
// Config.Dumps on both peers) and compares them: which entities and
// fields differ, with both values. At most max differences are listed
// (all for max <= 0). It fails with ErrNoDump when a dump is missing (the
// peer's did not arrive, or either was too large) and with
// snapshot.ErrDumpFormat when one does not decode.
func DiffDumpEvent(ev rollback.Event, max int) (*DumpDiff, error) {
	if ev.Kind != rollback.EventDesyncDump || len(ev.LocalDump) == 0 || len(ev.RemoteDump) == 0 {
		return nil, fmt.Errorf("%w: %v", ErrNoDump, ev)
	}
	dd := &DumpDiff{Local: new(snapshot.Dump), Remote: new(snapshot.Dump)}
	if err := dd.Local.UnmarshalBinary(ev.LocalDump); err != nil {
		return nil, err
	}
	if err := dd.Remote.UnmarshalBinary(ev.RemoteDump); err != nil {
		return nil, err
	}
	dd.Diffs, dd.Total = snapshot.DiffDumps(dd.Local, dd.Remote, max)
	return dd, nil
}

// explain turns a SyncTest mismatch into a *DesyncError when both
// simulations of the frame were dumped.
func (r *Runner) explain(err error) error {
	var mm *rollback.MismatchError
	if r.dumps == nil || !errors.As(err, &mm) || mm.Frame < 0 {
		return err
	}
	first, ok1 := r.dumps.FirstAt(tick.Tick(mm.Frame))
	again, ok2 := r.dumps.At(tick.Tick(mm.Frame))
	if !ok1 || !ok2 {
		return err
	}
	de := &DesyncError{Mismatch: mm, First: first.Only(mm.Types).Clone(), Again: again.Only(mm.Types).Clone()}
	de.First.Label, de.Again.Label = "first simulation", "re-simulation"
	de.Diffs, de.Total = snapshot.DiffDumps(de.First, de.Again, 32)
	return de
}

// confirm reports the newly final checksums and frees the snapshots before
// the confirmed frame.
func (r *Runner) confirm() {
	f := r.cfg.Session.ConfirmedFrame()
	if r.cfg.Confirmed != nil {
		// The state saved at f+1 is final too (it results from confirmed
		// inputs only), if it was saved since the last Load.
		r.reportFinal(min(f+1, r.saved))
	}
	if f >= 0 {
		r.ring.Confirm(tick.Tick(f))
		for _, e := range r.cfg.Effects {
			e.Confirm(tick.Tick(f))
		}
	}
}

// reportFinal passes the held checksums of frames final+1..upTo to Confirmed.
// It runs before Ring.Confirm frees them.
func (r *Runner) reportFinal(upTo rollback.Frame) {
	for f := r.final + 1; f <= upTo; f++ {
		if sum, _, ok := r.ring.Checksum(tick.Tick(f)); ok {
			r.cfg.Confirmed(f, sum)
		}
		r.final = f
	}
}

// resimulated ends a re-simulation for the effect followers.
func (r *Runner) resimulated() {
	r.rewinding = false
	for _, e := range r.cfg.Effects {
		e.Resimulated(tick.Tick(r.frame - 1))
	}
}

// Handle carries out requests on the world, in order. RunFrame calls it;
// call it directly when driving the session yourself.
func (r *Runner) Handle(reqs []rollback.Request) error {
	if r.ctx.err != nil {
		return fmt.Errorf("runner: stopped after a failed step: %w", r.ctx.err)
	}
	s := r.cfg.Session
	for _, q := range reqs {
		switch q.Kind {
		case rollback.SaveRequest:
			if q.Frame != r.frame {
				return fmt.Errorf("%w: save of frame %d while the world is at frame %d", ErrRequestOrder, q.Frame, r.frame)
			}
			t := tick.Tick(q.Frame)
			r.saved = q.Frame
			report := s.WantsChecksum(q.Frame)
			if !report && !r.cfg.ChecksumAll && !r.sumForRejoin {
				if err := r.ring.Save(t); err != nil {
					return err
				}
				continue
			}
			sum, err := r.ring.SaveChecksum(t)
			if err != nil {
				return err
			}
			if r.dumps != nil && report {
				// A dump over DumpMaxBytes is not kept; the desync is
				// still reported by its checksums.
				_ = r.dumps.Capture(t)
			}
			if report {
				_, parts, _ := r.ring.Checksum(t) // snapshot.Part is rollback.Part
				s.ReportChecksum(q.Frame, sum, parts)
			}
		case rollback.LoadRequest:
			if err := r.ring.Load(tick.Tick(q.Frame)); err != nil {
				return err
			}
			if !r.rewinding {
				r.resimTo = r.frame // frames q.Frame..r.frame-1 are simulated again
			}
			r.rewinding = true
			for _, e := range r.cfg.Effects {
				e.Rewind(tick.Tick(q.Frame))
			}
			r.frame = q.Frame
			r.saved = q.Frame
			r.loads++
		case rollback.LoadStateRequest:
			// A rejoining session's first request: the host's state of
			// q.Frame, loaded exactly (same entities, same checksum); a
			// Save of q.Frame follows, whose checksum the session compares
			// with the host's.
			if err := r.ring.LoadEncoded(tick.Tick(q.Frame), q.State); err != nil {
				return fmt.Errorf("runner: load-state of frame %d: %w", q.Frame, err)
			}
			for _, e := range r.cfg.Effects {
				e.Rewind(tick.Tick(q.Frame))
			}
			r.rewinding = false
			r.frame, r.saved = q.Frame, q.Frame
			// Frames before q.Frame were never simulated here: Confirmed
			// starts at q.Frame.
			r.final = max(r.final, q.Frame-1)
		case rollback.AdvanceRequest:
			if q.Frame != r.frame {
				return fmt.Errorf("%w: advance of frame %d while the world is at frame %d", ErrRequestOrder, q.Frame, r.frame)
			}
			r.ctx.Frame = q.Frame
			r.ctx.Inputs = q.Inputs
			r.ctx.Time = tick.Time{Frame: tick.Tick(q.Frame), Hz: uint32(r.cfg.FPS)}
			r.cfg.Step(&r.ctx)
			r.ctx.Inputs = nil
			r.cfg.World.AdvanceTick()
			r.frame = q.Frame + 1
			r.frames++
			if r.rewinding && r.frame >= r.resimTo {
				r.resimulated()
			}
			if err := r.ctx.err; err != nil {
				return fmt.Errorf("runner: step of frame %d: %w", q.Frame, err)
			}
		default:
			return fmt.Errorf("%w: unknown request kind %v", ErrRequestOrder, q.Kind)
		}
	}
	return nil
}
