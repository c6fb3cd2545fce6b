package predict

// History: the copy strategy of a predicted type (plain data, compared
// in canonical form), its saved frames with shared entity layouts and
// value buffers, and the memory-speed save and restore of a tick.

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/canon"
	"github.com/rewindgo/rewind/tick"
)

// plain is the copy strategy of a plain-data type: values are saved with a
// memory copy and compared bit for bit in their canonical form.
type plain[T any] struct {
	l       *canon.Form
	size    int
	w8, w4  int    // words to compare, for padding-free types of a fitting size
	ba, bb  []byte // canonical encodings, for types with padding
	compare func(a, b T) bool
}

// newPlain applies the registration options and builds the copy strategy
// of T.
func newPlain[T any](opts []Option) (*plain[T], options, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	l, err := canon.Of(reflect.TypeFor[T]())
	if err != nil {
		return nil, o, fmt.Errorf("predict: %v: %w", reflect.TypeFor[T](), err)
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
			return nil, o, fmt.Errorf("%w: %T for %v", ErrCompareType, o.compare, reflect.TypeFor[T]())
		}
		p.compare = f
	}
	return p, o, nil
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
// the rollback leaves unchanged costs one comparison; in a block that
// differs, each value is compared, copied and stamped in one pass (values
// not written since the save hold their saved bytes: they compare equal).
func restoreWords[W uint32 | uint64](dst, src []W, w int, changed []uint64, saved, now uint64) {
	n := len(changed)
	dst, src = dst[:n*w], src[:n*w]
	for lo := 0; lo < n; lo += restoreBlock {
		hi := min(lo+restoreBlock, n)
		d, s := dst[lo*w:hi*w], src[lo*w:hi*w]
		if bytes.Equal(asBytes(d), asBytes(s)) {
			continue
		}
		copyDiff(d, s[:len(d)], w, changed[lo:hi], saved, now)
	}
}

// copyDiff copies into d the values (w words each) of s that differ,
// stamping with now those written since saved.
func copyDiff[W uint32 | uint64](d, s []W, w int, changed []uint64, saved, now uint64) {
	switch w {
	case 1:
		d, s = d[:len(changed)], s[:len(changed)]
		for p := range changed {
			if d[p] != s[p] {
				d[p] = s[p]
				if changed[p] > saved {
					changed[p] = now
				}
			}
		}
		return
	case 2:
		d, s = d[:2*len(changed)], s[:2*len(changed)]
		for p := range changed {
			o := 2 * p
			if d[o] != s[o] || d[o+1] != s[o+1] {
				d[o], d[o+1] = s[o], s[o+1]
				if changed[p] > saved {
					changed[p] = now
				}
			}
		}
		return
	case 3:
		d, s = d[:3*len(changed)], s[:3*len(changed)]
		for p := range changed {
			o := 3 * p
			if d[o] != s[o] || d[o+1] != s[o+1] || d[o+2] != s[o+2] {
				d[o], d[o+1], d[o+2] = s[o], s[o+1], s[o+2]
				if changed[p] > saved {
					changed[p] = now
				}
			}
		}
		return
	}
	for p := range changed {
		o := p * w
		if !slices.Equal(d[o:o+w], s[o:o+w]) {
			copy(d[o:o+w], s[o:o+w])
			if changed[p] > saved {
				changed[p] = now
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
