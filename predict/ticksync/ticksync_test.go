package ticksync_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rewindgo/rewind/predict/ticksync"
	"github.com/rewindgo/rewind/tick"
)

const step60 = time.Second / 60

// syncSim is a server clock and a client clock in virtual real time: the
// server simulates tick S at S*step and sends it at once; the packet
// arrives oneway ± jitter later (uniform, seeded). The client renders a
// frame every 1/60 s of real time, its clock running at drift/1000 of real
// time, observes the newest server tick it has, then runs the steps its
// tick.Clock and the Sync give.
type syncSim struct {
	t        *testing.T
	oneway   time.Duration
	jitter   time.Duration
	drift    int64 // client clock speed, thousandths of real time
	serverAt func(real time.Duration) int64
	sync     *ticksync.Sync
	clock    *tick.Clock
	rng      *rand.Rand
	client   tick.Tick
	now      time.Duration // real time
	sent     int64         // next server tick to send
	inflight []pkt
	newest   int64
	inputs   int // inputs sent
	late     int // inputs that reached the server at or after their tick
}

type pkt struct {
	s  int64
	at time.Duration
}

func newSyncSim(t *testing.T, cfg ticksync.Config, oneway, jitter time.Duration, drift int64, start int64, seed uint64) *syncSim {
	c, _ := tick.NewClock(60)
	return &syncSim{
		t: t, oneway: oneway, jitter: jitter, drift: drift,
		serverAt: func(real time.Duration) int64 { return int64(real / step60) },
		sync:     ticksync.New(cfg), clock: c, rng: rand.New(rand.NewPCG(seed, 1)),
		client: tick.Tick(start), newest: -1,
	}
}

func (m *syncSim) draw() time.Duration {
	if m.jitter == 0 {
		return m.oneway
	}
	return m.oneway + time.Duration(m.rng.Int64N(int64(2*m.jitter+1))) - m.jitter
}

// lead is the client's true lead over the server's present, in ticks.
func (m *syncSim) lead() float64 {
	server := float64(m.serverAt(m.now)) + float64(m.now%step60)/float64(step60)
	return float64(int64(m.client)) + m.clock.Alpha() - server
}

// expected is the true lead the target corresponds to: the observed lead
// minus the one-way delay the observation is old.
func (m *syncSim) expected() float64 {
	l := m.sync.Lead(2*m.oneway, m.jitter/2)
	return float64(l-m.oneway) / float64(step60)
}

// frame advances real time by one frame and runs the client's frame.
func (m *syncSim) frame() {
	m.now += step60
	for cur := m.serverAt(m.now); m.sent <= cur; m.sent++ {
		m.inflight = append(m.inflight, pkt{m.sent, m.now + m.draw()})
	}
	kept := m.inflight[:0]
	got := false
	for _, p := range m.inflight {
		if p.at > m.now {
			kept = append(kept, p)
			continue
		}
		if p.s > m.newest {
			m.newest, got = p.s, true
		}
	}
	m.inflight = kept
	if got {
		since := time.Duration(m.clock.Alpha() * float64(step60))
		m.sync.Observe(ticksync.Sample{Server: tick.Tick(m.newest), Client: m.client, Since: since,
			RTT: 2 * m.oneway, Jitter: m.jitter / 2})
	}
	due := m.clock.Advance(time.Duration(int64(step60) * m.drift / 1000))
	m.clock.SetRate(m.sync.Rate())
	run := m.sync.Steps(due)
	if run < 0 {
		m.t.Fatalf("Steps returned %d", run)
	}
	for range run {
		m.client++
		// The input for this tick (with the input delay) travels to the
		// server; it is late if the server has begun that tick.
		in := int64(m.sync.InputTick(m.client))
		m.inputs++
		if m.serverAt(m.now+m.draw()) >= in {
			m.late++
		}
	}
}

// run runs n frames, checking from frame settle on that the lead stays
// within tol of the target; it returns the largest deviation seen.
func (m *syncSim) run(n, settle int, tol float64) float64 {
	worst := 0.0
	for i := range n {
		m.frame()
		if i < settle {
			continue
		}
		d := m.lead() - m.expected()
		worst = max(worst, d, -d)
		if d > tol || d < -tol {
			m.t.Fatalf("frame %d: lead %.2f, want %.2f ± %.1f (rate %d)", i, m.lead(), m.expected(), tol, m.sync.Rate())
		}
	}
	return worst
}

