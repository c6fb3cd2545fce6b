package replicate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
)

// Saved state format, version 2: "RWRS", a version byte, the protocol hash
// (8 bytes little-endian), the entity count, then per entity its index and
// generation and its components as (component id, value length, value)
// with the protocol's codecs, then the count of present replicated
// resources and each as (resource id, value length, value); integers are
// uvarints. Version 1 (no resource section) is still read.
const (
	saveMagic      = "RWRS"
	saveVersion    = 2
	maxSavedEntity = 1 << 24
	maxSavedState  = 1 << 30
)

// stateEncoder binds a protocol's replicated types to one world, for
// saving, loading and checkpoints (checkpoint.go).
type stateEncoder struct {
	w     *ecs.World
	p     *Protocol
	comps []boundComponent
	res   []boundResource
	rep   *ecs.Store[Replicated]
}

func newStateEncoder(world *ecs.World, p *Protocol) *stateEncoder {
	p.freeze()
	s := &stateEncoder{w: world, p: p, rep: ecs.Register[Replicated](world)}
	s.comps = make([]boundComponent, len(p.comps))
	for i, c := range p.comps {
		s.comps[i] = c.bind(world)
	}
	s.res = make([]boundResource, len(p.res))
	for i, r := range p.res {
		s.res[i] = r.bind(world)
	}
	return s
}

// SaveState writes the replicated state of world (every entity marked
// Replicated, with each of its components registered in p, and the present
// resources registered with ReplicateResource) to w: for server restarts,
// debugging and checkpoints (Checkpoint.AppendState writes the same form).
// Entities come in the order of the Replicated store, so equal worlds give
// equal bytes. Entity references are written as they are and remapped by
// LoadState.
func SaveState(w io.Writer, world *ecs.World, p *Protocol) error {
	enc := newStateEncoder(world, p)
	st := newCkState(enc)
	st.capture(enc, nil)
	var x ckScratch
	_, err := w.Write(x.appendState(nil, p, st))
	return err
}

// loadMapper maps saved entity ids to the entities LoadState spawned:
// through a table by saved index when the saved indices are dense, a map
// otherwise (so a hostile state cannot make it allocate by its largest
// index). An id not saved maps to the zero Entity.
type loadMapper struct {
	saved   []ecs.Entity // in the order of the state
	spawned []ecs.Entity // spawned[k] is the entity loaded for saved[k]
	byIdx   []int32      // position+1 by saved index
	byMap   map[uint32]int32
}

// index builds the lookup of m.saved; it fails when an entity index is
// saved twice.
func (m *loadMapper) index() error {
	top := uint64(0)
	for _, e := range m.saved {
		top = max(top, uint64(e.Index())+1)
	}
	if top <= uint64(2*len(m.saved)+1024) {
		m.byIdx = make([]int32, top)
		for k, e := range m.saved {
			if m.byIdx[e.Index()] != 0 {
				return fmt.Errorf("%w: entity index %d saved twice", ErrMalformed, e.Index())
			}
			m.byIdx[e.Index()] = int32(k + 1)
		}
		return nil
	}
	m.byMap = make(map[uint32]int32, len(m.saved))
	for k, e := range m.saved {
		if m.byMap[e.Index()] != 0 {
			return fmt.Errorf("%w: entity index %d saved twice", ErrMalformed, e.Index())
		}
		m.byMap[e.Index()] = int32(k + 1)
	}
	return nil
}

// MapEntity implements ecs.EntityMapper.
func (m *loadMapper) MapEntity(e ecs.Entity) ecs.Entity {
	var k int32
	if m.byIdx != nil {
		if i := int(e.Index()); i < len(m.byIdx) {
			k = m.byIdx[i]
		}
	} else {
		k = m.byMap[e.Index()]
	}
	if k == 0 || m.saved[k-1] != e {
		var none ecs.Entity
		return none
	}
	return m.spawned[k-1]
}

func (b *typedComponent[T]) grow(n int) { b.s.Grow(n) }

// stateReader reads a saved state as bin.Reader does (minimal uvarints,
// bounded counts and lengths, the first error kept), moving an offset
// rather than a slice: its hot loop stores no pointers, so it runs free of
// GC write barriers.
type stateReader struct {
	b   []byte
	off int
	err error
}

func (r *stateReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		r.off++
		return uint64(r.b[r.off-1])
	}
	v, n, err := bin.Uvarint(r.b[r.off:])
	if err != nil {
		r.fail(err)
		return 0
	}
	r.off += n
	return v
}

func (r *stateReader) entity() ecs.Entity {
	i, g := r.uvarint(), r.uvarint()
	if i > math.MaxUint32 || g > math.MaxUint32 {
		r.fail(bin.ErrRange)
		return 0
	}
	return ecs.NewEntity(uint32(i), uint32(g))
}

// count reads an element count of at most max and at most the unread
// bytes (every element takes one byte at least).
func (r *stateReader) count(max int) int {
	v := r.uvarint()
	if r.err == nil && (v > uint64(max) || v > uint64(len(r.b)-r.off)) {
		r.fail(bin.ErrRange)
	}
	if r.err != nil {
		return 0
	}
	return int(v)
}

