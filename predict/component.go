package predict

import (
	"bytes"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/canon"
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

// plain is the copy strategy of a plain-data type: values are saved with a
// memory copy and compared bit for bit in their canonical form.
type plain[T any] struct {
	l       *canon.Form
	size    int
	w8, w4  int    // words to compare, for padding-free types of a fitting size
	ba, bb  []byte // canonical encodings, for types with padding
	compare func(a, b T) bool
}

func newPlain[T any](o options) (*plain[T], error) {
	l, err := canon.Of(reflect.TypeFor[T]())
	if err != nil {
		return nil, fmt.Errorf("predict: %v: %w", reflect.TypeFor[T](), err)
	}
	p := &plain[T]{l: l, size: int(l.Size)}
	switch {
	case !l.Raw || p.size == 0:
	case p.size%8 == 0 && l.Align >= 8:
		p.w8 = p.size / 8
	case p.size%4 == 0 && l.Align >= 4:
		p.w4 = p.size / 4
	}
	if o.compare != nil {
		f, ok := o.compare.(func(a, b T) bool)
		if !ok {
			return nil, fmt.Errorf("%w: %T for %v", ErrCompareType, o.compare, reflect.TypeFor[T]())
		}
		p.compare = f
	}
	return p, nil
}

// same reports whether a and b are identical (canonical bytes). Types
// without padding compare their memory, by machine words when the size
// and alignment allow (a byte compare costs a call per value).
func (p *plain[T]) same(a, b *T) bool {
	switch {
	case p.w8 > 0:
		x, y := unsafe.Pointer(a), unsafe.Pointer(b)
		for i := range p.w8 {
			if *(*uint64)(unsafe.Add(x, 8*i)) != *(*uint64)(unsafe.Add(y, 8*i)) {
				return false
			}
		}
		return true
	case p.w4 > 0:
		x, y := unsafe.Pointer(a), unsafe.Pointer(b)
		for i := range p.w4 {
			if *(*uint32)(unsafe.Add(x, 4*i)) != *(*uint32)(unsafe.Add(y, 4*i)) {
				return false
			}
		}
		return true
	case p.l.Raw:
		return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(a)), p.size), unsafe.Slice((*byte)(unsafe.Pointer(b)), p.size))
	}
	p.ba = p.l.Append(p.ba[:0], unsafe.Pointer(a))
	p.bb = p.l.Append(p.bb[:0], unsafe.Pointer(b))
	return bytes.Equal(p.ba, p.bb)
}

// matches applies the type's compare function (same by default).
func (p *plain[T]) matches(pred, auth *T) bool {
	if p.compare != nil {
		return p.compare(*pred, *auth)
	}
	return p.same(pred, auth)
}

// layoutBuf is a saved entity layout of one store, shared by the history
// frames that saved the same layout.
type layoutBuf struct {
	id     uint64
	ents   []ecs.Entity
	refs   int
	deaths uint64  // Timeline.deaths when every entity was known alive
	idx    []int32 // slot index -> position+1, built on first lookup
	idxOK  bool
}

func (b *layoutBuf) pos(e ecs.Entity) int {
	if !b.idxOK {
		clear(b.idx)
		for _, x := range b.ents {
			if i := int(x.Index()); i >= len(b.idx) {
				b.idx = append(b.idx, make([]int32, i+1-len(b.idx))...)
			}
		}
		for p, x := range b.ents {
			b.idx[x.Index()] = int32(p + 1)
		}
		b.idxOK = true
	}
	if i := int(e.Index()); i < len(b.idx) {
		if p := int(b.idx[i]) - 1; p >= 0 && b.ents[p] == e {
			return p
		}
	}
	return -1
}

