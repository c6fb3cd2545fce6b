package interp

import (
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// Config configures an Buffer buffer. The zero value uses
// every default.
type Config struct {
	// TickRate is the simulation's tick rate in Hz. Default 60.
	TickRate uint32
	// Capacity is the number of values kept per entity; the oldest is
	// dropped beyond it. It must cover the delay: at least Delay divided
	// by the send interval, plus two. Default 16.
	Capacity int
	// SendInterval is the time between two server sends. Default one
	// tick.
	SendInterval time.Duration
	// MinDelay is the smallest interpolation delay. Default 5 ms
	// (lightyear's min_delay).
	MinDelay time.Duration
	// SendIntervalRatio is the delay in send intervals, in thousandths.
	// Default 1700 (lightyear's send_interval_ratio of 1.7): a value is
	// shown once the next one is due, with 0.7 of an interval to spare.
	SendIntervalRatio int64
	// JitterMultiple times the jitter is added to the delay. Default 2.
	JitterMultiple int64
}

func (c Config) withDefaults() Config {
	if c.TickRate == 0 {
		c.TickRate = tick.DefaultHz
	}
	if c.Capacity <= 0 {
		c.Capacity = 16
	}
	if c.SendInterval <= 0 {
		c.SendInterval = time.Second / time.Duration(c.TickRate)
	}
	if c.MinDelay <= 0 {
		c.MinDelay = 5 * time.Millisecond
	}
	if c.SendIntervalRatio <= 0 {
		c.SendIntervalRatio = 1700
	}
	if c.JitterMultiple <= 0 {
		c.JitterMultiple = 2
	}
	return c
}

// Delay returns the interpolation delay for the measured jitter:
// max(MinDelay, SendInterval*SendIntervalRatio/1000) + JitterMultiple*jitter.
// With the defaults at 60 Hz and no jitter it is 28.3 ms (1.7 ticks).
func (c Config) Delay(jitter time.Duration) time.Duration {
	c = c.withDefaults()
	d := max(c.MinDelay, c.SendInterval*time.Duration(c.SendIntervalRatio)/1000)
	return d + time.Duration(c.JitterMultiple)*max(jitter, 0)
}

// Lerper is a type that interpolates itself: v.Lerp(to, f) is v at f = 0
// and to at f = 1.
type Lerper[T any] interface {
	Lerp(to T, f float64) T
}

// LerpMethod returns the interpolation function of a Lerper type, for
// NewBuffer.
func LerpMethod[T Lerper[T]]() func(a, b T, f float64) T {
	return func(a, b T, f float64) T { return a.Lerp(b, f) }
}

// Stats counts what an Buffer buffer did.
type Stats struct {
	Late    uint64 // values that arrived after a newer one of the same entity, inserted in place
	Dropped uint64 // values older than every value kept in a full buffer, ignored
	Holds   uint64 // At calls past an entity's newest value, which held it
}

type interpEntry[T any] struct {
	t tick.Tick
	v T
}

// Buffer holds authoritative values of one type for the entities the
// client does not predict, by tick, and shows them interpolated at a time
// that trails the server by the interpolation delay. See the package
// documentation. A Buffer is not safe for
// concurrent use; it reads no clock.
type Buffer[T any] struct {
	cfg      Config
	step     time.Duration
	lerp     func(a, b T, f float64) T
	slots    map[ecs.Entity]int32
	bufs     [][]interpEntry[T] // by slot, each sorted by tick, capacity cfg.Capacity
	ents     []ecs.Entity       // by slot: the entity whose values bufs holds
	free     []int32
	latest   tick.Tick
	complete tick.Tick
	seen     bool
	hasDone  bool
	stats    Stats
}

// NewBuffer returns an empty buffer; lerp interpolates between two
// values (f in [0, 1]; see LerpMethod). Rendering is not simulation, so
// lerp may use floats.
func NewBuffer[T any](cfg Config, lerp func(a, b T, f float64) T) *Buffer[T] {
	cfg = cfg.withDefaults()
	return &Buffer[T]{cfg: cfg, step: time.Second / time.Duration(cfg.TickRate), lerp: lerp,
		slots: make(map[ecs.Entity]int32)}
}

// Config returns the configuration in use, with defaults filled in.
func (b *Buffer[T]) Config() Config { return b.cfg }

// Complete records that every value of the server's tick t has arrived
// (replicate's TickComplete): an entity without a value at t was
// unchanged. A value that arrives after a gap of complete ticks is
// interpolated from the previous value held through the last of them, not
// across the whole gap: an entity at rest that starts moving moves from
// the tick it started.
func (b *Buffer[T]) Complete(t tick.Tick) {
	if !b.hasDone || t.After(b.complete) {
		b.complete, b.hasDone = t, true
	}
	b.bump(t)
}

func (b *Buffer[T]) bump(t tick.Tick) {
	if !b.seen || t.After(b.latest) {
		b.latest, b.seen = t, true
	}
}

// Push stores the authoritative value v of entity e at server tick t. A
// value for a tick already held replaces it; a late value is inserted in
// tick order (Stats().Late); a value older than all those kept in a full
// buffer is ignored (Stats().Dropped); otherwise a full buffer drops its
// oldest value. Steady-state pushes allocate nothing.
func (b *Buffer[T]) Push(e ecs.Entity, t tick.Tick, v T) {
	s, ok := b.slots[e]
	if !ok {
		if n := len(b.free); n > 0 {
			s, b.free = b.free[n-1], b.free[:n-1]
		} else {
			s = int32(len(b.bufs))
			b.bufs = append(b.bufs, make([]interpEntry[T], 0, b.cfg.Capacity))
			b.ents = append(b.ents, 0)
		}
		b.slots[e] = s
		b.ents[s] = e
	}
	buf := b.bufs[s]
	if n := len(buf); n > 0 && buf[n-1].t.Before(t) && b.hasDone {
		// Unchanged through the complete ticks between the newest value
		// and t: hold it up to the last of them.
		if k := tick.Min(b.complete, t.Add(-1)); k.After(buf[n-1].t) {
			buf = insertEntry(buf, interpEntry[T]{k, buf[n-1].v}, &b.stats)
		}
	}
	b.bufs[s] = insertEntry(buf, interpEntry[T]{t, v}, &b.stats)
	b.bump(t)
}

// insertEntry inserts x into buf in tick order, within buf's capacity.
func insertEntry[T any](buf []interpEntry[T], x interpEntry[T], st *Stats) []interpEntry[T] {
	i := len(buf) // insert before index i
	for i > 0 && buf[i-1].t.After(x.t) {
		i--
	}
	if i > 0 && buf[i-1].t == x.t {
		buf[i-1].v = x.v
		return buf
	}
	if len(buf) == cap(buf) && i == 0 {
		st.Dropped++
		return buf
	}
	if i < len(buf) {
		st.Late++
	}
	if len(buf) == cap(buf) {
		copy(buf, buf[1:i])
		buf[i-1] = x
		return buf
	}
	buf = append(buf, x)
	copy(buf[i+1:], buf[i:len(buf)-1])
	buf[i] = x
	return buf
}

// Remove forgets entity e (it was despawned or is now predicted); its
// buffer is reused.
func (b *Buffer[T]) Remove(e ecs.Entity) {
	s, ok := b.slots[e]
	if !ok {
		return
	}
	delete(b.slots, e)
	b.bufs[s] = b.bufs[s][:0]
	b.free = append(b.free, s)
}

// Len returns the number of values kept for e.
func (b *Buffer[T]) Len(e ecs.Entity) int {
	if s, ok := b.slots[e]; ok {
		return len(b.bufs[s])
	}
	return 0
}

// Latest returns the newest server tick pushed or completed; false before
// any.
func (b *Buffer[T]) Latest() (tick.Tick, bool) { return b.latest, b.seen }

// ShowTime returns the time to show, as a tick and a fraction in [0, 1):
// Latest() + alpha - delay, alpha being how far the client's clock is into
// its next step (tick.Clock.Alpha) and delay typically Config().Delay of
// the measured jitter. Latest() moves in jumps as packets arrive; ShowAt
// with ticksync.Sync.Received moves with the client's clock.
func (b *Buffer[T]) ShowTime(alpha float64, delay time.Duration) (tick.Tick, float64) {
	return b.ShowAt(b.latest, alpha, delay)
}

// ShowAt returns the time to show for a newest server tick t + frac:
// t + frac - delay, as a tick and a fraction in [0, 1).
func (b *Buffer[T]) ShowAt(t tick.Tick, frac float64, delay time.Duration) (tick.Tick, float64) {
	pos := frac - float64(delay)/float64(b.step)
	whole := int32(pos)
	if float64(whole) > pos {
		whole--
	}
	return t.Add(whole), pos - float64(whole)
}

// At returns e's value at tick t plus frac of a tick (frac in [0, 1)):
// the interpolation between the two values around that time, by tick
// distance, so a gap of missing ticks is bridged. Past the newest value it
// holds the newest (no extrapolation: the next value is late, and an
// extrapolation would overshoot a stop or a turn and then jump back);
// before the oldest it holds the oldest. ok is false if e has no value.
func (b *Buffer[T]) At(e ecs.Entity, t tick.Tick, frac float64) (v T, ok bool) {
	s, ok := b.slots[e]
	if !ok || len(b.bufs[s]) == 0 {
		return v, false
	}
	buf := b.bufs[s]
	i := len(buf) - 1 // last value at or before t
	for i >= 0 && buf[i].t.After(t) {
		i--
	}
	switch {
	case i < 0:
		return buf[0].v, true
	case i == len(buf)-1:
		if buf[i].t != t || frac > 0 {
			b.stats.Holds++
		}
		return buf[i].v, true
	case buf[i].t == t && frac <= 0:
		return buf[i].v, true
	}
	a, c := buf[i], buf[i+1]
	f := (float64(t.Sub(a.t)) + min(max(frac, 0), 1)) / float64(c.t.Sub(a.t))
	return b.lerp(a.v, c.v, f), true
}

// Slots returns how many entity slots the buffer has: with HeldAt, a walk
// over every entity's value at a tick that allocates nothing (the
// checksum of a split type).
func (b *Buffer[T]) Slots() int { return len(b.bufs) }

// HeldAt returns the entity of slot s (0 <= s < Slots()) and its value
// held at tick t, its newest value at or before t; false when the slot
// is free or every value it keeps is newer.
func (b *Buffer[T]) HeldAt(s int, t tick.Tick) (ecs.Entity, *T, bool) {
	v, ok := b.held(s, t)
	if !ok {
		return 0, nil, false
	}
	return b.ents[s], v, true
}

// held returns the value of slot s's entity held at tick t: its newest
// value at or before t; false when every value kept is newer (or none).
func (b *Buffer[T]) held(s int, t tick.Tick) (*T, bool) {
	buf := b.bufs[s]
	i := len(buf) - 1
	for i >= 0 && buf[i].t.After(t) {
		i--
	}
	if i < 0 {
		return nil, false
	}
	return &buf[i].v, true
}

// Stats returns the counters.
func (b *Buffer[T]) Stats() Stats { return b.stats }