func TestTickSyncLeadFormula(t *testing.T) {
	s := ticksync.New(ticksync.Config{})
	// RTT 100 ms + 4*5 ms + one tick + 2 ticks of loss margin (no loss
	// measured yet: 10% assumed).
	if got := s.LossMargin(); got != 2 {
		t.Fatalf("LossMargin before any report = %d, want 2", got)
	}
	if got, want := s.Lead(100*time.Millisecond, 5*time.Millisecond), 120*time.Millisecond+3*step60; got != want {
		t.Fatalf("Lead = %v, want %v", got, want)
	}
	d := ticksync.New(ticksync.Config{InputDelay: 3})
	if got, want := d.Lead(100*time.Millisecond, 5*time.Millisecond), 120*time.Millisecond+3*step60-3*step60; got != want {
		t.Fatalf("Lead with input delay 3 = %v, want %v", got, want)
	}
	// The floor: RTT/2 + one tick, whatever the input delay.
	big := ticksync.New(ticksync.Config{InputDelay: 20})
	if got, want := big.Lead(100*time.Millisecond, 0), 50*time.Millisecond+step60; got != want {
		t.Fatalf("floored Lead = %v, want %v", got, want)
	}
	if got := big.InputTick(100); got != 120 {
		t.Fatalf("InputTick(100) = %d, want 120", got)
	}
	// Start: server tick + ceil(lead in ticks).
	if got := s.Start(1000, 100*time.Millisecond, 5*time.Millisecond); got != 1000+11 {
		t.Fatalf("Start = %d, want 1011", got)
	}
}

// A client started a few ticks off converges by slewing alone (no snap).
func TestTickSyncConvergesBySlewing(t *testing.T) {
	for _, off := range []int64{-6, 6} {
		m := newSyncSim(t, ticksync.Config{}, 40*time.Millisecond, 0, 1000, 0, 1)
		m.now, m.sent = 20*step60, 20
		m.sync.Start(20, 80*time.Millisecond, 0)
		// The client starts off ticks away from the target lead (3.4).
		m.client = tick.Tick(23 + off)
		start := m.lead() - m.expected()
		worst := m.run(600, 90, 1)
		if st := m.sync.Stats(); st.SnapsAhead+st.SnapsBack != 0 {
			t.Fatalf("off %d: snapped: %+v", off, st)
		}
		t.Logf("started %+.1f ticks off: within 1 tick after 90 ticks (worst %.2f), rate %d", start, worst, m.sync.Rate())
	}
}

// A client 30 ticks off snaps (waits or catches up), then holds within 2
// ticks under jitter, and its tick never goes backwards.
func TestTickSyncSnapsFrom30Off(t *testing.T) {
	for _, off := range []int64{-30, 30} {
		m := newSyncSim(t, ticksync.Config{}, 50*time.Millisecond, 10*time.Millisecond, 1000, 0, 2)
		m.client = tick.Tick(int64(m.sync.Start(0, 100*time.Millisecond, 5*time.Millisecond)) + off)
		prev := m.client
		for range 60 {
			m.frame()
			if m.client.Before(prev) {
				t.Fatalf("off %d: tick went back from %d to %d", off, prev, m.client)
			}
			prev = m.client
		}
		worst := m.run(1200, 0, 2)
		st := m.sync.Stats()
		if off > 0 && st.SnapsAhead != 1 || off < 0 && st.SnapsBack != 1 || st.SnapsAhead+st.SnapsBack != 1 {
			t.Fatalf("off %d: stats %+v, want one snap", off, st)
		}
		t.Logf("off %+d: worst error %.2f ticks after 60 frames, %+v", off, worst, st)
	}
}

// Under 20 ms jitter at 60 ms RTT the lead holds within 2 ticks without a
// snap and under 1% of inputs reach the server late.
func TestTickSyncStableUnderJitter(t *testing.T) {
	m := newSyncSim(t, ticksync.Config{}, 30*time.Millisecond, 20*time.Millisecond, 1000, 0, 3)
	m.client = m.sync.Start(0, 60*time.Millisecond, 10*time.Millisecond)
	minRate, maxRate := uint32(1000), uint32(1000)
	worst := 0.0
	for i := range 3000 {
		m.frame()
		minRate, maxRate = min(minRate, m.sync.Rate()), max(maxRate, m.sync.Rate())
		if i >= 120 {
			d := m.lead() - m.expected()
			worst = max(worst, d, -d)
		}
	}
	if worst > 2 {
		t.Fatalf("lead strayed %.2f ticks from the target", worst)
	}
	if st := m.sync.Stats(); st.SnapsAhead+st.SnapsBack != 0 {
		t.Fatalf("snapped under jitter: %+v", st)
	}
	if m.late*100 >= m.inputs {
		t.Fatalf("%d of %d inputs late", m.late, m.inputs)
	}
	t.Logf("worst %.2f ticks, rate %d..%d, late inputs %d/%d", worst, minRate, maxRate, m.late, m.inputs)
}

