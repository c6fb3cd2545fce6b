package predict

// History: a predicted type's saved frames, with shared entity layouts and
// value buffers, on internal/column's copy strategy, layout pool and
// restore kernel (the per-type store history snapshot and replicate use
// too).

import (
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/column"
	"github.com/rewindgo/rewind/tick"
)

// plain is the copy strategy of a predicted type: column.Plain (memory
// copies, bit-for-bit comparison in canonical form, the restore and
// re-save kernels) plus the type's Compare function.
type plain[T any] struct {
	*column.Plain[T]
	compare func(a, b T) bool
}

// newPlain applies the registration options and builds the copy strategy
// of T.
func newPlain[T any](opts []Option) (*plain[T], options, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	cp, err := column.PlainOf[T]()
	if err != nil {
		return nil, o, fmt.Errorf("predict: %v: %w", reflect.TypeFor[T](), err)
	}
	p := &plain[T]{Plain: cp}
	if o.compare != nil {
		f, ok := o.compare.(func(a, b T) bool)
		if !ok {
			return nil, o, fmt.Errorf("%w: %T for %v", ErrCompareType, o.compare, reflect.TypeFor[T]())
		}
		p.compare = f
	}
	return p, o, nil
}

// same reports whether a and b are identical (canonical bytes).
func (p *plain[T]) same(a, b *T) bool { return p.Same(a, b) }

// matches applies the type's compare function (same by default).
func (p *plain[T]) matches(pred, auth *T) bool {
	if p.compare != nil {
		return p.compare(*pred, *auth)
	}
	return p.same(pred, auth)
}

// frame is one type's saved state at one tick. Frames that saved the same
// values (a store unwritten between two saves) share one valBuf.
type frame[T any] struct {
	t      tick.Tick
	held   bool
	saved  uint64         // the World's change tick at the save
	layout *column.Layout // Mark: Timeline.deaths when every entity was known alive
	buf    *valBuf[T]
	// restored: a rollback just made the store equal to this frame as of
	// change tick saved, so saving the tick again copies only the values
	// written since (the tick's authoritative values).
	restored bool
}

type valBuf[T any] struct {
	vals []T
	refs int
}

// acquire returns a layout of c's pool holding id and ents.
func (c *Component[T]) acquire(id uint64, ents []ecs.Entity) *column.Layout {
	return c.layouts.Acquire(id, ents, c.tl.deaths)
}

// save saves the store as tick t. When the store kept its layout and was
// not written since tick t-1 was saved, the frame shares t-1's values.
func (c *Component[T]) save(t tick.Tick, savedTick uint64) {
	f := &c.hist[c.tl.slot(t)]
	col := c.s.Column()
	if f.restored && f.held && f.t == t && f.buf != nil && f.buf.refs == 1 &&
		f.layout != nil && f.layout.ID == col.Layout && len(f.buf.vals) == len(col.Values) {
		f.restored = false
		if col.MaxChanged > f.saved { // the tick's changes wrote some values
			vals, changed := f.buf.vals, col.Changed[:len(col.Values)]
			for p, k := range changed {
				if k > f.saved {
					vals[p] = col.Values[p]
				}
			}
		}
		f.saved = savedTick
		return
	}
	again := f.held && f.t == t // re-saved: f holds an earlier state of t
	f.t, f.held, f.restored = t, true, false
	if f.layout == nil || f.layout.ID != col.Layout {
		column.Release(&f.layout)
		f.layout = c.acquire(col.Layout, col.Entities)
	}
	if prev := &c.hist[c.tl.slot(t-1)]; prev.held && prev.t == t-1 && prev.buf != nil &&
		prev.layout.ID == col.Layout && col.MaxChanged <= prev.saved {
		if f.buf != prev.buf {
			c.releaseVals(&f.buf)
			f.buf = prev.buf
			f.buf.refs++
		}
		f.saved = prev.saved
		return
	}
	f.saved = savedTick
	if again && f.buf != nil && f.buf.refs == 1 && len(f.buf.vals) == len(col.Values) && c.p.Size > 0 {
		// A re-simulated tick: the frame holds the earlier prediction of t,
		// which a rollback mostly leaves unchanged. Compare it with the
		// store and copy only the blocks that differ, so the re-save reads
		// the history instead of rewriting it.
		column.Patch(f.buf.vals, col.Values)
		return
	}
	if f.buf == nil || f.buf.refs > 1 {
		c.releaseVals(&f.buf)
		f.buf = c.acquireVals()
	}
	f.buf.vals = append(f.buf.vals[:0], col.Values...)
}

func (c *Component[T]) acquireVals() *valBuf[T] {
	for _, b := range c.bufs {
		if b.refs == 0 {
			b.refs = 1
			return b
		}
	}
	b := &valBuf[T]{refs: 1}
	c.bufs = append(c.bufs, b)
	return b
}

func (c *Component[T]) releaseVals(b **valBuf[T]) {
	if *b != nil {
		(*b).refs--
		*b = nil
	}
}

// allAlive reports whether every entity of b is alive, remembering a yes.
func (c *Component[T]) allAlive(b *column.Layout) bool {
	if b.Mark == c.tl.deaths {
		return true
	}
	for _, e := range b.Ents {
		if !c.tl.w.Alive(e) {
			return false
		}
	}
	b.Mark = c.tl.deaths
	return true
}

// restore brings the store to its state at t (held by the caller's
// contract). With every saved entity alive it is snapshot's load: the
// store's layout is set back (ecs.RestoreStore) and only the values whose
// bytes differ are written and stamped (column.Plain.Stamp). Entities
// despawned from the World since t are skipped, value by value.
func (c *Component[T]) restore(rs *ecs.Restore, t tick.Tick) {
	f := &c.hist[c.tl.slot(t)]
	if !f.held || f.t != t {
		return
	}
	if !c.allAlive(f.layout) {
		c.restoreSome(f)
		return
	}
	saved := f.saved
	dst, changed, write := ecs.RestoreStore(rs, c.s, f.layout.ID, f.layout.Ents, saved)
	now := c.tl.w.Tick()
	f.restored, f.saved = true, now // the Timeline advances the tick next
	if write {
		c.p.Stamp(dst, f.buf.vals, changed, now)
	}
}

// restoreSome restores the values of the saved entities still alive and
// removes T from the others.
func (c *Component[T]) restoreSome(f *frame[T]) {
	c.gone = c.gone[:0]
	for _, e := range c.s.Column().Entities {
		if f.layout.Pos(e) < 0 {
			c.gone = append(c.gone, e)
		}
	}
	for _, e := range c.gone {
		_ = c.s.Remove(e)
	}
	for j, e := range f.layout.Ents {
		if !c.tl.w.Alive(e) {
			continue
		}
		if cur, ok := c.s.Get(e); ok && c.p.same(&cur, &f.buf.vals[j]) {
			continue
		}
		_ = c.s.Set(e, f.buf.vals[j])
	}
}
