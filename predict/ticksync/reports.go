package ticksync

// Sync's steering by the server's input reports: the send times of
// the input messages, the client's position, the arrival offsets, the
// loss and the target margin (see the package documentation).

import (
	"time"

	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/tick"
)

// sentRing is how many input messages a Sync remembers (by tick).
const sentRing = 256

// lossWindow is how many of the newest decided input messages the loss
// estimate counts; lossLag how many ticks behind the newest received a
// message not acknowledged is given up as lost (a message that late is of
// no use to the server either).
const (
	lossWindow = 256
	lossLag    = 8
)

type sentInput struct {
	t                   tick.Tick
	at                  time.Duration
	ok, acked, resolved bool
}

// feedback is the Sync's account of its inputs' arrival at the
// server, from input reports.
type feedback struct {
	sent     [sentRing]sentInput
	ref      tick.Tick     // the first input tick sent
	at0      time.Duration // when it was sent
	hasRef   bool
	lam      time.Duration // the client's position: (tick+InputDelay-ref)*step + since - (at-at0)
	hasPos   bool
	sinceAvg time.Duration // mean time into the next step when a message is sent
	posAt    time.Duration // the time of the last Position
	gap      time.Duration // the time between Positions (frames) beyond a tick, peak-held
	n        int           // arrivals measured
	mu, dev  time.Duration // mean arrival offset and its mean deviation
	jumpN    int           // consecutive arrivals far from mu, on one side
	jumpSum  time.Duration // their sum
	report   tick.Tick     // the newest report's Tick
	hasRep   bool
	resolved tick.Tick // messages up to this tick are acked or lost
	hasRes   bool
	lost     [lossWindow / 64]uint64 // the last lossWindow resolved: bit set = lost
	lossPos  int
	lossN    int // resolved, up to lossWindow
	lossLost int // lost among them
}

// Sent notes that the input message whose newest input is for tick t
// (input.Batch.Last) was sent at time at, on the caller's clock (any
// monotonic time base, the same for every call and for Position;
// predict.ClientFrame uses the sum of the elapsed times of its frames), since
// being the time the client's clock was into its next step then
// (Clock.Alpha() times the step length). Reports about the message are
// matched to it.
func (s *Sync) Sent(t tick.Tick, since, at time.Duration) {
	f := &s.fb
	if !f.hasRef {
		f.ref, f.at0, f.hasRef = t, at, true
		f.resolved, f.hasRes = t-1, true
		f.sinceAvg = since
	}
	f.sinceAvg += (since - f.sinceAvg) / 16
	f.sent[uint32(t)%sentRing] = sentInput{t: t, at: at, ok: true}
	s.stats.Sent++
}

// Position tells the Sync where the client is at time at (the clock
// of Sent): its newest simulated tick, and the time since into its next
// step. Once the reports steer, the error (and Rate) follow from it: call
// it every frame, after the steps. Before the first Sent it does nothing.
func (s *Sync) Position(client tick.Tick, since, at time.Duration) {
	f := &s.fb
	if !f.hasRef {
		return
	}
	f.lam = s.ellOf(client.Add(int32(s.cfg.InputDelay)), at) + since
	// A frame slower than a tick sends the inputs of several ticks at
	// once, the first of them late by about the frame's length beyond a
	// tick: the margin keeps it, its peaks held and decaying over about
	// 32 frames.
	if f.hasPos {
		if g := at - f.posAt - s.step; g > f.gap {
			f.gap = g
		} else {
			f.gap += (max(g, 0) - f.gap) / 32
		}
	}
	f.posAt, f.hasPos = at, true
	if s.Steering() {
		s.err = s.feedbackError()
	}
}

// ellOf is the lead of input tick t sent at time at on the timeline of
// the first message: how far its tick is ahead of the client's clock.
func (s *Sync) ellOf(t tick.Tick, at time.Duration) time.Duration {
	return time.Duration(t.Sub(s.fb.ref))*s.step - (at - s.fb.at0)
}

