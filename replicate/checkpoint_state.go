package replicate

// The in-memory form of a checkpoint: per-type copies of the replicated
// stores' columns (entities and values), taken with internal/column's copy
// strategy, the per-type store history snapshot and predict use too.
// Checkpoints do not share entity layouts with each other (snapshot's
// ring and predict's history do): a checkpoint's memory is its own, so the
// ring's MaxBytes bound counts each one exactly and drops whole ones.
// Encoding to the saved state form (save.go) and the checksum wait until
// they are asked for.

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/internal/column"
	"github.com/rewindgo/rewind/internal/parts"
	"github.com/rewindgo/rewind/internal/xxh64"
)

// ckColumn is one component type's column in one checkpoint.
type ckColumn interface {
	capture()
	entities() []ecs.Entity
	// appendValue appends the codec bytes of the value at position k.
	appendValue(dst []byte, k int) []byte
	bytes() int
}

// ckResource is one resource type's value in one checkpoint.
type ckResource interface {
	capture()
	present() bool
	appendValue(dst []byte) []byte
	bytes() int
}

// plainData reports whether T holds no pointers (column's copy strategy
// applies): its values can be copied as memory and stay independent of
// the live ones.
func plainData[T any]() bool {
	_, err := column.PlainOf[T]()
	return err == nil
}

func (b *typedComponent[T]) newColumn() ckColumn {
	return &ckComp[T]{b: b, plain: plainData[T]()}
}

func (b *typedResource[T]) newResource() ckResource {
	return &ckRes[T]{b: b, plain: plainData[T]()}
}

// ckComp is the column of component T: for plain data, a copy of the
// store's entities and values; otherwise the values' codec bytes (a copy
// of a value holding pointers would share memory with the live one).
type ckComp[T any] struct {
	b     *typedComponent[T]
	plain bool
	ents  []ecs.Entity
	vals  []T
	data  []byte   // not plain: codec bytes of every value
	offs  []uint32 // not plain: end offset of value k in data
}

func (c *ckComp[T]) capture() {
	col := c.b.s.Column()
	c.ents = append(c.ents[:0], col.Entities...)
	if c.plain {
		c.vals = append(c.vals[:0], col.Values...)
		return
	}
	c.data, c.offs = c.data[:0], c.offs[:0]
	for k := range col.Values {
		c.data = c.b.codec.Append(c.data, &col.Values[k])
		c.offs = append(c.offs, uint32(len(c.data)))
	}
}

func (c *ckComp[T]) entities() []ecs.Entity { return c.ents }

func (c *ckComp[T]) appendValue(dst []byte, k int) []byte {
	if c.plain {
		return c.b.codec.Append(dst, &c.vals[k])
	}
	start := uint32(0)
	if k > 0 {
		start = c.offs[k-1]
	}
	return append(dst, c.data[start:c.offs[k]]...)
}

func (c *ckComp[T]) bytes() int {
	var zero T
	return 8*cap(c.ents) + int(unsafe.Sizeof(zero))*cap(c.vals) + cap(c.data) + 4*cap(c.offs)
}

// ckRes is the value of resource T (its codec bytes when T is not plain
// data).
type ckRes[T any] struct {
	b     *typedResource[T]
	plain bool
	has   bool
	val   T
	data  []byte
}

func (c *ckRes[T]) capture() {
	var ok bool
	c.val, ok = c.b.res.Get()
	c.has = ok
	if c.plain || !ok {
		if !ok {
			var zero T
			c.val = zero
		}
		return
	}
	c.data = c.b.codec.Append(c.data[:0], &c.val)
	var zero T
	c.val = zero
}

func (c *ckRes[T]) present() bool { return c.has }

func (c *ckRes[T]) appendValue(dst []byte) []byte {
	if c.plain {
		return c.b.codec.Append(dst, &c.val)
	}
	return append(dst, c.data...)
}

func (c *ckRes[T]) bytes() int { return int(unsafe.Sizeof(*c)) + cap(c.data) }

// srvEntMask is a server entity with the components its rules replicate
// (Once ones left out), as the checksum of a server checkpoint needs them.
type srvEntMask struct {
	e    ecs.Entity
	mask uint64
}

// ckState is the content of one checkpoint.
type ckState struct {
	rep   []ecs.Entity // the Replicated entities, in store order
	comps []ckColumn   // by component id
	res   []ckResource // by resource id
	srv   []srvEntMask // server rings: the entities the server lists
}

func newCkState(enc *stateEncoder) *ckState {
	st := &ckState{comps: make([]ckColumn, len(enc.comps)), res: make([]ckResource, len(enc.res))}
	for i, c := range enc.comps {
		st.comps[i] = c.(interface{ newColumn() ckColumn }).newColumn()
	}
	for i, r := range enc.res {
		st.res[i] = r.(interface{ newResource() ckResource }).newResource()
	}
	return st
}

// capture copies the world's replicated stores and resources (and the
// server's replicated entities, when s is not nil).
func (st *ckState) capture(enc *stateEncoder, s *Server) {
	st.rep = append(st.rep[:0], enc.rep.Column().Entities...)
	for _, c := range st.comps {
		c.capture()
	}
	for _, r := range st.res {
		r.capture()
	}
	st.srv = st.srv[:0]
	if s != nil {
		for _, i := range s.list {
			se := &s.ents[i]
			st.srv = append(st.srv, srvEntMask{e: se.e, mask: se.mask &^ se.once})
		}
	}
}

