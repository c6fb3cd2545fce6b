package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// play runs the server and every client from this goroutine at 60 ticks
// per second of wall-clock time: until every client is connected (the
// server only receives), then o.Ticks server ticks, then more (the bots
// keep playing) until every client has checked a complete tick at or
// after o.Ticks, or MaxDrain. It stops early when ctx is done.
func (d *predictDemo) play(ctx context.Context, sum *predictSummary, live io.Writer, start time.Time) error {
	o := d.o
	wait := newPacer(ctx, o.StatsEvery, func(ph phase) { d.liveStats(live, time.Since(start), ph) }).wait

	deadline := time.Now().Add(o.ConnectTimeout)
	for !d.allConnected() {
		if time.Now().After(deadline) {
			return fmt.Errorf("clients not connected after %v", o.ConnectTimeout)
		}
		d.srv.Receive()
		for _, pc := range d.clients {
			pc.rc.Update()
		}
		if !wait(phaseConnect) {
			sum.Interrupted = true
			return nil
		}
	}
	sum.ConnectSec = round3(time.Since(start).Seconds())
	if o.StatsEvery > 0 {
		fmt.Fprintf(live, "%d clients connected in %.2fs\n", len(d.clients), sum.ConnectSec)
	}
	for _, pc := range d.clients {
		if _, err := d.game.AddShip(uint64(pc.rc.ID())); err != nil {
			return err
		}
		pc.game.SetScanner(uint64(pc.rc.ID()), pc.shown)
	}
	d.runStart = time.Now()
	for _, pc := range d.clients {
		pc.last = d.runStart
		pc.markStart(d.srv)
	}
	var drainStart time.Time
	for {
		ph := phaseRun
		if int(d.tick) >= o.Ticks {
			if drainStart.IsZero() {
				drainStart = time.Now()
			}
			if d.allConfirmed() || time.Since(drainStart) >= o.MaxDrain {
				break
			}
			ph = phaseDrain
		}
		if err := d.step(); err != nil {
			return err
		}
		if !wait(ph) {
			sum.Interrupted = true
			return nil
		}
	}
	sum.DrainSec = round3(time.Since(drainStart).Seconds())
	return nil
}

func (d *predictDemo) allConnected() bool {
	for _, pc := range d.clients {
		if pc.rc.State() != replicate.Connected {
			return false
		}
	}
	return true
}

// allConfirmed reports whether every client has checked a complete tick
// at or after the last tick of the run, and one such tick is common to
// all (the summary's converged_tick): under loss, a client may skip a
// tick another checked, so each reaching the last tick is not enough.
func (d *predictDemo) allConfirmed() bool {
	for _, pc := range d.clients {
		if pc.nChecks == 0 || int(pc.lastChk) < d.o.Ticks {
			return false
		}
	}
	tk, ok := d.commonTick()
	return ok && int(tk) >= d.o.Ticks
}

// step runs one server frame (receive, simulate with the buffered inputs,
// forward, send) and one frame of every client, then checks the clients
// that stepped.
func (d *predictDemo) step() error {
	d.tick++
	t0 := time.Now()
	var simErr error
	err := d.frame.Frame(d.tick, func(t tick.Tick, input func(replicate.ClientID) shooter.Stick) {
		simErr = d.game.Step(t, func(p uint64) shooter.Stick { return input(replicate.ClientID(p)) })
	})
	if simErr != nil {
		return simErr
	}
	if err != nil {
		d.events = append(d.events, fmt.Sprintf("server tick %v: %v", d.tick, err))
	}
	st := map[ecs.Entity]shooter.Entity{}
	for _, k := range d.game.State(nil) {
		st[k.E] = k.Entity
	}
	d.states[d.tick] = st
	delete(d.states, d.tick-predictStates)
	evs := d.srv.Events()
	d.sample(t0, evs)
	for _, ev := range evs {
		if ev.Kind != replicate.ClientConnected {
			d.events = append(d.events, fmt.Sprintf("server: client %d %v: %s", ev.Client, ev.Kind, ev.Reason))
		}
	}
	for _, pc := range d.clients {
		now := time.Now()
		held := pc.frame.Stats().HeldFrames
		n := pc.frame.Frame(now.Sub(pc.last), pc.input, pc.sim)
		pc.last = now
		if err := pc.game.Err(); err != nil {
			return fmt.Errorf("client %d: %w", pc.idx, err)
		}
		for _, ev := range pc.rc.Events() {
			if ev.Kind == replicate.EventConnected {
				continue
			}
			d.events = append(d.events, fmt.Sprintf("client %d: %s %s", pc.idx, clientEventName(ev.Kind), ev.Reason))
		}
		if d.mx != nil {
			d.mxPred[pc.idx].Sample(pc.tl)
		}
		d.settle(pc)
		if n == 0 {
			continue // values received are applied by the next Step
		}
		pc.aheadSum += int64(pc.frame.Ahead())
		pc.aheadN++
		if pc.frame.Stats().HeldFrames != held {
			// An overloaded client (a stalled loop on a busy machine) held
			// its rollbacks this frame: the server values it received are
			// checked by a later Step, and its ticks compared then.
			continue
		}
		d.check(pc)
	}
	return nil
}