// frame is one type's saved state at one tick. Frames that saved the same
// values (a store unwritten between two saves) share one valBuf.
type frame[T any] struct {
	t      tick.Tick
	held   bool
	saved  uint64 // the World's change tick at the save
	layout *layoutBuf
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
	layouts []*layoutBuf
	bufs    []*valBuf[T]
	patches []bucket[T] // 2(W+1), by tick
	before  frame[T]
	corr    []Correction[T]
	gone    []ecs.Entity
	cur     T // check's copy of a live value
	ts      TypeStats
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
	var o options
	for _, f := range opts {
		f(&o)
	}
	p, err := newPlain[T](o)
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

// At returns e's predicted value at tick t as held in the history (false
// when e had no T then, or t is not held). The history of tick Now is
// saved at the start of the next Step.
func (c *Component[T]) At(e ecs.Entity, t tick.Tick) (T, bool) {
	var zero T
	f := &c.hist[c.tl.slot(t)]
	if !f.held || f.t != t {
		return zero, false
	}
	if p := f.layout.pos(e); p >= 0 {
		return f.buf.vals[p], true
	}
	return zero, false
}

// Authoritative records the server's value of e's T at the end of tick t
// ("server values at t"). It is never written straight into the predicted
// component: once t is complete (Timeline.Complete), the next Step compares
// it with the history of t and rolls back on a mismatch (e had no T at t: a
// component inserted in the past), and every re-simulation through t
// applies it. A value for a tick not yet simulated is applied when the
// timeline simulates it; one older than the window is applied at once to
// the current state and counted as a range fault.
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
// with anything: at Now it applies at once; in the past it rolls back to
// t at the next Step; ahead, it applies when t is simulated. Every
// re-simulation through t applies it again.
func (c *Component[T]) Insert(e ecs.Entity, t tick.Tick, v T) error {
	return c.add(t, op[T]{e: e, v: v, kind: opSet})
}

// Remove removes e's T at the end of tick t, a change from outside the
// simulation (see Insert).
func (c *Component[T]) Remove(e ecs.Entity, t tick.Tick) error {
	return c.add(t, op[T]{e: e, kind: opRemove})
}

func (c *Component[T]) add(t tick.Tick, o op[T]) error {
	w, err := c.tl.where(t)
	if err != nil {
		return err
	}
	if w == wOld { // a snap: a change at Now, replayed by later rollbacks
		t, w, o.auth = c.tl.now, wNow, false
	}
	if w == wNow && !o.auth {
		c.do(&o)
	}
	b := &c.patches[c.tl.pslot(t)]
	if !b.used || b.t != t {
		b.t, b.used, b.ops = t, true, b.ops[:0]
	}
	b.ops = append(b.ops, o)
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
		} else if p := f.layout.pos(o.e); p >= 0 {
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

func (c *Component[T]) acquire(id uint64, ents []ecs.Entity) *layoutBuf {
	var free *layoutBuf
	for _, b := range c.layouts {
		if b.refs > 0 && b.id == id {
			b.refs++
			return b
		}
		if b.refs == 0 && free == nil {
			free = b
		}
	}
	if free == nil {
		free = &layoutBuf{}
		c.layouts = append(c.layouts, free)
	}
	free.id, free.ents, free.refs = id, append(free.ents[:0], ents...), 1
	free.deaths, free.idxOK = c.tl.deaths, false
	return free
}

func release(b **layoutBuf) {
	if *b != nil {
		(*b).refs--
		*b = nil
	}
}

// save saves the store as tick t. When the store kept its layout and was
// not written since tick t-1 was saved, the frame shares t-1's values.
func (c *Component[T]) save(t tick.Tick, savedTick uint64) {
	f := &c.hist[c.tl.slot(t)]
	col := c.s.Column()
	if f.restored && f.held && f.t == t && f.buf != nil && f.buf.refs == 1 &&
		f.layout != nil && f.layout.id == col.Layout && len(f.buf.vals) == len(col.Values) {
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
	if f.layout == nil || f.layout.id != col.Layout {
		release(&f.layout)
		f.layout = c.acquire(col.Layout, col.Entities)
	}
	if prev := &c.hist[c.tl.slot(t-1)]; prev.held && prev.t == t-1 && prev.buf != nil &&
		prev.layout.id == col.Layout && col.MaxChanged <= prev.saved {
		if f.buf != prev.buf {
			c.releaseVals(&f.buf)
			f.buf = prev.buf
			f.buf.refs++
		}
		f.saved = prev.saved
		return
	}
	f.saved = savedTick
	if again && f.buf != nil && f.buf.refs == 1 && len(f.buf.vals) == len(col.Values) && c.p.size > 0 {
		// A re-simulated tick: the frame holds the earlier prediction of t,
		// which a rollback mostly leaves unchanged. Compare it with the
		// store and copy only the blocks that differ, so the re-save reads
		// the history instead of rewriting it.
		patch(asBytes(f.buf.vals), asBytes(col.Values))
		return
	}
	if f.buf == nil || f.buf.refs > 1 {
		c.releaseVals(&f.buf)
		f.buf = c.acquireVals()
	}
	f.buf.vals = append(f.buf.vals[:0], col.Values...)
}

// asBytes returns the memory of vals (plain data).
func asBytes[T any](vals []T) []byte {
	if len(vals) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), len(vals)*int(unsafe.Sizeof(vals[0])))
}

// patchBlock is the unit patch compares and copies: large enough that the
// comparison runs at memory speed, small enough that one mispredicted
// entity rewrites little.
const patchBlock = 4096

// patch makes dst (the same length as src) equal to src, writing only the
// blocks that differ: when most of dst already holds src, reading both is
// cheaper than rewriting dst. Once a quarter of the blocks seen differ, it
// copies the rest.
func patch(dst, src []byte) {
	diff := 0
	for i := 0; i < len(src); i += patchBlock {
		j := min(i+patchBlock, len(src))
		if bytes.Equal(dst[i:j], src[i:j]) {
			continue
		}
		copy(dst[i:j], src[i:j])
		if diff++; diff >= 4 && 4*diff > i/patchBlock+1 {
			copy(dst[j:], src[j:])
			return
		}
	}
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
func (c *Component[T]) allAlive(b *layoutBuf) bool {
	if b.deaths == c.tl.deaths {
		return true
	}
	for _, e := range b.ents {
		if !c.tl.w.Alive(e) {
			return false
		}
	}
	b.deaths = c.tl.deaths
	return true
}

// restore brings the store to its state at t (held by the caller's
// contract). With every saved entity alive it is snapshot's load: the
// store's layout is set back (ecs.RestoreStore) and only the values whose
// bytes differ are written and stamped. Entities despawned from the World
// since t are skipped, value by value.
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
	dst, changed, write := ecs.RestoreStore(rs, c.s, f.layout.id, f.layout.ents, saved)
	now := c.tl.w.Tick()
	f.restored, f.saved = true, now // the Timeline advances the tick next
	if !write {
		return
	}
	src := f.buf.vals[:len(dst)]
	switch {
	case len(dst) == 0:
		return
	case c.p.w8 > 0:
		restoreWords(words[uint64](dst, c.p.w8), words[uint64](src, c.p.w8), c.p.w8, changed[:len(dst)], saved, now)
		return
	case c.p.w4 > 0:
		restoreWords(words[uint32](dst, c.p.w4), words[uint32](src, c.p.w4), c.p.w4, changed[:len(dst)], saved, now)
		return
	}
	for p := range dst {
		if changed[p] > saved && !c.p.same(&dst[p], &src[p]) {
			dst[p] = src[p]
			changed[p] = now
		}
	}
}

// words returns the memory of vals as machine words of type W, w per value.
func words[W uint32 | uint64, T any](vals []T, w int) []W {
	return unsafe.Slice((*W)(unsafe.Pointer(&vals[0])), len(vals)*w)
}

// restoreBlock is the number of values restoreWords compares at once.
const restoreBlock = 64

// restoreWords is restore's loop for values of w words of type W (values
// whose size and alignment allow it): it makes dst equal to src, stamping
// the values written since the save (changed after saved) whose words
// differ. Blocks of values are compared at memory speed first, so a block
// the rollback leaves unchanged costs one comparison; values not written
// since the save hold their saved bytes, so a differing block is copied
// whole.
func restoreWords[W uint32 | uint64](dst, src []W, w int, changed []uint64, saved, now uint64) {
	n := len(changed)
	dst, src = dst[:n*w], src[:n*w]
	for lo := 0; lo < n; lo += restoreBlock {
		hi := min(lo+restoreBlock, n)
		d, s := dst[lo*w:hi*w], src[lo*w:hi*w]
		if bytes.Equal(asBytes(d), asBytes(s)) {
			continue
		}
		stampDiff(d, s[:len(d)], w, changed[lo:hi], saved, now)
		copy(d, s)
	}
}

// stampDiff stamps with now the values (w words each) written since saved
// whose words differ between d and s.
func stampDiff[W uint32 | uint64](d, s []W, w int, changed []uint64, saved, now uint64) {
	if w == 1 {
		d, s = d[:len(changed)], s[:len(changed)]
		for p, k := range changed {
			if k > saved && d[p] != s[p] {
				changed[p] = now
			}
		}
		return
	}
	if w == 2 {
		d, s = d[:2*len(changed)], s[:2*len(changed)]
		for p, k := range changed {
			o := 2 * p
			if k > saved && (d[o] != s[o] || d[o+1] != s[o+1]) {
				changed[p] = now
			}
		}
		return
	}
	if w == 3 {
		d, s = d[:3*len(changed)], s[:3*len(changed)]
		for p, k := range changed {
			o := 3 * p
			if k > saved && (d[o] != s[o] || d[o+1] != s[o+1] || d[o+2] != s[o+2]) {
				changed[p] = now
			}
		}
		return
	}
	for p, k := range changed {
		if k <= saved {
			continue
		}
		for i := p * w; i < p*w+w; i++ {
			if d[i] != s[i] {
				changed[p] = now
				break
			}
		}
	}
}

// restoreSome restores the values of the saved entities still alive and
// removes T from the others.
func (c *Component[T]) restoreSome(f *frame[T]) {
	c.gone = c.gone[:0]
	for _, e := range c.s.Column().Entities {
		if f.layout.pos(e) < 0 {
			c.gone = append(c.gone, e)
		}
	}
	for _, e := range c.gone {
		_ = c.s.Remove(e)
	}
	for j, e := range f.layout.ents {
		if !c.tl.w.Alive(e) {
			continue
		}
		if cur, ok := c.s.Get(e); ok && c.p.same(&cur, &f.buf.vals[j]) {
			continue
		}
		_ = c.s.Set(e, f.buf.vals[j])
	}
}

func (c *Component[T]) clearCorrections() { c.corr = c.corr[:0] }

func (c *Component[T]) beginCorrections(now tick.Tick) {
	if !c.log {
		return
	}
	release(&c.before.layout)
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
		j := c.before.layout.pos(e)
		if j >= 0 && !c.p.same(&c.before.buf.vals[j], &col.Values[p]) {
			c.corr = append(c.corr, Correction[T]{Entity: e, Tick: now, Before: c.before.buf.vals[j], After: col.Values[p]})
		}
	}
	release(&c.before.layout)
	c.releaseVals(&c.before.buf)
	c.ts.Corrections += uint64(len(c.corr))
	c.tl.stats.Corrections += uint64(len(c.corr))
}

// Corrections returns the corrections made to T by the rollback of the last
// Step (with LogCorrections; empty when it did not roll back), in the
// store's dense order. The slice is reused by the next Step.
func (c *Component[T]) Corrections() []Correction[T] { return c.corr }

func (c *Component[T]) stats() TypeStats {
	s := c.ts
	s.HistoryBytes = 0
	for _, b := range c.bufs {
		s.HistoryBytes += cap(b.vals) * c.p.size
	}
	for _, b := range c.layouts {
		s.HistoryBytes += 8*cap(b.ents) + 4*cap(b.idx)
	}
	return s
}