// Report adds the server's report on the client's input messages: each
// arrival measures the offset between the client's clock and the server's
// ticks (Margin ticks early at Tick, for a message sent at a known time),
// the acknowledged and lost messages the loss, and the report's counters
// say whether inputs were missing or late. A report not newer than one
// already used is ignored (Stats().StaleReports). Once the reports have
// measured MinArrivals arrivals they steer the lead (from the client's
// last Position), and a report is where a snap is decided.
func (s *Sync) Report(r *input.Report) {
	f := &s.fb
	if f.hasRep && !r.Tick.After(f.report) {
		s.stats.StaleReports++
		return
	}
	f.report, f.hasRep = r.Tick, true
	s.stats.Reports++
	s.stats.Missing, s.stats.Late = r.Missing, r.Late
	if !f.hasRef {
		return
	}
	for i := -1; i < 64; i++ {
		if i >= 0 && r.Lost>>uint(i)&1 != 0 {
			continue
		}
		t := r.Newest.Add(int32(-1 - i))
		if e := &f.sent[uint32(t)%sentRing]; e.ok && e.t == t {
			e.acked = true
		}
	}
	for _, a := range r.Arrivals {
		e := &f.sent[uint32(a.Last)%sentRing]
		if !e.ok || e.t != a.Last {
			continue
		}
		s.addArrival(time.Duration(a.Margin)*s.step - s.ellOf(e.t, e.at))
	}
	s.resolve(r.Newest.Add(-lossLag))
	if !s.Steering() || !f.hasPos {
		return
	}
	s.synced = true
	e := s.feedbackError()
	if e > time.Duration(s.cfg.SnapTicks)*s.step || e < -time.Duration(s.cfg.SnapTicks)*s.step {
		s.far++
		if s.far >= s.cfg.SnapConfirm {
			s.snap(e)
			e = s.feedbackError()
		}
	} else {
		s.far = 0
	}
	s.err = e
}

// jumpArrivals is how many arrivals in a row, all more than SnapTicks
// from the mean offset on the same side, make the offset jump to their
// mean: the server's clock moved (a stall, a restart), and the average
// would take a second to follow, snapping several times on the way.
const jumpArrivals = 6

// addArrival adds one arrival's offset sample y: the client's clock at
// the send less the server's tick at the arrival (both as durations from
// the first message).
func (s *Sync) addArrival(y time.Duration) {
	f := &s.fb
	f.n++
	s.stats.Arrivals++
	if f.n == 1 {
		f.mu, f.dev = y, s.step/2
		return
	}
	d := y - f.mu
	far := time.Duration(s.cfg.SnapTicks) * s.step
	if d > far || d < -far {
		if f.jumpN > 0 && (d > 0) != (f.jumpSum/time.Duration(f.jumpN) > f.mu) {
			f.jumpN, f.jumpSum = 0, 0
		}
		f.jumpN++
		f.jumpSum += y
		if f.jumpN >= jumpArrivals {
			f.mu = f.jumpSum / time.Duration(f.jumpN)
			f.jumpN, f.jumpSum = 0, 0
		}
		return
	}
	f.jumpN, f.jumpSum = 0, 0
	f.mu += d / 16
	// A deviation counts at most twice the jitter and a tick, so that a
	// transient (the ramp of offsets of the messages sent while the
	// server stalled) does not inflate the margin for seconds.
	f.dev += (min(max(d, -d), 2*f.dev+s.step) - f.dev) / 16
}

