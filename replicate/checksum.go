package replicate

// The checksum of replicated state, with per-type parts, that server,
// client and checkpoints compute alike: each side's view of its
// replicated entities (entityView), the per-column and per-resource sums,
// and their assembly (stateSummer).

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/parts"
	"github.com/rewindgo/rewind/internal/xxh64"
)

// EntitiesPart is the name of the checksum Part covering which server
// entities are replicated (their ids, index and generation).
const EntitiesPart = "replicate.entities"

// Part is the checksum of one replicated component or resource type (or of
// the replicated entities, EntitiesPart): the same type as snapshot.Part and
// rollback.Part, with fields Name (the type's package path and name,
// "resource " + the name for a resource) and Sum.
//
// Decision: the alias stays although package parts defines the type.
// Without it replicate's API (Server.Checksum, Client.Checksum,
// Checkpoint.Checksum, StateChecksum) would show internal/parts.Part, a
// type users cannot name or look up; snapshot and rollback alias it for
// the same reason, so the three names are one type.
type Part = parts.Part

// mappedComponent sums a component column and mappedResource appends a value with its entity references mapped by m
// (the client maps its entities back to the server's).
type mappedComponent interface {
	// sumColumn is the component's checksum part over the entities v
	// replicates (component id i), scratch a reused buffer.
	sumColumn(v entityView, i int, m ecs.EntityMapper, scratch []byte) (uint64, []byte)
}

type mappedResource interface {
	appendMapped(dst []byte, m ecs.EntityMapper) []byte
}

func (b *typedComponent[T]) sumColumn(v entityView, i int, m ecs.EntityMapper, buf []byte) (uint64, []byte) {
	col := b.s.Column()
	var sum uint64
	for k, e := range col.Entities {
		se, ok := v.server(e)
		if !ok || !v.replicates(e, i) {
			continue
		}
		b.tmp = col.Values[k]
		if b.c.isMap && m != nil {
			any(&b.tmp).(ecs.MapEntitieser).MapEntities(m)
		}
		buf = b.codec.Append(buf[:0], &b.tmp)
		sum += entityValueSum(se, buf)
	}
	return sum, buf
}

// entityValueSum is one entity's term of a component part.
func entityValueSum(se ecs.Entity, val []byte) uint64 {
	return xxh64.Mix64(xxh64.Sum64Prefixed(se.Bits(), val))
}

func (b *typedResource[T]) appendMapped(dst []byte, m ecs.EntityMapper) []byte {
	b.tmp, _ = b.res.Get()
	if b.isMap && m != nil {
		any(&b.tmp).(ecs.MapEntitieser).MapEntities(m)
	}
	return b.codec.Append(dst, &b.tmp)
}

// stateSummer computes the checksum of replicated state. Each part is an
// order-independent sum over entities of the XXH64 of (server entity,
// value bytes), so server and client agree whatever order their stores
// hold entities in, and the frame sum combines the parts as snapshot does
// (parts.Combine). Components and resources replicated Once are left out:
// the server may change them after sending, and clients keep the value
// they got.
type stateSummer struct {
	val      []byte
	resNames []string // "resource " + name, by resource id
}

// entityView is how one side sees its replicated entities: the sum of
// their server ids (entitySum applied to each), the server entity of a
// world entity (ok false: not replicated there), and whether component i
// of it replicates.
type entityView interface {
	entities() uint64
	server(e ecs.Entity) (ecs.Entity, bool)
	replicates(e ecs.Entity, i int) bool
}

// entitySum is one replicated entity's term of the EntitiesPart.
func entitySum(se ecs.Entity) uint64 { return xxh64.Mix64(xxh64.Sum64Prefixed(se.Bits(), nil)) }

func (s *stateSummer) sum(comps []boundComponent, res []boundResource, v entityView, m ecs.EntityMapper, out []Part) (uint64, []Part) {
	out = append(out, Part{Name: EntitiesPart, Sum: v.entities()})
	for i, c := range comps {
		info := c.info()
		if !info.summed() {
			continue
		}
		var sum uint64
		sum, s.val = c.(mappedComponent).sumColumn(v, i, m, s.val)
		out = append(out, Part{Name: info.name, Sum: sum})
	}
	for len(s.resNames) < len(res) {
		s.resNames = append(s.resNames, "resource "+res[len(s.resNames)].info().name)
	}
	for i, r := range res {
		if present, _ := r.state(); !present || r.info().mode == Once {
			continue
		}
		s.val = r.(mappedResource).appendMapped(s.val[:0], m)
		out = append(out, Part{Name: s.resNames[i], Sum: xxh64.Sum64(s.val)})
	}
	return parts.Combine(out), out
}