// lenBytes reads a length of at most max and that many bytes (aliased).
func (r *stateReader) lenBytes(max int) []byte {
	n := r.uvarint()
	switch {
	case r.err != nil:
		return nil
	case n > uint64(max):
		r.fail(bin.ErrRange)
		return nil
	case n > uint64(len(r.b)-r.off):
		r.fail(bin.ErrTruncated)
		return nil
	}
	start := r.off
	r.off += int(n)
	return r.b[start:r.off:r.off]
}

func (r *stateReader) end() error {
	if r.err == nil && r.off != len(r.b) {
		r.err = bin.ErrTrailing
	}
	return r.err
}

// readState reads all of r, in one allocation when r tells its length
// (bytes.Reader, bytes.Buffer, strings.Reader).
func readState(r io.Reader) ([]byte, error) {
	if l, ok := r.(interface{ Len() int }); ok && l.Len() <= maxSavedState {
		data := make([]byte, l.Len())
		_, err := io.ReadFull(r, data)
		return data, err
	}
	return io.ReadAll(io.LimitReader(r, maxSavedState))
}

// LoadState reads a state written by SaveState (or Checkpoint.AppendState)
// into world, spawning a new entity (marked Replicated) for each saved
// one, setting the saved resources and remapping entity references between
// them. It returns the map from saved to new entities. A state saved with
// another protocol is refused (ErrProtocolMismatch); malformed input
// (including an entity index saved twice) returns an error wrapping
// ErrMalformed and spawns nothing. It reads the input twice: once to
// check every value, once to write them, so it holds no per-value buffers;
// its allocations are the input, the id table and the returned map, and
// the world's own growth.
func LoadState(r io.Reader, world *ecs.World, p *Protocol) (map[ecs.Entity]ecs.Entity, error) {
	p.freeze()
	data, err := readState(r)
	if err != nil {
		return nil, err
	}
	if len(data) < len(saveMagic)+9 || string(data[:4]) != saveMagic {
		return nil, fmt.Errorf("%w: not a saved replication state", ErrMalformed)
	}
	version := data[4]
	if version != 1 && version != saveVersion {
		return nil, fmt.Errorf("%w: saved state version %d", ErrMalformed, version)
	}
	if h := binary.LittleEndian.Uint64(data[5:]); h != p.hash {
		return nil, fmt.Errorf("%w: state saved with protocol %016x, this one is %016x", ErrProtocolMismatch, h, p.hash)
	}
	enc := newStateEncoder(world, p)
	comps, res := enc.comps, enc.res
	body := data[13:]

	// Check everything first: a refused state changes nothing.
	rd := stateReader{b: body}
	n := rd.count(maxSavedEntity)
	m := &loadMapper{saved: make([]ecs.Entity, 0, n)}
	var count [MaxComponents]int // values per component
	for i := 0; i < n && rd.err == nil; i++ {
		m.saved = append(m.saved, rd.entity())
		k := rd.count(MaxComponents)
		for range k {
			id := rd.uvarint()
			v := rd.lenBytes(maxMessageValue)
			if rd.err != nil {
				break
			}
			if id >= uint64(len(comps)) || comps[id].decodeCheck(v) != nil {
				rd.fail(errValue)
				break
			}
			count[id]++
		}
	}
	if version >= 2 {
		nr := rd.count(MaxResources)
		prev := -1
		for i := 0; i < nr && rd.err == nil; i++ {
			id := rd.uvarint()
			v := rd.lenBytes(maxMessageValue)
			if rd.err == nil && (id >= uint64(len(res)) || int(id) <= prev || res[id].decodeCheck(v) != nil) {
				rd.fail(errValue)
			}
			prev = int(id)
		}
	}
	if err := rd.end(); err != nil {
		return nil, malformed(err)
	}
	if err := m.index(); err != nil {
		return nil, err
	}

	// Spawn, then write the values with references mapped; the stores
	// are grown once beforehand.
	world.Grow(n)
	enc.rep.Grow(n)
	for i, c := range comps {
		c.(interface{ grow(int) }).grow(count[i])
	}
	m.spawned = make([]ecs.Entity, n)
	for k := range m.spawned {
		m.spawned[k] = world.Spawn()
	}
	for _, e := range m.spawned {
		_ = enc.rep.Set(e, Replicated{})
	}
	var errs []error
	rd = stateReader{b: body}
	rd.count(maxSavedEntity)
	for i := range n {
		rd.entity()
		for range rd.count(MaxComponents) {
			id := rd.uvarint()
			v := rd.lenBytes(maxMessageValue)
			if err := comps[id].write(m.spawned[i], 0, ValueAuthoritative, v, m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if version >= 2 {
		for range rd.count(MaxResources) {
			id := rd.uvarint()
			if err := res[id].write(0, rd.lenBytes(maxMessageValue), m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	out := make(map[ecs.Entity]ecs.Entity, n)
	for k, e := range m.saved {
		out[e] = m.spawned[k]
	}
	return out, errors.Join(errs...)
}
