package ticksync

import (
	"time"

	"github.com/rewindgo/rewind/tick"
)

// Config configures a Sync. The zero value uses every default.
type Config struct {
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

func (c Config) withDefaults() Config {
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

// Sample is one observation for a Sync: the newest server tick
// received, when it arrived on the client's timeline, and the
// connection's current round-trip estimates.
type Sample struct {
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

// Stats counts what a Sync did.
type Stats struct {
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
	// input, and inputs that came after their tick (input.Stats).
	Missing, Late uint64
}

// Sync keeps the client's simulation the right number of ticks ahead
// of the server, so that its input for tick F reaches the server before
// the server simulates F. See the package documentation. It reads no clock: every time is passed in. A
// Sync is not safe for concurrent use.
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
type Sync struct {
	cfg     Config
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
	stats   Stats
}

// New returns a Sync with cfg (defaults filled in).
func New(cfg Config) *Sync {
	cfg = cfg.withDefaults()
	return &Sync{cfg: cfg, step: time.Second / time.Duration(cfg.TickRate)}
}

// Config returns the configuration in use, with defaults filled in.
func (s *Sync) Config() Config { return s.cfg }

// Lead returns the target lead of the client over a server tick that has
// just arrived, used until input reports steer: RTT (half for the value
// to come, half for the input to go) + JitterMultiple*jitter + Safety + r
// ticks for loss (see LateTarget; r from the loss measured so far, 2
// before any) - InputDelay ticks, and at least RTT/2 plus one tick (the
// client never simulates the server's present or earlier, lightyear
// #1402).
func (s *Sync) Lead(rtt, jitter time.Duration) time.Duration {
	rtt, jitter = max(rtt, 0), max(jitter, 0)
	lead := rtt + time.Duration(s.cfg.JitterMultiple)*jitter + s.cfg.Safety +
		time.Duration(s.LossMargin()-s.cfg.InputDelay)*s.step
	return max(lead, rtt/2+s.step)
}

// Start returns the tick a client that has not started yet should start
// simulating at, given the newest server tick it has received, and marks
// the Sync synchronised.
func (s *Sync) Start(server tick.Tick, rtt, jitter time.Duration) tick.Tick {
	s.synced, s.last, s.err, s.far, s.pending = true, server, 0, 0, 0
	s.rtt = max(rtt, 0)
	s.target = s.Lead(rtt, jitter)
	n := ceilDiv(s.target, s.step)
	s.down = time.Duration(n) * s.step
	return server.Add(int32(n))
}

// Observe adds a sample of the server ticks' arrival. A sample whose
// server tick is not newer than one already seen is ignored (counted in
// Stats().Stale). The first sample of a Sync not Started snaps at
// once. Once input reports steer (Steering), samples only feed Received.
func (s *Sync) Observe(smp Sample) {
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
func (s *Sync) snap(e time.Duration) {
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

// PresentLead estimates the lead of client tick client over the server's
// present, the newest tick it has simulated, at time at (the clock of
// Sent): from the input reports (the uplink taken as half the round
// trip). Before they steer it is the smoothed lead over the newest server
// tick received less the downlink (half the round trip), whatever client
// and at. Negative means the client is behind the server.
func (s *Sync) PresentLead(client tick.Tick, at time.Duration) time.Duration {
	if !s.Steering() {
		return s.down - time.Duration(s.pending)*s.step - s.rtt/2
	}
	return s.ellOf(client, at) - s.fb.sinceAvg + s.fb.mu + s.rtt/2 + s.step
}

// Rate returns the rate factor in thousandths for tick.Clock.SetRate:
// 1000 + Gain per tick of error, capped at ±MaxSlew. A client too far
// ahead gets a rate above 1000 (longer steps, it slows down); one behind
// a rate below 1000.
func (s *Sync) Rate() uint32 {
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
func (s *Sync) Steps(due int) int {
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
// than in jumps as packets arrive, so it suits interp.Buffer.ShowAt; the
// newest tick received jumps by 0 to several ticks per frame under jitter.
func (s *Sync) Received(client tick.Tick, since time.Duration) (tick.Tick, float64) {
	back := s.down - time.Duration(s.pending)*s.step - since
	n := ceilDiv(back, s.step)
	return client.Add(int32(-n)), float64(time.Duration(n)*s.step-back) / float64(s.step)
}

// Pending returns the snap correction still to be applied by Steps, in
// ticks: positive to catch up, negative to wait.
func (s *Sync) Pending() int { return s.pending }

// Error returns the error of the lead: positive when the client is
// further ahead than the target (from the input reports once they steer,
// else smoothed from the server ticks' arrival).
func (s *Sync) Error() time.Duration { return s.err }

// Synced reports whether the Sync has been started or has had a
// sample.
func (s *Sync) Synced() bool { return s.synced }

// InputTick returns the tick the input sampled while simulating client
// tick t is for: t + InputDelay.
func (s *Sync) InputTick(t tick.Tick) tick.Tick { return t.Add(int32(s.cfg.InputDelay)) }

// Stats returns the counters.
func (s *Sync) Stats() Stats { return s.stats }

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