// bytes is the memory the state holds (the capacity of its buffers).
func (st *ckState) bytes() int {
	n := 8*cap(st.rep) + 16*cap(st.srv)
	for _, c := range st.comps {
		n += c.bytes()
	}
	for _, r := range st.res {
		n += r.bytes()
	}
	return n
}

// ckScratch holds the buffers that encoding and summing a checkpoint
// reuse: lookup tables by entity index.
type ckScratch struct {
	idx      []int32        // by component: position+1 of an entity index in its column, stride n
	set      []int32        // position+1 of an entity index in the checksummed set
	cols     [][]ecs.Entity // the entities of each column
	val      []byte
	resNames []string // "resource " + name, by resource id
}

// index fills table t (len n, reused from buf) with position+1 of every
// entity of ents whose index is below n.
func index(buf []int32, n int, ents []ecs.Entity) []int32 {
	t := resizeInt32(buf, n)
	clear(t)
	for k, e := range ents {
		if i := int(e.Index()); i < n {
			t[i] = int32(k + 1)
		}
	}
	return t
}

func resizeInt32(b []int32, n int) []int32 {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]int32, n)
}

// maxIndex is one more than the largest entity index in ents.
func maxIndex(ents []ecs.Entity) int {
	n := 0
	for _, e := range ents {
		n = max(n, int(e.Index())+1)
	}
	return n
}

// appendState appends the saved state form (format 2, save.go) of st:
// entities in the order of the Replicated store, each with its components
// in id order, then the present resources.
func (x *ckScratch) appendState(b []byte, p *Protocol, st *ckState) []byte {
	n := maxIndex(st.rep)
	nc := len(st.comps)
	x.idx = resizeInt32(x.idx, n*nc)
	x.cols = x.cols[:0]
	for i, c := range st.comps {
		x.cols = append(x.cols, c.entities())
		index(x.idx[i*n:i*n+n], n, x.cols[i])
	}
	b = append(b, saveMagic...)
	b = append(b, saveVersion)
	b = binary.LittleEndian.AppendUint64(b, p.hash)
	b = binary.AppendUvarint(b, uint64(len(st.rep)))
	var pos [MaxComponents]int32
	for _, e := range st.rep {
		b = appendEntity(b, e)
		var mask uint64
		ei := int(e.Index())
		for i, ents := range x.cols {
			if k := x.idx[i*n+ei] - 1; k >= 0 && ents[k] == e {
				mask |= 1 << uint(i)
				pos[i] = k
			}
		}
		b = binary.AppendUvarint(b, uint64(bits.OnesCount64(mask)))
		for m := mask; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			b = binary.AppendUvarint(b, uint64(i))
			if f := p.comps[i].fixed; f > 0 {
				// Known length: encode in place, no copy.
				b = binary.AppendUvarint(b, uint64(f))
				b = st.comps[i].appendValue(b, int(pos[i]))
				continue
			}
			x.val = st.comps[i].appendValue(x.val[:0], int(pos[i]))
			b = bin.AppendBytes(b, x.val)
		}
	}
	nr := 0
	for _, r := range st.res {
		if r.present() {
			nr++
		}
	}
	b = binary.AppendUvarint(b, uint64(nr))
	for i, r := range st.res {
		if r.present() {
			b = binary.AppendUvarint(b, uint64(i))
			x.val = r.appendValue(x.val[:0])
			b = bin.AppendBytes(b, x.val)
		}
	}
	return b
}

// checksum computes the checksum of st as StateChecksum (world rings) or
// Server.Checksum (server rings, st.srv) computed at its capture: the
// same parts, from the copied values. The summed set is st.rep, or
// st.srv for a server ring; x.set finds an entity's position in it.
func (x *ckScratch) checksum(p *Protocol, st *ckState, server bool, out []Part) (uint64, []Part) {
	setLen := len(st.rep)
	setEntity := func(k int) ecs.Entity { return st.rep[k] }
	if server {
		setLen = len(st.srv)
		setEntity = func(k int) ecs.Entity { return st.srv[k].e }
	}
	n := 0
	for k := range setLen {
		n = max(n, int(setEntity(k).Index())+1)
	}
	x.set = resizeInt32(x.set, n)
	clear(x.set)
	var ents uint64
	for k := range setLen {
		e := setEntity(k)
		x.set[e.Index()] = int32(k + 1)
		ents += entitySum(e)
	}
	out = append(out, Part{Name: EntitiesPart, Sum: ents})
	for i, c := range st.comps {
		info := p.comps[i]
		if !info.summed() {
			continue
		}
		var sum uint64
		for k, e := range c.entities() {
			ei := int(e.Index())
			if ei >= n || x.set[ei] == 0 {
				continue
			}
			at := int(x.set[ei] - 1)
			if setEntity(at) != e || server && st.srv[at].mask&(1<<uint(i)) == 0 {
				continue
			}
			x.val = c.appendValue(x.val[:0], k)
			sum += entityValueSum(e, x.val)
		}
		out = append(out, Part{Name: info.name, Sum: sum})
	}
	for len(x.resNames) < len(p.res) {
		x.resNames = append(x.resNames, "resource "+p.res[len(x.resNames)].name)
	}
	for i, r := range st.res {
		if !r.present() || p.res[i].mode == Once {
			continue
		}
		x.val = r.appendValue(x.val[:0])
		out = append(out, Part{Name: x.resNames[i], Sum: xxh64.Sum64(x.val)})
	}
	return parts.Combine(out), out
}