// resolve counts the messages sent up to tick upTo as received or lost.
func (s *Sync) resolve(upTo tick.Tick) {
	f := &s.fb
	if !upTo.After(f.resolved) {
		return
	}
	from := f.resolved + 1
	if upTo.Sub(from) >= sentRing {
		from = upTo.Add(-(sentRing - 1))
	}
	for t := from; t.AtOrBefore(upTo); t++ {
		e := &f.sent[uint32(t)%sentRing]
		if !e.ok || e.t != t || e.resolved {
			continue
		}
		e.resolved = true
		w, bit := f.lossPos/64, uint64(1)<<(f.lossPos%64)
		if f.lossN == lossWindow && f.lost[w]&bit != 0 {
			f.lossLost--
		}
		f.lost[w] &^= bit
		if e.acked {
			s.stats.Acked++
		} else {
			s.stats.Lost++
			f.lost[w] |= bit
			f.lossLost++
		}
		f.lossPos = (f.lossPos + 1) % lossWindow
		f.lossN = min(f.lossN+1, lossWindow)
	}
	f.resolved = upTo
}

// Steering reports whether input reports steer the lead: they have
// measured at least MinArrivals arrivals.
func (s *Sync) Steering() bool { return s.fb.n >= s.cfg.MinArrivals && s.fb.hasPos }

// Loss returns the fraction of the client's newest input messages (up to
// 256) that the reports say never reached the server, and how many that
// is of.
func (s *Sync) Loss() (float64, int) {
	if s.fb.lossN == 0 {
		return 0, 0
	}
	return float64(s.fb.lossLost) / float64(s.fb.lossN), s.fb.lossN
}

// LossMargin returns r, the ticks of margin the lead keeps against lost
// input messages: the least r with loss^(r+1) <= LateTarget, from the
// loss measured (with a prior of 10% worth ten messages, so 2 before any
// report and at least 1 at no measured loss). At most input.MaxRedundancy-2.
func (s *Sync) LossMargin() int {
	p := (float64(s.fb.lossLost) + 1) / (float64(s.fb.lossN) + 10)
	r, q := 0, p
	for q > s.cfg.LateTarget && r < input.MaxRedundancy-2 {
		r++
		q *= p
	}
	return r
}

// Redundancy returns how many inputs each input message should carry:
// at least least, and LossMargin()+2 (the copies the loss margin counts on,
// and one more), at most input.MaxRedundancy. predict.ClientFrame sets its sender's
// redundancy with it, least being input.Config.Redundancy.
func (s *Sync) Redundancy(least int) int {
	return max(1, min(max(least, s.LossMargin()+2), input.MaxRedundancy))
}

// Jitter returns the measured jitter of the inputs' arrival (the mean
// deviation of their arrival offset), 0 before the first report.
func (s *Sync) Jitter() time.Duration {
	if s.fb.n == 0 {
		return 0
	}
	return s.fb.dev
}

// targetMargin is how early the inputs aim to arrive.
func (s *Sync) targetMargin() time.Duration {
	m := s.cfg.Safety + time.Duration(s.cfg.JitterMultiple)*s.fb.dev + time.Duration(s.LossMargin())*s.step + s.fb.gap
	// The client never simulates the server's present or earlier: its
	// newest tick at least one ahead of the server's, with the uplink
	// estimated as half the round trip.
	return max(m, time.Duration(s.cfg.InputDelay+1)*s.step-s.rtt/2)
}

// Margin returns the inputs' expected arrival margin now: how long before
// the server simulates its tick the next input message should arrive
// (the mean; the target keeps JitterMultiple jitters and the loss margin
// of it beyond Safety). False before the reports steer.
func (s *Sync) Margin() (time.Duration, bool) {
	if !s.Steering() || !s.fb.hasPos {
		return 0, false
	}
	// The next message goes when the client steps, lam less the time into
	// the step it usually is then, later by the pending wait (or earlier
	// by the pending catch-up).
	return s.fb.lam - s.fb.sinceAvg + time.Duration(s.pending)*s.step + s.fb.mu, true
}

// feedbackError is the error of the inputs' expected arrival margin over
// its target: positive when they would arrive too early (the client too
// far ahead).
func (s *Sync) feedbackError() time.Duration {
	m, _ := s.Margin()
	return m - s.targetMargin()
}