// settledAfter is the server tick after which a run counts as settled:
// the first second.
const settledAfter = 60

// settle records the client's true lead over the server's present after
// its frame once the run has settled, and its counters when it settles.
func (d *predictDemo) settle(pc *predictClient) {
	if d.tick < settledAfter {
		return
	}
	if !pc.at1s.set {
		ss := pc.frame.Sync().Stats()
		is := d.frame.Buffer().Stats(pc.rc.ID())
		ts := pc.tl.Stats()
		pc.at1s = settledBase{set: true, snaps: ss.SnapsAhead + ss.SnapsBack, late: is.Late, miss: is.Missing,
			spawns: ts.PredictedSpawns, refused: ts.PredictedSpawnsRefused, serverTick: d.tick}
		own := uint64(pc.rc.ID())
		pc.at1s.ownShots = pc.game.FiredShots(own)
		pc.at1s.ownRef, _ = pc.game.RefusedShots(own)
		return
	}
	lead := pc.tl.Now().Sub(d.tick)
	pc.leads = append(pc.leads, lead)
	pc.leadEst = append(pc.leadEst, pc.frame.PresentLead()-time.Duration(lead)*pc.frame.Clock().Step())
}

// check compares the client's confirmed state at every complete server
// tick received before its last Step, older than its Now and Confirmed
// (after a range fault, the ticks before the resync are not: counted as
// unchecked) with the server's state at that tick: the same entities,
// the same bodies (from
// the Timeline's history for what it predicts, from the interpolation
// buffer for the ships it interpolates), and for each bullet the same
// predicted Bullet (who fired it, when). The first difference is kept.
// Predicted bullets the server did not fire are counted (ghosts).
func (d *predictDemo) check(pc *predictClient) {
	// Ticks at or after Now stay pending: the history of Now is saved by
	// the next Step.
	later := pc.pending[:0]
	defer func() { pc.pending = later }()
	if pc.diff != "" {
		return
	}
	st := pc.tl.Stats()
	faults := st.RangeFaults + st.Resyncs
	for _, tk := range pc.pending {
		if !tk.Before(pc.tl.Now()) {
			later = append(later, tk)
			continue
		}
		want, ok := d.states[tk]
		if !ok || tk.Before(pc.tl.Oldest()) {
			pc.stale++
			continue
		}
		if !pc.tl.Confirmed(tk) {
			// After a range fault, the ticks up to the resync it asks for
			// are not final, nor those before a resync's tick
			// (predict.Timeline.Confirmed): not compared, counted as
			// unchecked. Without either, every such tick is final.
			if faults == 0 {
				pc.diff = fmt.Sprintf("tick %v (client at %v) complete but not confirmed", tk, pc.tl.Now())
				return
			}
			pc.stale++
			continue
		}
		if s := pc.diffAt(tk, want, d.o.Others == "interpolate"); s != "" {
			pc.diff = s
			return
		}
		pc.nChecks++
		pc.lastChk = tick.Max(pc.lastChk, tk)
		pc.checked = append(pc.checked, tk)
		if len(pc.checked) > predictStates {
			pc.checked = slices.Delete(pc.checked, 0, len(pc.checked)-predictStates)
		}
	}
}

