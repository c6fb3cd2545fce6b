package predict

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// resFrame is a resource's saved state at one tick.
type resFrame[T any] struct {
	t       tick.Tick
	held    bool
	present bool
	v       T
}

// resOp is a change of a resource from outside the simulation at one tick
// (the last one received for the tick wins).
type resOp[T any] struct {
	t       tick.Tick
	used    bool
	auth    bool
	present bool
	v       T
}

// Resource is a predicted resource type registered with a Timeline: its
// value and presence are kept for the window and rolled back like
// components (a match clock, a score, the world's RNG).
type Resource[T any] struct {
	tl      *Timeline
	r       *ecs.Resource[T]
	p       *plain[T]
	hist    []resFrame[T]
	patches []resOp[T]
	ts      TypeStats

	attached bool // AttachResource routed replication here
}

// RegisterResource registers resource type T as predicted (see Register;
// LogCorrections does not apply to resources). T is registered with the
// World if it was not.
func RegisterResource[T any](tl *Timeline, opts ...Option) (*Resource[T], error) {
	p, _, err := newPlain[T](opts)
	if err != nil {
		return nil, err
	}
	r := &Resource[T]{
		tl: tl, r: ecs.RegisterResource[T](tl.w), p: p,
		hist:    make([]resFrame[T], tl.window+1),
		patches: make([]resOp[T], len(tl.ticks)),
	}
	r.ts.Name = "resource " + r.r.Info().Name
	if err := tl.register(r.ts.Name, r); err != nil {
		return nil, err
	}
	return r, nil
}

// Resource returns the World's resource.
func (r *Resource[T]) Resource() *ecs.Resource[T] { return r.r }

// At returns the predicted value at tick t (false when absent then or not
// held); for t = Now outside Step, the World's current value (see
// Component.At).
func (r *Resource[T]) At(t tick.Tick) (T, bool) {
	if t == r.tl.now && !r.tl.inStep {
		return r.r.Get()
	}
	f := &r.hist[r.tl.slot(t)]
	if !f.held || f.t != t || !f.present || t.Before(r.tl.low()) {
		var zero T
		return zero, false
	}
	return f.v, true
}

// Authoritative records the server's value of the resource at the end of
// tick t (see Component.Authoritative).
func (r *Resource[T]) Authoritative(t tick.Tick, v T) error {
	return r.add(t, resOp[T]{auth: true, present: true, v: v})
}

// AuthoritativeRemove records that the server had no such resource at the
// end of tick t.
func (r *Resource[T]) AuthoritativeRemove(t tick.Tick) error {
	return r.add(t, resOp[T]{auth: true})
}

// Set sets the resource at the end of tick t, a change from outside the
// simulation (see Component.Insert).
func (r *Resource[T]) Set(t tick.Tick, v T) error {
	return r.add(t, resOp[T]{present: true, v: v})
}

// Remove removes the resource at the end of tick t, a change from outside
// the simulation (see Component.Insert).
func (r *Resource[T]) Remove(t tick.Tick) error {
	return r.add(t, resOp[T]{})
}

func (r *Resource[T]) add(t tick.Tick, o resOp[T]) error {
	w, err := r.tl.where(t)
	if err != nil {
		return err
	}
	if w == wOld { // a range fault (counted by where): at the oldest tick held
		t, w, _ = r.tl.oldest()
		o.auth = false
		if r.op(t) != nil {
			return nil // the tick's own change is newer
		}
	}
	if w == wNow && !o.auth {
		r.do(&o)
	}
	o.t, o.used = t, true
	r.patches[r.tl.pslot(t)] = o
	r.tl.noted(t, w, o.auth)
	return nil
}

func (r *Resource[T]) do(o *resOp[T]) {
	if !o.present {
		r.r.Remove()
		return
	}
	if cur, ok := r.r.Get(); ok && r.p.same(&cur, &o.v) {
		return
	}
	r.r.Set(o.v)
}

func (r *Resource[T]) op(t tick.Tick) *resOp[T] {
	o := &r.patches[r.tl.pslot(t)]
	if !o.used || o.t != t {
		return nil
	}
	return o
}

func (r *Resource[T]) apply(t tick.Tick) {
	if o := r.op(t); o != nil {
		r.do(o)
	}
}

func (r *Resource[T]) check(t tick.Tick) int {
	o := r.op(t)
	if o == nil || !o.auth {
		return 0
	}
	var v T
	var present bool
	if r.tl.unsaved && t == r.tl.now {
		v, present = r.r.Get()
	} else if f := &r.hist[r.tl.slot(t)]; f.held && f.t == t {
		v, present = f.v, f.present
	} else {
		return 0
	}
	if o.present == present && (!o.present || r.p.matches(&v, &o.v)) {
		return 0
	}
	r.ts.Mispredictions++
	return 1
}

func (r *Resource[T]) save(t tick.Tick, _ uint64) {
	f := &r.hist[r.tl.slot(t)]
	f.v, f.present = r.r.Get()
	f.t, f.held = t, true
}

func (r *Resource[T]) restore(_ *ecs.Restore, t tick.Tick) {
	f := &r.hist[r.tl.slot(t)]
	if !f.held || f.t != t {
		return
	}
	r.do(&resOp[T]{present: f.present, v: f.v})
}

func (r *Resource[T]) drop(ecs.Entity)            {}
func (r *Resource[T]) clearCorrections()          {}
func (r *Resource[T]) flushLate()                 {}
func (r *Resource[T]) beginCorrections(tick.Tick) {}
func (r *Resource[T]) endCorrections(tick.Tick)   {}

// Stats returns the counters of the resource type (its entry of
// Timeline.Stats().Types).
func (r *Resource[T]) Stats() TypeStats { return r.stats() }

func (r *Resource[T]) stats() TypeStats {
	s := r.ts
	s.HistoryBytes = len(r.hist) * int(r.p.Size)
	return s
}
