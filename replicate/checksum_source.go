package replicate

// A checksum source: a prediction layer holds predicted values, ticks
// ahead of the server, in the World, so the World's checksum is not the
// state of the tick a report describes. HoldChecksums makes the client
// compute each report at its usual moment (the entities part, the
// non-predicted types and resources are right then) and hold it; the
// source supplies the parts of its own types once it knows them
// (ReportChecksum), computed from the values it keeps per tick with a
// ComponentSummer or ResourceSummer, the same per-value terms as
// Client.Checksum: one checksum implementation.

import (
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/parts"
	"github.com/rewindgo/rewind/internal/typename"
	"github.com/rewindgo/rewind/internal/xxh64"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// heldReport is a report computed at its moment and held for the
// checksum source.
type heldReport struct {
	tick  tick.Tick
	used  bool
	parts []Part
	ids   []idPart
}

// HoldChecksums makes the client hold each checksum report
// (ClientConfig.ChecksumInterval) instead of sending it, and call due
// with its tick: the report is computed at its usual moment, and is sent
// by ReportChecksum once the caller supplied the parts of its own types
// (predict.Attach installs this for a predicting client). The last MaxPendingChecksums
// held reports are kept; an older one is dropped unsent. Nil sends
// reports at once again and drops the held ones.
func (c *Client) HoldChecksums(due func(t tick.Tick)) {
	c.desync.hold = due
	if due == nil {
		for i := range c.desync.held {
			c.desync.held[i].used = false
		}
	}
}

// hold keeps the report of t (sum parts in c.desync.scratch, ids in
// c.desync.ids), replacing the oldest held one when all are in use.
func (c *Client) holdReport(t tick.Tick) {
	d := &c.desync
	var slot *heldReport
	for i := range d.held {
		h := &d.held[i]
		if !h.used {
			slot = h
			break
		}
		if slot == nil || h.tick.Before(slot.tick) {
			slot = h
		}
	}
	if slot == nil || (slot.used && len(d.held) < MaxPendingChecksums) {
		d.held = append(d.held, heldReport{})
		slot = &d.held[len(d.held)-1]
	}
	slot.tick, slot.used = t, true
	slot.parts = append(slot.parts[:0], d.scratch...)
	slot.ids = append(slot.ids[:0], d.ids...)
}

// ReportChecksum sends the held checksum report of tick t (HoldChecksums)
// with the parts of the same names replaced by sums (a ComponentSummer
// or ResourceSummer sum over the caller's values of t); a part whose name
// the report lacks (a type replicated Once, an absent resource) is
// ignored. It reports whether a report of t was held and the client is
// still connected (a disconnected client drops it and sends nothing).
func (c *Client) ReportChecksum(t tick.Tick, sums []Part) bool {
	d := &c.desync
	for i := range d.held {
		h := &d.held[i]
		if !h.used || h.tick != t {
			continue
		}
		h.used = false
		if c.state != Connected {
			return false
		}
		for _, p := range sums {
			for k := range h.parts {
				if h.parts[k].Name == p.Name {
					h.parts[k].Sum = p.Sum
					h.ids[k].sum = p.Sum
				}
			}
		}
		b := appendChecksumReport(c.out[:0], t, parts.Combine(h.parts), h.ids)
		c.out = b
		if c.send(transport.ReliableOrdered, b) == nil {
			c.stats.ChecksumsSent++
		}
		return true
	}
	return false
}

// ComponentSummer computes a client's checksum part of component type T
// over values the caller keeps (a predicted type's values at a past
// tick), with the terms Client.Checksum sums over the World's store: one
// per entity, of its server id and the codec's bytes of its value with
// entity references mapped to server entities. Not safe for concurrent
// use.
type ComponentSummer[T any] struct {
	c   *Client
	b   *typedComponent[T]
	bit uint64 // T's component bit
	tmp T
	buf []byte
}

// NewComponentSummer returns the summer of component type T of c's
// protocol (ErrUnknownType when T is not registered).
func NewComponentSummer[T any](c *Client) (*ComponentSummer[T], error) {
	pc := c.p.byType[reflect.TypeFor[T]()]
	if pc == nil {
		return nil, fmt.Errorf("%w: %v", ErrUnknownType, reflect.TypeFor[T]())
	}
	return &ComponentSummer[T]{c: c, b: c.comps[pc.id].(*typedComponent[T]), bit: 1 << uint(pc.id)}, nil
}

// Counts reports whether client entity e's value of T enters the
// checksum: false when the server's rules replicate T Once on e (a Rule
// with Mode Once: the server leaves such values out, as the client keeps
// the value it got while the server's may change). An entity the client
// does not replicate counts (its term is the caller's to leave out).
func (s *ComponentSummer[T]) Counts(e ecs.Entity) bool {
	rec, ok := s.c.recordOf(e)
	return !ok || rec.once&s.bit == 0
}

// Name is the name of T's checksum part (Part.Name).
func (s *ComponentSummer[T]) Name() string { return s.b.c.name }

// Term returns the term of server entity se with value v; a part is the
// sum (with wrap-around) of its entities' terms.
func (s *ComponentSummer[T]) Term(se ecs.Entity, v *T) uint64 {
	s.tmp = *v
	if s.b.c.isMap {
		any(&s.tmp).(ecs.MapEntitieser).MapEntities(s.c.toServer())
	}
	s.buf = s.b.codec.Append(s.buf[:0], &s.tmp)
	return entityValueSum(se, s.buf)
}

// ResourceSummer computes a client's checksum part of resource type T
// over a value the caller keeps, as Client.Checksum does over the World's
// resource. Not safe for concurrent use.
type ResourceSummer[T any] struct {
	c    *Client
	b    *typedResource[T]
	name string
	tmp  T // v with its entity references mapped
	buf  []byte
}

// NewResourceSummer returns the summer of resource type T of c's protocol
// (ErrUnknownType when T is not registered).
func NewResourceSummer[T any](c *Client) (*ResourceSummer[T], error) {
	name := typename.Of(reflect.TypeFor[T]())
	for _, b := range c.resources() {
		if b.info().name == name {
			return &ResourceSummer[T]{c: c, b: b.(*typedResource[T]), name: "resource " + name}, nil
		}
	}
	return nil, fmt.Errorf("%w: resource %v", ErrUnknownType, reflect.TypeFor[T]())
}

// Name is the name of T's checksum part (Part.Name).
func (s *ResourceSummer[T]) Name() string { return s.name }

// Sum returns the part of the resource holding v.
func (s *ResourceSummer[T]) Sum(v *T) uint64 {
	s.tmp = *v
	if s.b.isMap {
		any(&s.tmp).(ecs.MapEntitieser).MapEntities(s.c.toServer())
	}
	s.buf = s.b.codec.Append(s.buf[:0], &s.tmp)
	return xxh64.Sum64(s.buf)
}
