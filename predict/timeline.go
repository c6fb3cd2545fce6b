package predict

import (
	"fmt"
	"log/slog"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// DefaultWindow is the rollback window used when Config.Window is 0: 30
// ticks, half a second at 60 Hz (bevy_timewarp's documented default).
const DefaultWindow = 30

// Config configures a Timeline. The zero Config is valid.
type Config struct {
	// Window is the rollback window W in ticks: the timeline keeps the
	// predicted state of the last W+1 ticks (now-W .. now) and can roll back
	// to any of them. Authoritative values older than that are applied at
	// the oldest tick held and counted as range faults. Default
	// DefaultWindow (30).
	Window int
	// Forced rolls back to every complete tick that received authoritative
	// values, whether or not they differ from the prediction: the worst
	// case, for tests (like rollback's SyncTest for P2P). The outcome equals
	// that of the normal mode; only the work differs. Default false.
	Forced bool
	// Logger receives diagnostics (range faults, values for entities that
	// no longer exist). Nil is silent.
	Logger *slog.Logger
}

// history is the type-erased side of a registered component or resource.
type history interface {
	save(t tick.Tick, savedTick uint64)
	restore(rs *ecs.Restore, t tick.Tick)
	check(t tick.Tick) int // mismatching authoritative values at t
	apply(t tick.Tick)
	flushLate()        // snap the late values that no newer one replaced
	drop(e ecs.Entity) // the despawn marker: remove e's value
	clearCorrections()
	beginCorrections(now tick.Tick)
	endCorrections(now tick.Tick)
	stats() TypeStats
}

// tickInfo is what the Timeline knows about one tick: completeness, whether
// authoritative values arrived and were checked, and external despawns.
type tickInfo struct {
	t        tick.Tick
	used     bool
	complete bool
	auth     bool // authoritative values or changes arrived for t
	checked  bool // compared since they last arrived
	stepped  bool // a Step ran since t completed (see Confirmed)
	despawns []ecs.Entity
}

// marker is a despawn marker: e lost its predicted components at tick t
// and is despawned from the World once t leaves the window.
type marker struct {
	e ecs.Entity
	t tick.Tick
}

// Timeline is a client's predicted timeline over an ecs.World: the history
// of the registered predicted types, the authoritative values received for
// past ticks, and the fixed step that rolls back and re-simulates when they
// differ from the prediction. See the package documentation for the frame
// and the rules. A Timeline is not safe for concurrent use.
type Timeline struct {
	w      *ecs.World
	cfg    Config
	window int
	start  tick.Tick
	now    tick.Tick // newest simulated tick: the World holds its state
	nowAbs uint64    // now as a count that does not wrap (see abs)
	cur    tick.Tick // the tick being simulated during Step
	inStep bool
	inRB   bool

	types   []history
	names   map[string]bool
	ticks   []tickInfo // 2*(W+1), by tick mod len
	markers []marker
	spawns  []prespawn // spawn keys within the window (spawn.go)
	req     tick.Tick  // oldest requested rollback tick, when hasReq
	hasReq  bool
	done    tick.Tick // newest complete server tick, when hasDone (Complete)
	hasDone bool
	deaths  uint64 // World despawns seen (see column.Layout.Mark)
	started bool
	unsaved bool // during decide: the state of Now is the World's, not yet saved
	lateN   int  // late authoritative changes waiting for the next Step (late.go)
	stats   Stats
	rs      resyncState  // the last resync (resync.go)
	sums    *checksums   // held checksum reports (checksum.go)
	hold    bool         // HoldRollbacks: Steps check nothing and roll back nothing
	fx      effects      // effect trackers (effects.go)
	gone    []goneID     // server ids of entities the server despawned, still in the World (ServerEntity)
	mapper  entityMapper // replicate's mapping (Attach)
	// attachChecked: warnUnattached ran (unattached.go).
	attachChecked bool
}

// New returns a Timeline for w whose newest tick is start: w holds the
// state at the end of tick start, and the first Step simulates start+1.
// Register the predicted types before the first Step.
func New(w *ecs.World, start tick.Tick, cfg Config) *Timeline {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	tl := &Timeline{
		w: w, cfg: cfg, window: cfg.Window, start: start, now: start, cur: start, nowAbs: 1 << 40,
		names: make(map[string]bool),
		ticks: make([]tickInfo, 2*(cfg.Window+1)),
	}
	w.Observe(func(ev ecs.Event) {
		if ev.Kind == ecs.Despawned {
			tl.deaths++
		}
	})
	return tl
}

// World returns the World the Timeline predicts.
func (tl *Timeline) World() *ecs.World { return tl.w }

// Window returns the rollback window W.
func (tl *Timeline) Window() int { return tl.window }

// Now returns the newest simulated tick: the World holds the predicted state
// at the end of it.
func (tl *Timeline) Now() tick.Tick { return tl.now }

// Oldest returns the oldest tick the history holds: Now-W once the
// Timeline has simulated W ticks since its start or its last resync
// (Resync), the start before. Component.At and Resource.At answer for
// the ticks Oldest .. Now.
func (tl *Timeline) Oldest() tick.Tick { return tl.low() }

// Tick returns the tick being simulated while Step runs the simulation
// (during a rollback, the tick being re-simulated), and Now otherwise.
// Systems read it to fetch the inputs of the right tick.
func (tl *Timeline) Tick() tick.Tick { return tl.cur }

// InRollback reports whether Step is re-simulating past ticks. Systems with
// side effects that must happen once (sounds, particles, network sends)
// skip their work while it is true.
func (tl *Timeline) InRollback() bool { return tl.inRB }

// Stats returns the counters; Types is a new slice.
func (tl *Timeline) Stats() Stats {
	s := tl.stats
	s.Types = make([]TypeStats, len(tl.types))
	s.HistoryBytes = 0
	for i, h := range tl.types {
		s.Types[i] = h.stats()
		s.HistoryBytes += s.Types[i].HistoryBytes
	}
	return s
}

// abs returns t as a count of ticks that does not wrap (nowAbs for Now),
// so ring positions stay consecutive when the tick wraps around.
func (tl *Timeline) abs(t tick.Tick) uint64 {
	return tl.nowAbs + uint64(int64(t.Sub(tl.now)))
}

// slot is t's place in the history rings (W+1 ticks).
func (tl *Timeline) slot(t tick.Tick) int { return int(tl.abs(t) % uint64(tl.window+1)) }

// pslot is t's place in the per-tick rings (2(W+1) ticks: the window and as
// many ticks ahead).
func (tl *Timeline) pslot(t tick.Tick) int { return int(tl.abs(t) % uint64(len(tl.ticks))) }

// low returns the oldest tick held in the history.
func (tl *Timeline) low() tick.Tick {
	if tl.now.Sub(tl.start) < int32(tl.window) {
		return tl.start
	}
	return tl.now.Add(-int32(tl.window))
}

// info returns the tickInfo of t, reset if it held an older tick.
func (tl *Timeline) info(t tick.Tick) *tickInfo {
	in := &tl.ticks[tl.pslot(t)]
	if !in.used || in.t != t {
		*in = tickInfo{t: t, used: true, despawns: in.despawns[:0]}
	}
	return in
}

// peek returns the tickInfo of t, or nil when nothing is known about t.
func (tl *Timeline) peek(t tick.Tick) *tickInfo {
	in := &tl.ticks[tl.pslot(t)]
	if !in.used || in.t != t {
		return nil
	}
	return in
}

// where classifies a tick for a change from outside the simulation.
type where uint8

const (
	wPast  where = iota // held in the history: replayed, may roll back
	wNow                // the newest tick: applied at once, replayed
	wAhead              // not simulated yet: applied when simulated
	wOld                // older than the window: range fault, applied at the oldest tick held
)

func (tl *Timeline) where(t tick.Tick) (where, error) {
	w, err := tl.place(t)
	if err == nil && w == wOld {
		tl.fault(t)
	}
	return w, err
}

// place is where without counting a range fault.
func (tl *Timeline) place(t tick.Tick) (where, error) {
	if tl.inStep {
		return 0, ErrInStep
	}
	if tl.obsolete(t) {
		return 0, fmt.Errorf("%w: tick %v, resync at %v", ErrObsolete, t, tl.rs.at)
	}
	switch {
	case t.Sub(tl.now) > int32(tl.window):
		return 0, fmt.Errorf("%w: tick %v, newest %v, window %d", ErrTooFarAhead, t, tl.now, tl.window)
	case t.After(tl.now):
		return wAhead, nil
	case t == tl.now:
		return wNow, nil
	case t.Before(tl.low()):
		return wOld, nil
	}
	return wPast, nil
}

// oldest is where a change older than the window goes: the oldest tick
// held, before that tick's own changes (early), so every tick the history
// holds has it (see late.go). It is Now when the history holds Now only.
func (tl *Timeline) oldest() (t tick.Tick, w where, early bool) {
	if t = tl.low(); t == tl.now {
		return t, wNow, true
	}
	return t, wPast, true
}

// noted records that a change for t arrived: authoritative ones are compared
// at the next Step (once t is complete), local ones in the past request a
// rollback to t.
func (tl *Timeline) noted(t tick.Tick, w where, auth bool) {
	in := tl.info(t)
	if auth {
		in.auth, in.checked = true, false
		return
	}
	if w == wPast {
		tl.Request(t)
	}
}

// Request asks the next Step to roll back to tick t (restore t's state with
// its authoritative values and changes applied, re-simulate t+1 .. now).
// Requests made before a Step are consolidated into the oldest. A tick
// older than the window counts a range fault and rolls back as far as the
// window allows; a tick not yet simulated is ignored.
func (tl *Timeline) Request(t tick.Tick) {
	if t.After(tl.now) || tl.obsolete(t) {
		return
	}
	if low := tl.low(); t.Before(low) {
		tl.fault(t)
		t = low
	}
	if !tl.hasReq || t.Before(tl.req) {
		tl.req, tl.hasReq = t, true
	}
}

// Complete reports that server tick t is complete: every authoritative
// value of t has arrived (replicate's TickComplete hook), and the server's
// spawns of t and of every tick before it have been applied (replicate
// applies a tick's mutations only after the update carrying the newest
// spawns, and its updates are reliable and ordered). Only complete ticks
// are compared with the prediction, and a predicted spawn of a tick at or
// before t that no server spawn adopted is refused (see Spawn). Ticks
// older than the window are not compared; ticks more than the window
// ahead give ErrTooFarAhead.
func (tl *Timeline) Complete(t tick.Tick) error {
	tl.warnUnattached()
	if t.Sub(tl.now) > int32(tl.window) {
		return fmt.Errorf("%w: tick %v, newest %v, window %d", ErrTooFarAhead, t, tl.now, tl.window)
	}
	if !tl.hasDone || t.After(tl.done) {
		tl.done, tl.hasDone = t, true
	}
	if t.Before(tl.low()) {
		return nil
	}
	tl.info(t).complete = true
	return nil
}

// applyTick applies the external changes and authoritative values of t to
// the World: values first, then despawns.
func (tl *Timeline) applyTick(t tick.Tick) {
	for _, h := range tl.types {
		h.apply(t)
	}
	if in := tl.peek(t); in != nil {
		for _, e := range in.despawns {
			tl.mark(e, t)
		}
	}
}

// saveAll saves the World's state as tick t in every type's history.
func (tl *Timeline) saveAll(t tick.Tick) {
	saved := tl.w.Tick()
	for _, h := range tl.types {
		h.save(t, saved)
	}
	tl.w.AdvanceTick() // later writes are distinguishable from the save
}

// decide returns the oldest tick to roll back to, if any: requested ticks
// and complete ticks whose authoritative values differ from the history
// (every complete tick with authoritative values in forced mode).
func (tl *Timeline) decide() (tick.Tick, bool) {
	from, ok := tl.req, tl.hasReq
	tl.hasReq = false
	if low := tl.low(); ok && from.Before(low) {
		// A request that waited (HoldRollbacks) until its tick left the
		// window: its changes can no longer be replayed from their tick,
		// a range fault (the resync it asks for repairs the state).
		tl.fault(from)
		from = low
	}
	for t := tl.low(); !t.After(tl.now); t++ {
		in := tl.peek(t)
		if in == nil || !in.complete {
			continue
		}
		in.stepped = true
		if !in.auth || in.checked {
			continue
		}
		in.checked = true
		n := 0
		for _, h := range tl.types {
			n += h.check(t)
		}
		if (n > 0 || tl.cfg.Forced) && (!ok || t.Before(from)) {
			from, ok = t, true
		}
	}
	return from, ok
}

// Step runs one fixed step: it decides whether to roll back (requests and
// mismatching complete authoritative ticks, consolidated into the oldest
// tick T) and saves the current state as tick Now in the history; if so it
// restores T's predicted state with T's authoritative values and external
// changes applied and re-simulates T+1 .. Now with InRollback true, applying
// each tick's values and changes after simulating it and saving it again;
// records corrections; then simulates the next tick (Now+1), applies the
// values and changes already received for it, and makes it Now. Despawn
// markers older than the window despawn their entities.
//
// sim simulates one tick, given its number (also Tick()). It must be
// deterministic (see the package documentation), write only the World's
// predicted components and resources, and must not spawn or despawn
// entities of the World except through Spawn and Despawn. Predicted
// spawns whose tick, or a later one, completed without the server's
// spawn are despawned and their tick re-simulated without them (refused,
// a rollback consolidated with the others), those after the tick rolled
// back to that the re-simulation no longer makes are despawned (see
// Spawn), and those whose tick leaves the window unmatched.
func (tl *Timeline) Step(sim func(t tick.Tick)) {
	tl.started = true
	for _, h := range tl.types {
		h.flushLate()
		h.clearCorrections()
	}
	tl.lateN = 0
	// Decide before saving Now: a rollback to an earlier tick saves Now
	// again anyway, so the save is skipped then (ticks at Now are checked
	// against the World itself).
	tl.refuseSpawns()
	tl.unsaved = true
	var from tick.Tick
	var ok bool
	if !tl.hold {
		from, ok = tl.decide()
	}
	tl.unsaved = false
	if !ok || from == tl.now {
		tl.saveAll(tl.now)
	}
	if ok {
		tl.rollback(from, sim)
	}
	tl.inStep = true
	tl.now++
	tl.nowAbs++
	tl.cur = tl.now
	sim(tl.now)
	tl.inStep = false
	tl.applyTick(tl.now)
	tl.expire()
	tl.fx.confirm(tl)
	if tl.sums != nil && !tl.hold {
		tl.sums.flush()
	}
}

// HoldRollbacks holds (true) or releases (false) the Steps' rollbacks:
// while held, a Step simulates the next tick and saves it but neither
// compares server values with the history nor rolls back; requests and
// refused spawns wait, and no checksum report (AttachChecksum) is sent.
// The first Step after the release checks everything that arrived, rolls
// back once to the oldest tick that needs it, and sends the reports of
// the ticks it made final, each describing its own tick. It is
// how ClientFrame keeps an overloaded client from spending every frame
// on re-simulation (see ClientFrameConfig.SlowFrame); a hold longer than
// the window loses corrections to range faults.
func (tl *Timeline) HoldRollbacks(hold bool) { tl.hold = hold }

// rollback restores tick from and re-simulates up to now.
func (tl *Timeline) rollback(from tick.Tick, sim func(t tick.Tick)) {
	tl.stats.Rollbacks++
	now := tl.now
	for _, h := range tl.types {
		h.beginCorrections(now)
	}
	rs := ecs.BeginRestore(tl.w, tl.w.EntityState()) // the allocator stays as it is
	for _, h := range tl.types {
		h.restore(rs, from)
	}
	rs.Finish()
	tl.w.AdvanceTick() // writes after the restore are newer than it (see frame.restored)
	k := 0
	for _, m := range tl.markers { // markers made after from are undone
		if !m.t.After(from) {
			tl.markers[k] = m
			k++
		}
	}
	tl.markers = tl.markers[:k]
	tl.unliveSpawns(from)
	tl.applyTick(from)
	tl.saveAll(from)
	tl.fx.rewind(from + 1)
	tl.inStep, tl.inRB = true, true
	for t := from + 1; !t.After(now); t++ {
		tl.cur = t
		sim(t)
		tl.applyTick(t)
		tl.undoSpawns(t)
		tl.saveAll(t)
		tl.stats.TicksResimulated++
	}
	tl.inStep, tl.inRB = false, false
	tl.cur = now
	tl.fx.resimulated(now)
	for _, h := range tl.types {
		h.endCorrections(now)
	}
}

func (tl *Timeline) register(name string, h history) error {
	if tl.started {
		return fmt.Errorf("%w: %s", ErrStarted, name)
	}
	if tl.names[name] {
		return fmt.Errorf("%w: %s", ErrRegistered, name)
	}
	tl.names[name] = true
	tl.types = append(tl.types, h)
	return nil
}
