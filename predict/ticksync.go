package predict

import (
	"time"

	"github.com/rewindgo/rewind/tick"
)

// SyncConfig configures a TickSync. The zero value uses every default.
type SyncConfig struct {
	// TickRate is the simulation's tick rate in Hz. Default 60
	// (tick.DefaultHz).
	TickRate uint32
	// JitterMultiple times the measured jitter is added to the lead as a
	// margin against late inputs. Default 4 (lightyear's jitter_multiple).
	// With input reports the jitter is the mean deviation of the inputs'
	// arrival margins; without, that of the server ticks' arrival.
	JitterMultiple int
	// Safety is a further fixed margin added to the lead: how early the
	// inputs aim to arrive beyond the jitter and loss margins. Default
	// one tick (lightyear's jitter_margin of 1.0 tick); negative means
	// none.
	Safety time.Duration
	// InputDelay is the number of ticks by which the client applies its
	// own input late: the input sampled while simulating tick F is for
	// tick F+InputDelay. It lowers the lead by as many ticks (fewer
	// mispredictions, more latency). Default 0; negative counts as 0.
	InputDelay int
	// LateTarget is the fraction of inputs the lead accepts to lose to
	// packet loss: the lead keeps r more ticks of margin, r the least
	// with loss^(r+1) <= LateTarget, so that an input whose first r
	// messages are lost still arrives in time through the next copy
	// (each message carries the previous ticks' inputs too). Default
	// 0.002: r = 1 below 4.5% loss, 2 up to 12.6%, 3 up to 21%.
	LateTarget float64
	// MinArrivals is how many input arrivals the reports must have
	// measured before they steer the lead. Default 8.
	MinArrivals int
	// SnapTicks is the error, in ticks, beyond which the client stops
	// slewing and snaps: SnapConfirm consecutive samples further off than
	// this trigger a snap. Default 10 (lightyear resyncs beyond 10 ticks).
	SnapTicks int
	// SnapConfirm is how many consecutive samples beyond SnapTicks make a
	// snap, so a single very late packet does not. Default 3.
	SnapConfirm int
	// Gain is the rate correction, in thousandths, per tick of error:
	// 50 slows the clock by 5% when the client is one tick too far
	// ahead. Default 50.
	Gain uint32
	// MaxSlew caps the rate correction, in thousandths. Default 100 (the
	// clock runs between 0.9 and 1.1 times its nominal step length).
	MaxSlew uint32
	// Smoothing is the divisor of the exponential average of the error
	// of samples of the server ticks' arrival (without input reports):
	// each sample moves the average by 1/Smoothing of the difference.
	// Default 8.
	Smoothing int
	// MaxCatchUp is the number of extra steps a snap forward adds to one
	// call of Steps. Default 8 (tick.DefaultMaxSteps).
	MaxCatchUp int
}

func (c SyncConfig) withDefaults() SyncConfig {
	if c.TickRate == 0 {
		c.TickRate = tick.DefaultHz
	}
	if c.JitterMultiple <= 0 {
		c.JitterMultiple = 4
	}
	step := time.Second / time.Duration(c.TickRate)
	switch {
	case c.Safety == 0:
		c.Safety = step
	case c.Safety < 0:
		c.Safety = 0
	}
	c.InputDelay = max(c.InputDelay, 0)
	if !(c.LateTarget > 0 && c.LateTarget < 1) {
		c.LateTarget = 0.002
	}
	if c.MinArrivals <= 0 {
		c.MinArrivals = 8
	}
	if c.SnapTicks <= 0 {
		c.SnapTicks = 10
	}
	if c.SnapConfirm <= 0 {
		c.SnapConfirm = 3
	}
	if c.Gain == 0 {
		c.Gain = 50
	}
	if c.MaxSlew == 0 {
		c.MaxSlew = 100
	}
	c.MaxSlew = min(c.MaxSlew, 900)
	if c.Smoothing <= 0 {
		c.Smoothing = 8
	}
	if c.MaxCatchUp <= 0 {
		c.MaxCatchUp = tick.DefaultMaxSteps
	}
	return c
}

// SyncSample is one observation for a TickSync: the newest server tick
// received, when it arrived on the client's timeline, and the
// connection's current round-trip estimates.
type SyncSample struct {
	// Server is the newest server tick received (the tick of its values).
	Server tick.Tick
	// Client is the client's newest simulated tick when it arrived, and
	// Since the time elapsed since that tick's step was due (for example
	// Clock.Alpha() times the step length; 0 if unknown).
	Client tick.Tick
	Since  time.Duration
	// RTT is the smoothed round-trip time and Jitter its variation (for
	// example RTTEstimate's).
	RTT, Jitter time.Duration
}

