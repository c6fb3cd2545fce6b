package replicate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

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
)

// stateEncoder writes the saved state form of one world; SaveState and
// checkpoints (checkpoint.go) share it. Its buffers are reused, so
// encoding allocates nothing once they have grown.
type stateEncoder struct {
	w     *ecs.World
	p     *Protocol
	comps []boundComponent
	res   []boundResource
	rep   *ecs.Store[Replicated]
	val   []byte
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

// appendState appends the saved state of the world to b. Entities come in
// the world's order, so equal worlds give equal bytes.
func (s *stateEncoder) appendState(b []byte) []byte {
	b = append(b, saveMagic...)
	b = append(b, saveVersion)
	b = binary.LittleEndian.AppendUint64(b, s.p.hash)
	b = binary.AppendUvarint(b, uint64(s.rep.Len()))
	for e := range s.w.Entities() {
		if !s.rep.Has(e) {
			continue
		}
		b = appendEntity(b, e)
		var mask uint64
		for i, c := range s.comps {
			if c.has(e) {
				mask |= 1 << uint(i)
			}
		}
		b = binary.AppendUvarint(b, uint64(bits.OnesCount64(mask)))
		for m := mask; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			b = binary.AppendUvarint(b, uint64(i))
			if f := s.p.comps[i].fixed; f > 0 {
				// Known length: encode in place, no copy.
				b = binary.AppendUvarint(b, uint64(f))
				b = s.comps[i].appendValue(b, e)
				continue
			}
			s.val = s.comps[i].appendValue(s.val[:0], e)
			b = bin.AppendBytes(b, s.val)
		}
	}
	n := 0
	for _, r := range s.res {
		if present, _ := r.state(); present {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for i, r := range s.res {
		if present, _ := r.state(); present {
			b = binary.AppendUvarint(b, uint64(i))
			s.val = r.appendValue(s.val[:0])
			b = bin.AppendBytes(b, s.val)
		}
	}
	return b
}

// SaveState writes the replicated state of world (every entity marked
// Replicated, with each of its components registered in p, and the present
// resources registered with ReplicateResource) to w: for server restarts,
// debugging and checkpoints (Checkpoints holds the same form). Entity
// references are written as they are and remapped by LoadState.
func SaveState(w io.Writer, world *ecs.World, p *Protocol) error {
	_, err := w.Write(newStateEncoder(world, p).appendState(nil))
	return err
}

// loadMapper maps saved entity ids to the entities LoadState spawned.
type loadMapper map[ecs.Entity]ecs.Entity

func (m loadMapper) MapEntity(e ecs.Entity) ecs.Entity { return m[e] }

// LoadState reads a state written by SaveState into world, spawning a new
// entity (marked Replicated) for each saved one, setting the saved
// resources and remapping entity references between them. It returns the map from saved to new entities.
// A state saved with another protocol is refused (ErrProtocolMismatch);
// malformed input returns an error wrapping ErrMalformed and spawns nothing.
func LoadState(r io.Reader, world *ecs.World, p *Protocol) (map[ecs.Entity]ecs.Entity, error) {
	p.freeze()
	data, err := io.ReadAll(io.LimitReader(r, 1<<30))
	if err != nil {
		return nil, err
	}
	if len(data) < len(saveMagic)+9 || string(data[:4]) != saveMagic {
		return nil, fmt.Errorf("%w: not a saved replication state", ErrMalformed)
	}
	if data[4] != 1 && data[4] != saveVersion {
		return nil, fmt.Errorf("%w: saved state version %d", ErrMalformed, data[4])
	}
	if h := binary.LittleEndian.Uint64(data[5:]); h != p.hash {
		return nil, fmt.Errorf("%w: state saved with protocol %016x, this one is %016x", ErrProtocolMismatch, h, p.hash)
	}
	enc := newStateEncoder(world, p)
	comps, res := enc.comps, enc.res
	type item struct {
		e     ecs.Entity
		first int
		n     int
	}
	type val struct {
		id int
		v  []byte
	}
	rd := bin.NewReader(data[13:])
	n := rd.Count(maxSavedEntity)
	var items []item
	var vals []val
	seen := map[ecs.Entity]bool{}
	for i := 0; i < n && rd.Err() == nil; i++ {
		it := item{e: readEntity(&rd), first: len(vals)}
		if seen[it.e] {
			rd.Fail(fmt.Errorf("%w: entity %v saved twice", ErrMalformed, it.e))
		}
		seen[it.e] = true
		it.n = rd.Count(MaxComponents)
		for k := 0; k < it.n && rd.Err() == nil; k++ {
			id := int(rd.Uvarint())
			v := rd.LenBytes(maxMessageValue)
			if rd.Err() == nil && (id >= len(comps) || comps[id].decodeCheck(v) != nil) {
				rd.Fail(errValue)
			}
			vals = append(vals, val{id: id, v: v})
		}
		items = append(items, it)
	}
	var resVals []val
	if data[4] >= 2 {
		nr := rd.Count(MaxResources)
		prev := -1
		for i := 0; i < nr && rd.Err() == nil; i++ {
			id := int(rd.Uvarint())
			v := rd.LenBytes(maxMessageValue)
			if rd.Err() == nil && (id <= prev || id >= len(res) || res[id].decodeCheck(v) != nil) {
				rd.Fail(errValue)
			}
			prev = id
			resVals = append(resVals, val{id: id, v: v})
		}
	}
	if err := rd.End(); err != nil {
		return nil, malformed(err)
	}
	m := loadMapper{}
	rep := enc.rep
	for _, it := range items {
		ne := world.Spawn()
		m[it.e] = ne
		_ = rep.Set(ne, Replicated{})
	}
	var errs []error
	for _, it := range items {
		for _, v := range vals[it.first : it.first+it.n] {
			if err := comps[v.id].write(m[it.e], 0, ValueAuthoritative, v.v, m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, v := range resVals {
		if err := res[v.id].write(0, v.v, m); err != nil {
			errs = append(errs, err)
		}
	}
	return m, errors.Join(errs...)
}