// A server that jumps 40 ticks (it skipped time) or stalls 40 ticks (a
// hitch) makes the client snap after SnapConfirm samples, then hold; the
// client's tick never goes backwards: a snap back is a wait.
func TestTickSyncSnapsAfterJump(t *testing.T) {
	for _, jump := range []int64{40, -40} {
		m := newSyncSim(t, ticksync.Config{}, 40*time.Millisecond, 5*time.Millisecond, 1000, 0, 4)
		m.client = m.sync.Start(0, 80*time.Millisecond, 2500*time.Microsecond)
		m.run(300, 120, 2)
		at := m.now
		base := m.serverAt
		m.serverAt = func(real time.Duration) int64 {
			s := base(real)
			if real > at {
				s = max(s+jump, base(at))
			}
			return s
		}
		if jump > 0 {
			m.sent = m.serverAt(m.now) + 1 // the skipped ticks are never sent
		}
		prev, waited := m.client, 0
		for range 120 {
			m.frame()
			if m.client.Before(prev) {
				t.Fatalf("jump %d: tick went back from %d to %d", jump, prev, m.client)
			}
			if m.client == prev {
				waited++
			}
			prev = m.client
		}
		m.run(600, 0, 2)
		st := m.sync.Stats()
		if jump > 0 && st.SnapsBack != 1 || jump < 0 && st.SnapsAhead != 1 {
			t.Fatalf("jump %d: %+v, want one snap", jump, st)
		}
		if jump < 0 && waited < 30 {
			t.Fatalf("jump %d: waited %d frames, want about 40", jump, waited)
		}
		t.Logf("jump %+d: %+v, frames without a step %d", jump, st, waited)
	}
}

// A client whose clock runs 5% fast (or slow) is held in step by the rate
// factor, without a snap.
func TestTickSyncHoldsFastClock(t *testing.T) {
	for _, drift := range []int64{1050, 950} {
		m := newSyncSim(t, ticksync.Config{}, 40*time.Millisecond, 5*time.Millisecond, drift, 0, 5)
		m.client = m.sync.Start(0, 80*time.Millisecond, 2500*time.Microsecond)
		worst := m.run(3600, 60, 2)
		if st := m.sync.Stats(); st.SnapsAhead+st.SnapsBack != 0 {
			t.Fatalf("drift %d: snapped: %+v", drift, st)
		}
		// Holding the clock takes a rate near its drift.
		if r := int64(m.sync.Rate()); r < drift-20 || r > drift+20 {
			t.Fatalf("drift %d: rate %d, want about %d", drift, r, drift)
		}
		t.Logf("drift %d: worst %.2f ticks over 3600 frames, rate %d, error %v", drift, worst, m.sync.Rate(), m.sync.Error())
	}
}