// SyncStats counts what a TickSync did.
type SyncStats struct {
	Samples    uint64 // samples used
	Stale      uint64 // samples ignored: server tick not newer than one seen
	SnapsAhead uint64 // snaps that made the client wait (it was too far ahead)
	SnapsBack  uint64 // snaps that made the client catch up (too far behind)
	// Reports counts the input reports used and StaleReports those
	// ignored (not newer than one used); Arrivals the input arrivals
	// they measured.
	Reports, StaleReports, Arrivals uint64
	// Sent counts the input messages noted (Sent); of those acknowledged
	// or given up by the reports, Lost were never received.
	Sent, Acked, Lost uint64
	// Missing and Late are the server's counters of this client's inputs
	// as of the newest report: ticks it simulated without the client's
	// input, and inputs that came after their tick (InputStats).
	Missing, Late uint64
}

// sentRing is how many input messages a TickSync remembers (by tick).
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

// feedback is the TickSync's account of its inputs' arrival at the
// server, from InputReports.
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

// TickSync keeps the client's simulation the right number of ticks ahead
// of the server, so that its input for tick F reaches the server before
// the server simulates F. See the package documentation, section "Tick
// synchronisation". It reads no clock: every time is passed in. A
// TickSync is not safe for concurrent use.
//
// It steers by two signals. The input reports (Sent, Report) say when
// each input message reached the server: from them it estimates the
// offset between its own clock and the server's ticks as the inputs see
// it (uplink delay included), the offset's jitter, and the loss of input
// messages, and keeps the inputs' arrival margin at the target: Safety +
// JitterMultiple x jitter + r ticks for loss (LateTarget). The estimate
// does not depend on the client's own lead, so a rate change or a snap
// is seen at once, with no round trip of delay (no swing). Until the
// reports have measured MinArrivals arrivals, and for a server that sends
// none, it steers by the arrival of server ticks (Observe): the lead over
// the newest server tick received is RTT + JitterMultiple x jitter +
// Safety + r ticks - InputDelay.
type TickSync struct {
	cfg     SyncConfig
	step    time.Duration
	synced  bool
	last    tick.Tick
	err     time.Duration // lead error: positive means too far ahead
	far     int           // consecutive samples beyond SnapTicks
	pending int           // snap correction still to apply, in ticks: + catch up, - wait
	target  time.Duration // the target lead over the newest server tick received
	down    time.Duration // smoothed lead over the newest server tick received
	rtt     time.Duration // the last sample's RTT
	fb      feedback
	stats   SyncStats
}

// NewTickSync returns a TickSync with cfg (defaults filled in).
func NewTickSync(cfg SyncConfig) *TickSync {
	cfg = cfg.withDefaults()
	return &TickSync{cfg: cfg, step: time.Second / time.Duration(cfg.TickRate)}
}

// Config returns the configuration in use, with defaults filled in.
func (s *TickSync) Config() SyncConfig { return s.cfg }

// Lead returns the target lead of the client over a server tick that has
// just arrived, used until input reports steer: RTT (half for the value
// to come, half for the input to go) + JitterMultiple*jitter + Safety + r
// ticks for loss (see LateTarget; r from the loss measured so far, 2
// before any) - InputDelay ticks, and at least RTT/2 plus one tick (the
// client never simulates the server's present or earlier, lightyear
// #1402).
func (s *TickSync) Lead(rtt, jitter time.Duration) time.Duration {
	rtt, jitter = max(rtt, 0), max(jitter, 0)
	lead := rtt + time.Duration(s.cfg.JitterMultiple)*jitter + s.cfg.Safety +
		time.Duration(s.LossMargin()-s.cfg.InputDelay)*s.step
	return max(lead, rtt/2+s.step)
}

// Start returns the tick a client that has not started yet should start
// simulating at, given the newest server tick it has received, and marks
// the TickSync synchronised.
func (s *TickSync) Start(server tick.Tick, rtt, jitter time.Duration) tick.Tick {
	s.synced, s.last, s.err, s.far, s.pending = true, server, 0, 0, 0
	s.rtt = max(rtt, 0)
	s.target = s.Lead(rtt, jitter)
	n := ceilDiv(s.target, s.step)
	s.down = time.Duration(n) * s.step
	return server.Add(int32(n))
}

