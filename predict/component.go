package predict

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/column"
	"github.com/rewindgo/rewind/predict/interp"
	"github.com/rewindgo/rewind/tick"
)

// Option configures the registration of a predicted type.
type Option func(*options)

type options struct {
	compare any // func(a, b T) bool
	log     bool
}

// Compare sets the function that decides whether an authoritative value
// matches the prediction (true: no rollback needed), for tolerances such as
// "positions within a millimetre". The default is exact equality of the
// values' canonical bytes (the form checksums use). It must be
// deterministic.
func Compare[T any](equal func(a, b T) bool) Option {
	return func(o *options) { o.compare = equal }
}

// LogCorrections makes rollbacks record a Correction for every entity whose
// value of the type at Now differs after the re-simulation (see
// Component.Corrections).
func LogCorrections() Option {
	return func(o *options) { o.log = true }
}

// Correction is the change a rollback made to one entity's predicted value
// at tick Tick (the Now of the Step that rolled back): Before is what was
// predicted, After what the re-simulation gave. A renderer blends the
// difference away (see Decay).
type Correction[T any] struct {
	Entity        ecs.Entity
	Tick          tick.Tick
	Before, After T
}

type opKind uint8

const (
	opSet opKind = iota
	opRemove
)

// op is a change from outside the simulation at one tick.
type op[T any] struct {
	e    ecs.Entity
	v    T
	kind opKind
	auth bool
}

type bucket[T any] struct {
	t    tick.Tick
	used bool
	ops  []op[T]
}

// Component is a predicted component type registered with a Timeline: its
// history, the authoritative values and external changes received for it,
// and its corrections.
type Component[T any] struct {
	tl      *Timeline
	s       *ecs.Store[T]
	p       *plain[T]
	log     bool
	hist    []frame[T] // W+1, by tick
	layouts column.Layouts
	bufs    []*valBuf[T]
	patches []bucket[T] // 2(W+1), by tick
	before  frame[T]
	corr    []Correction[T]
	gone    []ecs.Entity
	cur     T           // check's copy of a live value
	late    []lateOp[T] // authoritative changes older than the window (late.go)
	ts      TypeStats
	split   *interp.Buffer[T] // AttachSplit's buffer, for the checksum reports

	attached bool // AttachComponent or AttachSplit routed replication here
}

