package replicate

// The reusable loader of saved states (the SaveState form, which
// checkpoints share): LoadState is a one-off Loader.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
)

// Loader reads saved states (SaveState, Checkpoint.AppendState) into a
// world as LoadState does, keeping its buffers from one load to the next:
// the input buffer of LoadFrom, the binding of the protocol's types to the
// world, and the table of loaded entities it returns. Loading repeatedly
// into the same world, emptied of the previous load's entities in
// between (a client applying pushed checkpoints, a tool that reloads),
// allocates nothing once the buffers, the world and its stores have grown
// to the largest state loaded. (Loading into another world, or with
// another protocol, binds again, which allocates.) The zero Loader is
// ready to use. A Loader is not safe for concurrent use.
type Loader struct {
	enc   *stateEncoder // bound to the world and protocol of the last load
	data  []byte        // LoadFrom's input
	ents  LoadedEntities
	check []int         // by component id: the value length that needs no decoding to check, or 0
	load  []valueLoader // by component id
	count [MaxComponents]int
}

// LoadedEntities is the table from saved entities to the entities a
// Loader spawned for them, in the order of the saved state: a map held
// in slices, reused by the next load. It implements ecs.EntityMapper.
type LoadedEntities struct {
	saved  []ecs.Entity // in the order of the state
	loaded []ecs.Entity // loaded[k] is the entity spawned for saved[k]
	// The lookup by saved index: byIdx holds position+1 by index when the
	// saved indices are dense (at most 2n+1024), so a hostile state
	// cannot make it allocate by its largest index; otherwise sorted holds
	// (index, position) sorted by index, searched by halving.
	byIdx  []int32
	sorted []idxPos
	dense  bool
}

type idxPos struct{ idx, pos uint32 }

// Len is the number of entities loaded.
func (t *LoadedEntities) Len() int { return len(t.saved) }

// At returns the k-th saved entity of the state (0 <= k < Len) and the
// entity loaded for it.
func (t *LoadedEntities) At(k int) (saved, loaded ecs.Entity) {
	return t.saved[k], t.loaded[k]
}

// Lookup returns the entity loaded for the saved entity e, and whether e
// was in the state (index and generation).
func (t *LoadedEntities) Lookup(e ecs.Entity) (ecs.Entity, bool) {
	k := -1
	i := e.Index()
	if t.dense {
		if int(i) < len(t.byIdx) {
			k = int(t.byIdx[i]) - 1
		}
	} else if j, ok := slices.BinarySearchFunc(t.sorted, i, func(p idxPos, i uint32) int {
		return cmp.Compare(p.idx, i)
	}); ok {
		k = int(t.sorted[j].pos)
	}
	if k < 0 || t.saved[k] != e {
		return 0, false
	}
	return t.loaded[k], true
}

// MapEntity implements ecs.EntityMapper: the entity loaded for e, the
// zero Entity when e was not in the state.
func (t *LoadedEntities) MapEntity(e ecs.Entity) ecs.Entity {
	l, _ := t.Lookup(e)
	return l
}

// index builds the lookup of t.saved; it fails when an entity index is
// saved twice.
func (t *LoadedEntities) index() error {
	top := uint64(0)
	for _, e := range t.saved {
		top = max(top, uint64(e.Index())+1)
	}
	t.dense = top <= uint64(2*len(t.saved)+1024)
	if t.dense {
		t.byIdx = resizeInt32(t.byIdx, int(top))
		clear(t.byIdx)
		for k, e := range t.saved {
			if t.byIdx[e.Index()] != 0 {
				return fmt.Errorf("%w: entity index %d saved twice", ErrMalformed, e.Index())
			}
			t.byIdx[e.Index()] = int32(k + 1)
		}
		return nil
	}
	t.sorted = t.sorted[:0]
	for k, e := range t.saved {
		t.sorted = append(t.sorted, idxPos{idx: e.Index(), pos: uint32(k)})
	}
	slices.SortFunc(t.sorted, func(a, b idxPos) int { return cmp.Compare(a.idx, b.idx) })
	for j := 1; j < len(t.sorted); j++ {
		if t.sorted[j].idx == t.sorted[j-1].idx {
			return fmt.Errorf("%w: entity index %d saved twice", ErrMalformed, t.sorted[j].idx)
		}
	}
	return nil
}

// LoadFrom reads all of r (at most 1 GiB) into the Loader's buffer and
// loads it as Load does.
func (l *Loader) LoadFrom(r io.Reader, world *ecs.World, p *Protocol) (*LoadedEntities, error) {
	data, err := l.read(r)
	if err != nil {
		return nil, err
	}
	return l.Load(data, world, p)
}