// Observe adds a sample of the server ticks' arrival. A sample whose
// server tick is not newer than one already seen is ignored (counted in
// Stats().Stale). The first sample of a TickSync not Started snaps at
// once. Once input reports steer (Steering), samples only feed Received.
func (s *TickSync) Observe(smp SyncSample) {
	if s.synced && !smp.Server.After(s.last) {
		s.stats.Stale++
		return
	}
	s.stats.Samples++
	s.last = smp.Server
	s.rtt = max(smp.RTT, 0)
	s.target = s.Lead(smp.RTT, smp.Jitter)
	lead := time.Duration(smp.Client.Sub(smp.Server))*s.step + smp.Since
	// The lead once the snap still pending is applied.
	lead += time.Duration(s.pending) * s.step
	if !s.synced {
		s.down = lead
	} else {
		s.down += (lead - s.down) / 8
	}
	if s.Steering() {
		return
	}
	e := lead - s.target
	if !s.synced || e > time.Duration(s.cfg.SnapTicks)*s.step || e < -time.Duration(s.cfg.SnapTicks)*s.step {
		s.far++
		if s.synced && s.far < s.cfg.SnapConfirm {
			return
		}
		s.synced = true
		s.snap(e)
		s.err = 0
		return
	}
	s.far = 0
	s.err += (e - s.err) / time.Duration(s.cfg.Smoothing)
}

// snap schedules a correction of e, rounded to ticks.
func (s *TickSync) snap(e time.Duration) {
	n := roundDiv(e, s.step)
	s.pending -= n
	s.down -= time.Duration(n) * s.step
	if n > 0 {
		s.stats.SnapsAhead++
	} else if n < 0 {
		s.stats.SnapsBack++
	}
	s.far = 0
}

