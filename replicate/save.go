package replicate

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
)

// Saved state format, version 1: "RWRS", a version byte, the protocol hash
// (8 bytes little-endian), the entity count, then per entity its index and
// generation and its components as (component id, value length, value)
// with the protocol's codecs; integers are uvarints.
const (
	saveMagic      = "RWRS"
	saveVersion    = 1
	maxSavedEntity = 1 << 24
)

// SaveState writes the replicated state of world (every entity marked
// Replicated, with each of its components registered in p) to w: for server
// restarts and debugging. Entity references are written as they are and
// remapped by LoadState.
func SaveState(w io.Writer, world *ecs.World, p *Protocol) error {
	p.freeze()
	comps := make([]boundComponent, len(p.comps))
	for i, c := range p.comps {
		comps[i] = c.bind(world)
	}
	rep := ecs.Register[Replicated](world)
	bw := bufio.NewWriter(w)
	var ents []ecs.Entity
	for e := range world.Entities() {
		if rep.Has(e) {
			ents = append(ents, e)
		}
	}
	b := append([]byte(saveMagic), saveVersion)
	b = binary.LittleEndian.AppendUint64(b, p.hash)
	b = binary.AppendUvarint(b, uint64(len(ents)))
	for _, e := range ents {
		b = appendEntity(b, e)
		var mask uint64
		n := 0
		for i, c := range comps {
			if c.has(e) {
				mask |= 1 << uint(i)
				n++
			}
		}
		b = binary.AppendUvarint(b, uint64(n))
		for i, c := range comps {
			if mask&(1<<uint(i)) == 0 {
				continue
			}
			b = binary.AppendUvarint(b, uint64(i))
			start := len(b)
			b = c.appendValue(b, e)
			v := append([]byte(nil), b[start:]...)
			b = bin.AppendBytes(b[:start], v)
		}
		if len(b) > 1<<16 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// loadMapper maps saved entity ids to the entities LoadState spawned.
type loadMapper map[ecs.Entity]ecs.Entity

func (m loadMapper) MapEntity(e ecs.Entity) ecs.Entity { return m[e] }

// LoadState reads a state written by SaveState into world, spawning a new
// entity (marked Replicated) for each saved one and remapping entity
// references between them. It returns the map from saved to new entities.
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
	if data[4] != saveVersion {
		return nil, fmt.Errorf("%w: saved state version %d", ErrMalformed, data[4])
	}
	if h := binary.LittleEndian.Uint64(data[5:]); h != p.hash {
		return nil, fmt.Errorf("%w: state saved with protocol %016x, this one is %016x", ErrProtocolMismatch, h, p.hash)
	}
	comps := make([]boundComponent, len(p.comps))
	for i, c := range p.comps {
		comps[i] = c.bind(world)
	}
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
	if err := rd.End(); err != nil {
		return nil, malformed(err)
	}
	m := loadMapper{}
	rep := ecs.Register[Replicated](world)
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
	return m, errors.Join(errs...)
}