// The first sample of a Sync not started snaps at once: the client
// catches up MaxCatchUp extra steps per frame until it has the lead.
func TestTickSyncFirstSampleSnaps(t *testing.T) {
	s := ticksync.New(ticksync.Config{})
	s.Observe(ticksync.Sample{Server: 100, Client: 0, RTT: 100 * time.Millisecond})
	// Lead 100 ms + one tick + 2 of loss margin = 9 ticks: the client
	// must reach 109.
	if p := s.Pending(); p != 109 {
		t.Fatalf("pending %d, want 109", p)
	}
	total := 0
	for range 14 {
		total += s.Steps(1)
	}
	if total != 14+109 || s.Pending() != 0 {
		t.Fatalf("14 frames ran %d steps, pending %d; want 123, 0", total, s.Pending())
	}
	if st := s.Stats(); st.SnapsBack != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// With an input delay the client runs that many ticks less ahead, and its
// inputs still arrive in time.
func TestTickSyncInputDelay(t *testing.T) {
	m := newSyncSim(t, ticksync.Config{InputDelay: 2}, 45*time.Millisecond, 0, 1000, 0, 6)
	m.client = m.sync.Start(0, 90*time.Millisecond, 0)
	m.run(600, 60, 1)
	if m.late != 0 {
		t.Fatalf("%d of %d inputs late", m.late, m.inputs)
	}
	ref := ticksync.New(ticksync.Config{})
	if d := ref.Lead(100*time.Millisecond, 0) - m.sync.Lead(100*time.Millisecond, 0); d != 2*step60 {
		t.Fatalf("input delay 2 lowers the lead by %v, want 2 ticks", d)
	}
}

func TestTickSyncIgnoresStale(t *testing.T) {
	s := ticksync.New(ticksync.Config{})
	s.Start(100, 0, 0)
	s.Observe(ticksync.Sample{Server: 100, Client: 103})
	s.Observe(ticksync.Sample{Server: 99, Client: 103})
	if st := s.Stats(); st.Stale != 2 || st.Samples != 0 {
		t.Fatalf("stats %+v, want 2 stale", st)
	}
}

func TestRTTEstimate(t *testing.T) {
	var r ticksync.RTTEstimate
	r.Add(100 * time.Millisecond)
	if r.RTT != 100*time.Millisecond || r.Jitter != 50*time.Millisecond {
		t.Fatalf("first sample: %+v", r)
	}
	for range 200 {
		r.Add(80 * time.Millisecond)
		r.Add(120 * time.Millisecond)
	}
	if r.RTT < 95*time.Millisecond || r.RTT > 105*time.Millisecond || r.Jitter < 15*time.Millisecond || r.Jitter > 25*time.Millisecond {
		t.Fatalf("alternating 80/120 ms: %+v, want RTT about 100 ms, jitter about 20 ms", r)
	}
}

func BenchmarkTickSync(b *testing.B) {
	s := ticksync.New(ticksync.Config{})
	s.Start(0, 80*time.Millisecond, 5*time.Millisecond)
	b.ReportAllocs()
	var c tick.Tick = 8
	for i := range b.N {
		s.Observe(ticksync.Sample{Server: tick.Tick(i + 1), Client: c, RTT: 80 * time.Millisecond, Jitter: 5 * time.Millisecond})
		c = c.Add(int32(s.Steps(1)))
		_ = s.Rate()
	}
}

func ExampleSync() {
	sync := ticksync.New(ticksync.Config{TickRate: 60, InputDelay: 1})
	clock, _ := tick.NewClock(60)
	var rtt ticksync.RTTEstimate // from the connection's round-trip samples
	for _, ms := range []time.Duration{100, 96, 104, 100, 98, 102, 100} {
		rtt.Add(ms * time.Millisecond)
	}
	fmt.Println("rtt", rtt.RTT.Round(time.Millisecond), "jitter", rtt.Jitter.Round(time.Millisecond))

	// The first server tick received: start the timeline there.
	now := sync.Start(500, rtt.RTT, rtt.Jitter)
	fmt.Println("start at", now, "input for", sync.InputTick(now))

	// Each frame: observe the newest server tick, set the clock's rate,
	// then simulate the steps Steps allows.
	sync.Observe(ticksync.Sample{Server: 501, Client: now, RTT: rtt.RTT, Jitter: rtt.Jitter})
	clock.SetRate(sync.Rate())
	for range sync.Steps(clock.Advance(20 * time.Millisecond)) {
		now++ // simulate tick now, send the input for sync.InputTick(now)
	}
	fmt.Println("now", now, "rate", sync.Rate())
	// Output:
	// rtt 100ms jitter 10ms
	// start at 511 input for 512
	// now 512 rate 998
}

// Received moves with the client's clock: under 20 ms jitter it advances
// about one tick per frame and stays near the newest tick received, which
// itself advances by 0 to several ticks per frame (within 3 ticks: the
// ±1.2 ticks of jitter, and the newest is the max of those arrived).
func TestTickSyncReceivedIsSmooth(t *testing.T) {
	m := newSyncSim(t, ticksync.Config{}, 30*time.Millisecond, 20*time.Millisecond, 1000, 0, 7)
	m.client = m.sync.Start(0, 60*time.Millisecond, 10*time.Millisecond)
	est := func() float64 {
		tk, frac := m.sync.Received(m.client, time.Duration(m.clock.Alpha()*float64(step60)))
		return float64(int64(tk)) + frac
	}
	for range 120 {
		m.frame()
	}
	prev, prevNewest := est(), m.newest
	minStep, maxStep, maxOff := 10.0, 0.0, 0.0
	var minNew, maxNew int64 = 10, 0
	for range 1200 {
		m.frame()
		e := est()
		minStep, maxStep = min(minStep, e-prev), max(maxStep, e-prev)
		minNew, maxNew = min(minNew, m.newest-prevNewest), max(maxNew, m.newest-prevNewest)
		maxOff = max(maxOff, e-float64(m.newest), float64(m.newest)-e)
		prev, prevNewest = e, m.newest
	}
	if minStep < 0.75 || maxStep > 1.25 || maxOff > 3 {
		t.Fatalf("estimate advanced %.2f..%.2f ticks per frame, %.2f ticks from the newest received at worst", minStep, maxStep, maxOff)
	}
	t.Logf("estimate advanced %.2f..%.2f ticks per frame (newest received: %d..%d), within %.2f ticks of it", minStep, maxStep, minNew, maxNew, maxOff)
}