// worldView: a world's own replicated entities (ids as they are, every
// registered component they have).
type worldView struct{ rep *ecs.Store[Replicated] }

func (v worldView) entities() (sum uint64) {
	for _, e := range v.rep.Column().Entities {
		sum += entitySum(e)
	}
	return sum
}

func (v worldView) server(e ecs.Entity) (ecs.Entity, bool) { return e, v.rep.Has(e) }
func (worldView) replicates(ecs.Entity, int) bool          { return true }

func (s *stateSummer) world(enc *stateEncoder, out []Part) (uint64, []Part) {
	return s.sum(enc.comps, enc.res, worldView{enc.rep}, nil, out)
}

// StateChecksum computes the checksum of the replicated state of world
// under protocol p: every Replicated entity and its registered components,
// and the present replicated resources, leaving out types replicated Once.
// It returns the sum and appends one Part per type to out (EntitiesPart
// first, then components in registration order, then present resources).
// The value depends only on the state and the codecs' bytes: it is the
// same in every process and on every machine (XXH64, no per-process seed).
// A checkpoint's Sum and Parts are this checksum at its tick.
func StateChecksum(world *ecs.World, p *Protocol, out []Part) (uint64, []Part) {
	var s stateSummer
	return s.world(newStateEncoder(world, p), out)
}

// sumServerView: the server's replicated entities and, per entity, the
// components its rules replicate (as sent to clients).
type sumServerView struct{ s *Server }

func (v sumServerView) slot(e ecs.Entity) *srvEnt { return v.s.listed(e) }

func (v sumServerView) entities() (sum uint64) {
	for _, i := range v.s.list {
		sum += entitySum(v.s.ents[i].e)
	}
	return sum
}

func (v sumServerView) server(e ecs.Entity) (ecs.Entity, bool) { return e, v.slot(e) != nil }

func (v sumServerView) replicates(e ecs.Entity, i int) bool {
	se := v.slot(e)
	return se != nil && se.mask&^se.once&(1<<uint(i)) != 0
}

// sumClientView: the client's replicated entities under their server ids.
type sumClientView struct{ c *Client }

func (v sumClientView) entities() (sum uint64) {
	for i := range v.c.ents {
		if v.c.ents[i].alive {
			sum += entitySum(v.c.ents[i].server)
		}
	}
	return sum
}

func (v sumClientView) server(e ecs.Entity) (ecs.Entity, bool) { return v.c.ServerEntity(e) }

// replicates leaves out the components the entity's rules replicate Once
// (the server's updates say which).
func (v sumClientView) replicates(e ecs.Entity, i int) bool {
	rec, ok := v.c.recordOf(e)
	return !ok || rec.once&(1<<uint(i)) == 0
}

// Checksum computes the checksum of the replicated state: every
// replicated entity with the components its rules replicated at the last
// Send, with their current values, and the present resources, leaving out
// types replicated Once. Call it right after Send, before the game changes
// the world, to get the state of that tick. It returns the sum and appends one Part per type to
// out, as Client.Checksum does on a client: a client that has applied
// every update and mutation of a tick (Client.TickComplete), sees every
// entity and resource (no visibility filter) and has not written
// replicated values itself has the same sum and parts; parts.Diff of the
// two (snapshot.Diff) names the types that differ.
func (s *Server) Checksum(out []Part) (uint64, []Part) {
	s.bindResources()
	var st stateSummer
	return st.sum(s.comps, s.res, sumServerView{s}, nil, out)
}

// Checksum computes the checksum of the client's replicated state, in the
// server's terms: entities under their server ids and entity references
// in values mapped back to server entities (a reference the client could
// not resolve counts as none). See Server.Checksum.
func (c *Client) Checksum(out []Part) (uint64, []Part) {
	var st stateSummer
	return st.sum(c.comps, c.resources(), sumClientView{c}, c.toServer(), out)
}