// diffAt returns the first difference between the client's state at tick
// tk and want, or "".
func (pc *predictClient) diffAt(tk tick.Tick, want map[ecs.Entity]shooter.Entity, interpolated bool) string {
	for se, w := range want {
		ce, ok := pc.cliEnt[se]
		if !ok {
			return fmt.Sprintf("tick %v complete: server entity %v never reached the client", tk, se)
		}
		var got shooter.Body
		if interpolated && pc.remoteShip(ce) {
			got, ok = pc.interp.At(ce, tk, 0)
		} else {
			got, ok = pc.body.At(ce, tk)
		}
		if !ok || got != w.Body {
			return fmt.Sprintf("tick %v (client at %v), entity %v: client %+v (%v), server %+v", tk, pc.tl.Now(), se, got, ok, w.Body)
		}
		bu, ok := pc.bullet.At(ce, tk)
		if wb := (shooter.Bullet{Player: w.Player, Born: w.Born}); ok != w.Bullet || (ok && bu != wb) {
			return fmt.Sprintf("tick %v (client at %v), entity %v: client bullet %+v (%v), server %+v (%v)", tk, pc.tl.Now(), se, bu, ok, wb, w.Bullet)
		}
	}
	// A predicted bullet no server bullet adopted, although tk is
	// complete (the server's spawns of tk came with it): a bullet the
	// server did not fire, an unconfirmed prediction, counted. The Step
	// after tk completed refused such bullets (predict's refusal at
	// completion), so one is seen only when that could not reach back to
	// its tick.
	for ce := range pc.keys.Values() {
		if _, ok := pc.bullet.At(ce, tk); ok && !pc.repl[ce] {
			pc.ghosts++
		}
	}
	for se, ce := range pc.cliEnt {
		if _, ok := want[se]; ok {
			continue
		}
		if got, ok := pc.body.At(ce, tk); ok {
			return fmt.Sprintf("tick %v: entity %v, absent on the server, is %+v on the client", tk, se, got)
		}
		if got, ok := pc.bullet.At(ce, tk); ok {
			return fmt.Sprintf("tick %v: entity %v, absent on the server, is bullet %+v on the client", tk, se, got)
		}
	}
	return ""
}

// commonTick returns the newest tick every client checked.
func (d *predictDemo) commonTick() (tick.Tick, bool) {
	if len(d.clients) == 0 {
		return 0, false
	}
	first := d.clients[0].checked
	for i := len(first) - 1; i >= 0; i-- {
		tk, all := first[i], true
		for _, pc := range d.clients[1:] {
			if !slices.Contains(pc.checked, tk) {
				all = false
				break
			}
		}
		if all {
			return tk, true
		}
	}
	return 0, false
}

// liveStats prints a line for the server and one per client, with rates
// since the previous call.
func (d *predictDemo) liveStats(w io.Writer, at time.Duration, ph phase) {
	fmt.Fprintf(w, "[%5.1fs] %-10s server tick %5d | %d bullets in flight (%d fired)\n",
		at.Seconds(), ph, d.tick, d.game.Bullets(), d.game.Fired())
	if len(d.prev) != len(d.clients) {
		d.prev = make([]predictRates, len(d.clients))
	}
	secs := d.o.StatsEvery.Seconds()
	for i, pc := range d.clients {
		var down uint64
		if cs, err := d.srv.Stats(pc.rc.ID()); err == nil {
			down = cs.BytesOut
		}
		in := pc.frame.Stats().InputBytes
		st := pc.tl.Stats()
		ping := time.Duration(0)
		if pc.conn != nil {
			ping = pc.conn.Stats().RTT
		}
		late := d.frame.Buffer().Stats(pc.rc.ID()).Late
		fmt.Fprintf(w, "[%5.1fs]   client %d: ping %3.0fms | lead %5.1f (ahead %2d) | rollbacks %4d (%5d resimulated) | corrections %4d (max %d) | bullets predicted %3d matched %3d dropped %2d | %6.0f B/s down | %4.0f B/s inputs | late %d\n",
			at.Seconds(), i, ms(ping), float64(pc.frame.PresentLead())/float64(pc.frame.Clock().Step()), pc.frame.Ahead(), st.Rollbacks, st.TicksResimulated, st.Corrections, pc.maxCorr,
			st.PredictedSpawns, st.PredictedSpawnsMatched, st.PredictedSpawnsDropped,
			float64(down-d.prev[i].down)/secs, float64(in-d.prev[i].input)/secs, late)
		d.prev[i] = predictRates{down: down, input: in}
	}
}