// Register registers component type T as predicted: the Timeline keeps its
// history for every entity that has one, from the tick it appeared, for the
// window, compares authoritative values of T with it, and rolls it back.
// T must be plain data (numbers, bools, arrays and structs of them,
// ecs.Entity): its history is a memory copy of the store per tick, W+1
// ticks deep, shared entity layouts, no allocation per tick once grown. T
// is registered with the World if it was not. Register every type before
// the first Step.
func Register[T any](tl *Timeline, opts ...Option) (*Component[T], error) {
	p, o, err := newPlain[T](opts)
	if err != nil {
		return nil, err
	}
	c := &Component[T]{
		tl: tl, s: ecs.Register[T](tl.w), p: p, log: o.log,
		hist:    make([]frame[T], tl.window+1),
		patches: make([]bucket[T], len(tl.ticks)),
	}
	c.ts.Name = c.s.Info().Name
	if err := tl.register(c.ts.Name, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Store returns the World's store of T, which the simulation reads and
// writes.
func (c *Component[T]) Store() *ecs.Store[T] { return c.s }

// At returns e's predicted value at tick t (false when e had no T then,
// or t is not held: before Timeline.Oldest or after Now). For t = Now
// outside Step it is the World's current value (the history of Now is
// saved at the start of the next Step; until then the World holds it,
// with the changes made at Now since, such as Insert). Inside Step it
// reads the history only.
func (c *Component[T]) At(e ecs.Entity, t tick.Tick) (T, bool) {
	var zero T
	if t == c.tl.now && !c.tl.inStep {
		return c.s.Get(e)
	}
	f := &c.hist[c.tl.slot(t)]
	if !f.held || f.t != t || t.Before(c.tl.low()) {
		return zero, false
	}
	if p := f.layout.Pos(e); p >= 0 {
		return f.buf.vals[p], true
	}
	return zero, false
}

// Authoritative records the server's value of e's T at the end of tick t
// ("server values at t"). It is never written straight into the predicted
// component, and nothing happens until t is complete: once t is complete
// (Timeline.Complete, which replicate's TickComplete hook calls), the next
// Step compares it with the history of t and rolls back on a mismatch (e
// had no T at t: a component inserted in the past), and every
// re-simulation through t applies it. A test that gives values through
// Authoritative calls Complete(t) to see them; Insert is the change that
// applies without completeness (at once at Now, by a rollback at the next
// Step in the past). ExampleComponent_Authoritative shows both.
//
// A value for a tick not yet simulated is applied when the timeline
// simulates it; one older than the window is applied at the oldest tick
// held (Timeline.Oldest), before that tick's own values, by the next
// Step, which rolls back there, and counted as a range fault, unless a
// newer value or removal of e's T supersedes it before
// (Stats.Superseded; see late.go).
func (c *Component[T]) Authoritative(e ecs.Entity, t tick.Tick, v T) error {
	return c.add(t, op[T]{e: e, v: v, kind: opSet, auth: true})
}

// ReceiveHook returns Authoritative in the form of replicate's receive hook
// (replicate.SetReceiveHook[T]): it takes every value (true), so none is
// written straight into the World; a value the Timeline refuses (more than
// the window ahead) is dropped and counted in Stats.Refused.
func (c *Component[T]) ReceiveHook() func(e ecs.Entity, t tick.Tick, v T) bool {
	return func(e ecs.Entity, t tick.Tick, v T) bool {
		if c.Authoritative(e, t, v) != nil {
			c.tl.stats.Refused++
		}
		return true
	}
}

// AuthoritativeRemove records that the server's e had no T at the end of
// tick t (a removal in the past), like Authoritative.
func (c *Component[T]) AuthoritativeRemove(e ecs.Entity, t tick.Tick) error {
	return c.add(t, op[T]{e: e, kind: opRemove, auth: true})
}

// Insert gives e the value v at the end of tick t, a change from outside
// the simulation (a game event, a blueprint assembled for t), not compared
// with anything and not waiting for completeness, unlike Authoritative: at
// Now it applies at once; in the past it rolls back to t at the next Step;
// ahead, it applies when t is simulated. Every re-simulation through t
// applies it again.
func (c *Component[T]) Insert(e ecs.Entity, t tick.Tick, v T) error {
	return c.add(t, op[T]{e: e, v: v, kind: opSet})
}

// Remove removes e's T at the end of tick t, a change from outside the
// simulation (see Insert).
func (c *Component[T]) Remove(e ecs.Entity, t tick.Tick) error {
	return c.add(t, op[T]{e: e, kind: opRemove})
}

func (c *Component[T]) add(t tick.Tick, o op[T]) error {
	w, err := c.tl.place(t)
	if err != nil {
		return err
	}
	if o.auth && c.supersede(t, o.e, w == wOld) {
		return nil
	}
	early := false
	if w == wOld {
		switch {
		case c.tl.resyncSnap(t): // the resync's state: the history starts at Now
			t, w, o.auth = c.tl.now, wNow, false
		case o.auth:
			c.late = append(c.late, lateOp[T]{t: t, o: o}) // until the next Step (late.go)
			c.tl.lateN++
			return nil
		default: // a range fault: a change at the oldest tick held, before its own
			c.tl.fault(t)
			t, w, early = c.tl.oldest()
		}
	}
	if w == wNow && !o.auth {
		c.do(&o)
	}
	b := &c.patches[c.tl.pslot(t)]
	if !b.used || b.t != t {
		b.t, b.used, b.ops = t, true, b.ops[:0]
	}
	b.ops = append(b.ops, o)
	if early {
		first(b.ops, len(b.ops)-1)
	}
	c.tl.noted(t, w, o.auth)
	return nil
}

// do applies one change to the World, writing only values that differ.
func (c *Component[T]) do(o *op[T]) {
	if !c.tl.w.Alive(o.e) {
		c.tl.stats.Dropped++
		return
	}
	if o.kind == opRemove {
		_ = c.s.Remove(o.e)
		return
	}
	if cur, ok := c.s.Get(o.e); ok && c.p.same(&cur, &o.v) {
		return
	}
	_ = c.s.Set(o.e, o.v)
}

func (c *Component[T]) ops(t tick.Tick) []op[T] {
	b := &c.patches[c.tl.pslot(t)]
	if !b.used || b.t != t {
		return nil
	}
	return b.ops
}

func (c *Component[T]) apply(t tick.Tick) {
	ops := c.ops(t)
	for i := range ops {
		c.do(&ops[i])
	}
}

// check counts the authoritative values of t that differ from the
// prediction: the history of t, or the World for Now before it is saved.
func (c *Component[T]) check(t tick.Tick) int {
	live := c.tl.unsaved && t == c.tl.now
	f := &c.hist[c.tl.slot(t)]
	if !live && (!f.held || f.t != t) {
		return 0
	}
	n := 0
	ops := c.ops(t)
	for i := range ops {
		o := &ops[i]
		if !o.auth {
			continue
		}
		var pred *T
		if live {
			var ok bool
			if c.cur, ok = c.s.Get(o.e); ok {
				pred = &c.cur
			}
		} else if p := f.layout.Pos(o.e); p >= 0 {
			pred = &f.buf.vals[p]
		}
		switch {
		case o.kind == opRemove && pred != nil,
			o.kind == opSet && pred == nil,
			o.kind == opSet && !c.p.matches(pred, &o.v):
			n++
		}
	}
	c.ts.Mispredictions += uint64(n)
	return n
}

func (c *Component[T]) drop(e ecs.Entity) { _ = c.s.Remove(e) }

func (c *Component[T]) clearCorrections() { c.corr = c.corr[:0] }

func (c *Component[T]) beginCorrections(now tick.Tick) {
	if !c.log {
		return
	}
	column.Release(&c.before.layout)
	c.releaseVals(&c.before.buf)
	col := c.s.Column() // the state of now, saved or not
	c.before.layout = c.acquire(col.Layout, col.Entities)
	c.before.buf = c.acquireVals()
	c.before.buf.vals = append(c.before.buf.vals[:0], col.Values...)
}

func (c *Component[T]) endCorrections(now tick.Tick) {
	if c.before.layout == nil {
		return
	}
	col := c.s.Column()
	for p, e := range col.Entities {
		j := c.before.layout.Pos(e)
		if j >= 0 && !c.p.same(&c.before.buf.vals[j], &col.Values[p]) {
			c.corr = append(c.corr, Correction[T]{Entity: e, Tick: now, Before: c.before.buf.vals[j], After: col.Values[p]})
		}
	}
	column.Release(&c.before.layout)
	c.releaseVals(&c.before.buf)
	c.ts.Corrections += uint64(len(c.corr))
	c.tl.stats.Corrections += uint64(len(c.corr))
}

// Stats returns the counters of T (its entry of Timeline.Stats().Types,
// without looking it up by name): Mispredictions, Corrections and
// HistoryBytes.
func (c *Component[T]) Stats() TypeStats { return c.stats() }

// Corrections returns the corrections made to T by the rollback of the last
// Step (with LogCorrections; empty when it did not roll back), in the
// store's dense order. The slice is reused by the next Step.
func (c *Component[T]) Corrections() []Correction[T] { return c.corr }

func (c *Component[T]) stats() TypeStats {
	s := c.ts
	s.HistoryBytes = 0
	for _, b := range c.bufs {
		s.HistoryBytes += cap(b.vals) * int(c.p.Size)
	}
	s.HistoryBytes += c.layouts.Bytes()
	return s
}
