package effect

import "github.com/rewindgo/rewind/tick"

// Follower follows the rollbacks of a simulation: the owner of the
// rollbacks (predict.Timeline, rollback/runner.Runner) calls Rewind(from)
// when it is about to re-simulate the ticks from on, Resimulated(to) when
// it has re-simulated them up to to, and Confirm(to) when the ticks up to
// to can no longer be rolled back. Tracker is one.
type Follower interface {
	Rewind(from tick.Tick)
	Resimulated(to tick.Tick)
	Confirm(to tick.Tick)
}

var _ Follower = (*Tracker[int, int])(nil)

// Config holds a Tracker's callbacks. Play is required; Cancel and
// Confirm may be nil.
type Config[K comparable, P any] struct {
	// Play starts an effect the first time its tick is simulated with it
	// (or when a re-simulation fires it for the first time).
	Play func(t tick.Tick, key K, payload P)
	// Cancel stops an effect a rollback removed: the re-simulation of its
	// tick did not fire it again.
	Cancel func(t tick.Tick, key K, payload P)
	// Confirm reports an effect whose tick can no longer be rolled back.
	Confirm func(t tick.Tick, key K, payload P)
}

// Stats counts a Tracker's effects.
type Stats struct {
	// Played counts Play calls, Refired the fires of an effect already
	// playing (a re-simulation firing it again: not played twice),
	// Cancelled the Cancel calls and Confirmed the effects confirmed.
	Played, Refired, Cancelled, Confirmed uint64
	// Pending is the number of effects held (not yet confirmed).
	Pending int
}

type record[K comparable, P any] struct {
	t       tick.Tick
	key     K
	payload P
	stale   bool // fired before the rollback being re-simulated, not again yet
}

// Tracker tracks the effects of one simulation. Its methods are called
// from the goroutine that runs the simulation.
type Tracker[K comparable, P any] struct {
	cfg     Config[K, P]
	recs    []record[K, P] // by tick, then firing order
	from    tick.Tick      // the rollback being re-simulated starts here
	rewound bool
	stats   Stats
	// The tick being simulated: its records start at start, those fired
	// in this simulation of it end at cur.
	curT       tick.Tick
	start, cur int
	inTick     bool
}

// New returns a Tracker with the callbacks of cfg.
func New[K comparable, P any](cfg Config[K, P]) *Tracker[K, P] {
	if cfg.Play == nil {
		cfg.Play = func(tick.Tick, K, P) {}
	}
	return &Tracker[K, P]{cfg: cfg}
}

// Fire fires the effect key with payload at tick t, from the simulation
// of t. The first fire of (t, key) plays it; a fire of a (t, key) already
// held, as a re-simulation makes, does not (the payload of the first fire
// is kept: the effect playing is that one). A tick's effects are held in
// the order its latest simulation fired them, so callbacks come in an
// order every peer that simulated the same history shares.
func (tr *Tracker[K, P]) Fire(t tick.Tick, key K, payload P) {
	if !tr.inTick || t != tr.curT {
		// The first fire of tick t in this simulation of it: its records
		// not fired yet start where the tick's records start.
		i := len(tr.recs)
		for i > 0 && !tr.recs[i-1].t.Before(t) {
			i--
		}
		tr.curT, tr.start, tr.cur, tr.inTick = t, i, i, true
	}
	for i := tr.start; i < tr.cur; i++ {
		if tr.recs[i].key == key {
			return // fired twice in one simulation of the tick
		}
	}
	for i := tr.cur; i < len(tr.recs) && tr.recs[i].t == t; i++ {
		if tr.recs[i].key != key {
			continue
		}
		r := tr.recs[i]
		if r.stale {
			r.stale = false
			tr.stats.Refired++
		}
		copy(tr.recs[tr.cur+1:i+1], tr.recs[tr.cur:i]) // into firing order
		tr.recs[tr.cur] = r
		tr.cur++
		return
	}
	tr.recs = append(tr.recs, record[K, P]{})
	copy(tr.recs[tr.cur+1:], tr.recs[tr.cur:])
	tr.recs[tr.cur] = record[K, P]{t: t, key: key, payload: payload}
	tr.cur++
	tr.stats.Played++
	tr.cfg.Play(t, key, payload)
}

// Rewind marks a rollback: the ticks from on are about to be simulated
// again, and their effects will be kept only if fired again.
func (tr *Tracker[K, P]) Rewind(from tick.Tick) {
	if tr.rewound {
		tr.Resimulated(from - 1) // a rollback within a rollback: settle the first
	}
	tr.from, tr.rewound, tr.inTick = from, true, false
	for i := len(tr.recs) - 1; i >= 0 && !tr.recs[i].t.Before(from); i-- {
		tr.recs[i].stale = true
	}
}

// Resimulated ends a rollback's re-simulation, through tick to: the
// effects of ticks from..to not fired again are cancelled, in the order
// they were fired. Effects of later ticks stay stale until simulated.
func (tr *Tracker[K, P]) Resimulated(to tick.Tick) {
	if !tr.rewound {
		return
	}
	tr.rewound, tr.inTick = false, false
	k := 0
	for i := range tr.recs {
		r := tr.recs[i]
		if r.stale && !r.t.Before(tr.from) && !r.t.After(to) {
			tr.stats.Cancelled++
			if tr.cfg.Cancel != nil {
				tr.cfg.Cancel(r.t, r.key, r.payload)
			}
			continue
		}
		tr.recs[k] = r
		k++
	}
	clear(tr.recs[k:])
	tr.recs = tr.recs[:k]
}

// Confirm confirms the effects of the ticks up to to, which can no longer
// be rolled back, and forgets them.
func (tr *Tracker[K, P]) Confirm(to tick.Tick) {
	n := 0
	for n < len(tr.recs) && !tr.recs[n].t.After(to) {
		r := tr.recs[n]
		tr.stats.Confirmed++
		if tr.cfg.Confirm != nil {
			tr.cfg.Confirm(r.t, r.key, r.payload)
		}
		n++
	}
	if n > 0 {
		tr.inTick = false
		k := copy(tr.recs, tr.recs[n:])
		clear(tr.recs[k:])
		tr.recs = tr.recs[:k]
	}
}

// Stats returns the counters.
func (tr *Tracker[K, P]) Stats() Stats {
	s := tr.stats
	s.Pending = len(tr.recs)
	return s
}
