package ecs

// EntityMapper maps an entity reference from one identity space to another:
// for example from a server's entities to a client's when a replicated
// component holding references arrives.
type EntityMapper interface {
	MapEntity(e Entity) Entity
}

// EntityMapperFunc adapts a function to EntityMapper.
type EntityMapperFunc func(Entity) Entity

// MapEntity calls f(e).
func (f EntityMapperFunc) MapEntity(e Entity) Entity { return f(e) }

// EntityMap is an EntityMapper backed by a map. Entities missing from the map
// map to the zero Entity, so an unknown reference never aliases a live entity.
type EntityMap map[Entity]Entity

// MapEntity returns m[e] (the zero Entity when absent).
func (m EntityMap) MapEntity(e Entity) Entity { return m[e] }

// MapEntitieser is implemented (on the pointer type) by components and
// resources that hold entity references, so the references can be remapped.
// Implementations map every Entity field through the mapper; the zero Entity
// is never passed to the mapper by helpers of this package.
type MapEntitieser interface {
	MapEntities(m EntityMapper)
}

func mapRef(m EntityMapper, e Entity) Entity {
	if e == 0 {
		return 0
	}
	return m.MapEntity(e)
}

// MapValue remaps the entity references inside *v if T implements
// MapEntitieser on its pointer, and reports whether it did.
func MapValue[T any](v *T, m EntityMapper) bool {
	if me, ok := any(v).(MapEntitieser); ok {
		me.MapEntities(nonZeroMapper{m})
		return true
	}
	return false
}

// nonZeroMapper keeps the zero Entity zero whatever the wrapped mapper does.
type nonZeroMapper struct{ m EntityMapper }

func (n nonZeroMapper) MapEntity(e Entity) Entity { return mapRef(n.m, e) }

// MapEntities remaps the entity references of every value in the Store (when
// T implements MapEntitieser) and marks each value as written. It reports
// whether T holds references.
func (s *Store[T]) MapEntities(m EntityMapper) bool {
	if len(s.dense) == 0 {
		_, ok := any(new(T)).(MapEntitieser)
		return ok
	}
	for p := range s.dense {
		if !MapValue(&s.dense[p], m) {
			return false
		}
		s.mark(p)
	}
	return true
}