// Sent notes that the input message whose newest input is for tick t
// (InputBatch.Last) was sent at time at, on the caller's clock (any
// monotonic time base, the same for every call and for Position;
// ClientFrame uses the sum of the elapsed times of its frames), since
// being the time the client's clock was into its next step then
// (Clock.Alpha() times the step length). Reports about the message are
// matched to it.
func (s *TickSync) Sent(t tick.Tick, since, at time.Duration) {
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

// Position tells the TickSync where the client is at time at (the clock
// of Sent): its newest simulated tick, and the time since into its next
// step. Once the reports steer, the error (and Rate) follow from it: call
// it every frame, after the steps. Before the first Sent it does nothing.
func (s *TickSync) Position(client tick.Tick, since, at time.Duration) {
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
func (s *TickSync) ellOf(t tick.Tick, at time.Duration) time.Duration {
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
func (s *TickSync) Report(r *InputReport) {
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
func (s *TickSync) addArrival(y time.Duration) {
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
func (s *TickSync) resolve(upTo tick.Tick) {
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
func (s *TickSync) Steering() bool { return s.fb.n >= s.cfg.MinArrivals && s.fb.hasPos }

// Loss returns the fraction of the client's newest input messages (up to
// 256) that the reports say never reached the server, and how many that
// is of.
func (s *TickSync) Loss() (float64, int) {
	if s.fb.lossN == 0 {
		return 0, 0
	}
	return float64(s.fb.lossLost) / float64(s.fb.lossN), s.fb.lossN
}

// LossMargin returns r, the ticks of margin the lead keeps against lost
// input messages: the least r with loss^(r+1) <= LateTarget, from the
// loss measured (with a prior of 10% worth ten messages, so 2 before any
// report and at least 1 at no measured loss). At most MaxRedundancy-2.
func (s *TickSync) LossMargin() int {
	p := (float64(s.fb.lossLost) + 1) / (float64(s.fb.lossN) + 10)
	r, q := 0, p
	for q > s.cfg.LateTarget && r < MaxRedundancy-2 {
		r++
		q *= p
	}
	return r
}

// Redundancy returns how many inputs each input message should carry:
// at least least, and LossMargin()+2 (the copies the loss margin counts on,
// and one more), at most MaxRedundancy. ClientFrame sets its sender's
// redundancy with it, least being InputConfig.Redundancy.
func (s *TickSync) Redundancy(least int) int {
	return max(1, min(max(least, s.LossMargin()+2), MaxRedundancy))
}

// Jitter returns the measured jitter of the inputs' arrival (the mean
// deviation of their arrival offset), 0 before the first report.
func (s *TickSync) Jitter() time.Duration {
	if s.fb.n == 0 {
		return 0
	}
	return s.fb.dev
}

// targetMargin is how early the inputs aim to arrive.
func (s *TickSync) targetMargin() time.Duration {
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
func (s *TickSync) Margin() (time.Duration, bool) {
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
func (s *TickSync) feedbackError() time.Duration {
	m, _ := s.Margin()
	return m - s.targetMargin()
}

// PresentLead estimates the lead of client tick client over the server's
// present, the newest tick it has simulated, at time at (the clock of
// Sent): from the input reports (the uplink taken as half the round
// trip). Before they steer it is the smoothed lead over the newest server
// tick received less the downlink (half the round trip), whatever client
// and at. Negative means the client is behind the server.
func (s *TickSync) PresentLead(client tick.Tick, at time.Duration) time.Duration {
	if !s.Steering() {
		return s.down - time.Duration(s.pending)*s.step - s.rtt/2
	}
	return s.ellOf(client, at) - s.fb.sinceAvg + s.fb.mu + s.rtt/2 + s.step
}

// Rate returns the rate factor in thousandths for tick.Clock.SetRate:
// 1000 + Gain per tick of error, capped at ±MaxSlew. A client too far
// ahead gets a rate above 1000 (longer steps, it slows down); one behind
// a rate below 1000.
func (s *TickSync) Rate() uint32 {
	dev := int64(s.err) * int64(s.cfg.Gain) / int64(s.step)
	dev = min(max(dev, -int64(s.cfg.MaxSlew)), int64(s.cfg.MaxSlew))
	return uint32(1000 + dev)
}

// Steps turns the number of steps the clock says are due into the number
// to simulate now, applying a pending snap. A snap never moves the tick
// backwards: a client too far ahead waits (simulates fewer steps, none
// until the wait is over), because its inputs for the ticks it simulated
// are already sent; a client too far behind catches up by simulating up
// to MaxCatchUp extra steps per call, each an ordinary tick (its input is
// sent late and the server predicts it). A client further behind than
// its rollback window is better restarted at Start's tick (see Pending).
// A frame slower than a tick sends the inputs of its steps at once, the
// first late: the target margin keeps that lateness (see Position).
func (s *TickSync) Steps(due int) int {
	due = max(due, 0)
	switch {
	case s.pending > 0:
		n := min(s.pending, s.cfg.MaxCatchUp)
		s.pending -= n
		return due + n
	case s.pending < 0:
		n := min(-s.pending, due)
		s.pending += n
		return due - n
	}
	return due
}

// Received returns a smooth estimate of the newest server tick the client
// has received, as a tick and a fraction in [0, 1): the client's tick plus
// since (the time into its next step) minus its lead over the server
// ticks' arrival (smoothed). It advances with the client's clock rather
// than in jumps as packets arrive, so it suits Interpolated.ShowAt; the
// newest tick received jumps by 0 to several ticks per frame under jitter.
func (s *TickSync) Received(client tick.Tick, since time.Duration) (tick.Tick, float64) {
	back := s.down - time.Duration(s.pending)*s.step - since
	n := ceilDiv(back, s.step)
	return client.Add(int32(-n)), float64(time.Duration(n)*s.step-back) / float64(s.step)
}

// Pending returns the snap correction still to be applied by Steps, in
// ticks: positive to catch up, negative to wait.
func (s *TickSync) Pending() int { return s.pending }

// Error returns the error of the lead: positive when the client is
// further ahead than the target (from the input reports once they steer,
// else smoothed from the server ticks' arrival).
func (s *TickSync) Error() time.Duration { return s.err }

// Synced reports whether the TickSync has been started or has had a
// sample.
func (s *TickSync) Synced() bool { return s.synced }

// InputTick returns the tick the input sampled while simulating client
// tick t is for: t + InputDelay.
func (s *TickSync) InputTick(t tick.Tick) tick.Tick { return t.Add(int32(s.cfg.InputDelay)) }

// Stats returns the counters.
func (s *TickSync) Stats() SyncStats { return s.stats }

// RTTEstimate smooths round-trip samples the way TCP does (RFC 6298):
// RTT is an exponential average with gain 1/8, Jitter the average
// deviation with gain 1/4. The zero value is ready; the first sample sets
// RTT to it and Jitter to half of it.
type RTTEstimate struct {
	RTT, Jitter time.Duration
	n           uint64
}

// Add adds a round-trip sample; negative samples are ignored.
func (r *RTTEstimate) Add(sample time.Duration) {
	if sample < 0 {
		return
	}
	if r.n == 0 {
		r.RTT, r.Jitter = sample, sample/2
	} else {
		d := sample - r.RTT
		r.Jitter += (max(d, -d) - r.Jitter) / 4
		r.RTT += d / 8
	}
	r.n++
}

// ceilDiv returns ceil(a/b) for b > 0.
func ceilDiv(a, b time.Duration) int {
	q := a / b
	if a%b > 0 {
		q++
	}
	return int(q)
}

// roundDiv returns a/b rounded to the nearest integer, halves away from 0,
// for b > 0.
func roundDiv(a, b time.Duration) int {
	if a < 0 {
		return -int((-a + b/2) / b)
	}
	return int((a + b/2) / b)
}