// read reads all of r into l.data, in one step when r tells its length
// (bytes.Reader, bytes.Buffer, strings.Reader).
func (l *Loader) read(r io.Reader) ([]byte, error) {
	b := l.data[:0]
	if lr, ok := r.(interface{ Len() int }); ok && lr.Len() <= maxSavedState {
		n := lr.Len()
		b = slices.Grow(b, n)[:n]
		l.data = b
		_, err := io.ReadFull(r, b)
		return b, err
	}
	lim := io.LimitedReader{R: r, N: maxSavedState}
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, max(512, len(b)))
		}
		n, err := lim.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		l.data = b
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// Load reads the saved state data into world, spawning a new entity
// (marked Replicated) for each saved one, setting the saved resources and
// remapping entity references between them, as LoadState does. It
// returns the table of loaded entities, valid until the next load of l
// (which reuses it). A state saved with another protocol is refused
// (ErrProtocolMismatch); malformed input (including an entity index saved
// twice) returns an error wrapping ErrMalformed and changes nothing in
// the world. data is only read, and not kept.
//
// It reads data twice: once to check every value (a value of a
// plain-data type whose bytes are its memory form, without bools, needs
// only its length checked), then to spawn the entities and write the
// values into stores grown once beforehand.
func (l *Loader) Load(data []byte, world *ecs.World, p *Protocol) (*LoadedEntities, error) {
	p.freeze()
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
	if l.enc == nil || l.enc.w != world || l.enc.p != p {
		l.enc = newStateEncoder(world, p)
		l.check, l.load = l.check[:0], l.load[:0]
		for _, c := range l.enc.comps {
			vl := c.(valueLoader)
			l.check = append(l.check, vl.lenOnlyCheck())
			l.load = append(l.load, vl)
		}
	}
	enc, t := l.enc, &l.ents
	comps, res, check, load := enc.comps, enc.res, l.check, l.load
	body := data[13:]

	// Check everything first: a refused state changes nothing.
	rd := bin.NewReader(body)
	n := rd.Count(maxSavedEntity)
	t.saved, t.loaded = slices.Grow(t.saved[:0], n), t.loaded[:0]
	count := &l.count
	clear(count[:len(comps)])
	for i := 0; i < n && rd.Err() == nil; i++ {
		t.saved = append(t.saved, readEntity(&rd))
		k := rd.Count(MaxComponents)
		for range k {
			id := rd.Uvarint()
			v := rd.LenBytes(maxMessageValue)
			if rd.Err() != nil {
				break
			}
			if id >= uint64(len(comps)) {
				rd.Fail(errValue)
				break
			}
			if f := check[id]; f > 0 {
				if len(v) != f {
					rd.Fail(errValue)
					break
				}
			} else if comps[id].decodeCheck(v) != nil {
				rd.Fail(errValue)
				break
			}
			count[id]++
		}
	}
	if version >= 2 {
		nr := rd.Count(MaxResources)
		prev := -1
		for i := 0; i < nr && rd.Err() == nil; i++ {
			id := rd.Uvarint()
			v := rd.LenBytes(maxMessageValue)
			if rd.Err() == nil && (id >= uint64(len(res)) || int(id) <= prev || res[id].decodeCheck(v) != nil) {
				rd.Fail(errValue)
			}
			prev = int(id)
		}
	}
	if err := rd.End(); err != nil {
		t.saved = t.saved[:0]
		return nil, malformed(err)
	}
	if err := t.index(); err != nil {
		t.saved = t.saved[:0]
		return nil, err
	}

	// Spawn, then write the values with references mapped; the stores
	// are grown once beforehand.
	world.Grow(n)
	enc.rep.Grow(n)
	for i, c := range comps {
		c.(interface{ grow(int) }).grow(count[i])
	}
	t.loaded = slices.Grow(t.loaded, n)
	for range n {
		t.loaded = append(t.loaded, world.Spawn())
	}
	for _, e := range t.loaded {
		_ = enc.rep.Set(e, Replicated{})
	}
	var errs []error
	rd = bin.NewReader(body)
	rd.Count(maxSavedEntity)
	for _, e := range t.loaded {
		readEntity(&rd)
		for range rd.Count(MaxComponents) {
			id := rd.Uvarint()
			v := rd.LenBytes(maxMessageValue)
			if err := load[id].load(e, v, t); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if version >= 2 {
		for range rd.Count(MaxResources) {
			id := rd.Uvarint()
			if err := res[id].write(0, rd.LenBytes(maxMessageValue), t); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return t, errors.Join(errs...)
}

// valueLoader is the side of a component type bound to a world that a
// Loader uses.
type valueLoader interface {
	lenOnlyCheck() int
	load(e ecs.Entity, src []byte, m ecs.EntityMapper) error
}

// lenOnlyCheck is the encoded size of T when checking a value needs no
// more than its length (the default codec of plain data whose canonical
// bytes are its memory, without bools), 0 otherwise.
func (b *typedComponent[T]) lenOnlyCheck() int {
	if pc, ok := b.codec.(plainCodec[T]); ok && pc.l.Direct {
		return pc.l.Encoded
	}
	return 0
}

// load decodes src, a checked value, into the fresh entity e's
// component, mapping entity references through m (no hooks: a Loader's
// binding has none).
func (b *typedComponent[T]) load(e ecs.Entity, src []byte, m ecs.EntityMapper) error {
	v := &b.tmp
	if err := b.codec.Decode(src, v); err != nil {
		return err
	}
	if b.c.isMap {
		any(v).(ecs.MapEntitieser).MapEntities(m)
	}
	return b.s.Set(e, *v)
}
