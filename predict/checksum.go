package predict

// Desync detection for a predicting client: the checksum a client reports
// of server tick T must describe its confirmed state at T, but the World
// holds predicted values of ticks ahead. replicate computes the report at
// its usual moment (T complete, nothing newer applied: the entities part
// and the non-predicted types are right then) and holds it
// (replicate.Client.HoldChecksums); after the Step that made T's history
// final, the Timeline sums each predicted type's history at T with the
// same per-value terms (replicate.ComponentSummer, ResourceSummer),
// replaces those parts and sends the report (ReportChecksum). Nothing is
// written to the World, so no change stamp is left behind.

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// summer computes one predicted type's checksum part at a tick from its
// history (nil when the type is not replicated by the client's protocol).
type summer interface {
	// part returns the type's part at t (s.at), false when the history
	// does not hold t.
	part(t tick.Tick, s *checksums) (replicate.Part, bool)
	// hold notes what the type's part at t needs beyond the history, at
	// t's completion (replicate's report moment).
	hold(t tick.Tick)
	// once returns the summer's bit (goneEnt.once) when client entity e's
	// value does not enter the checksum (its type replicated Once on e),
	// 0 otherwise; asked while replicate still maps e.
	once(e ecs.Entity) uint64
}

// dueSum is a held report of tick t, due once a Step ran after it
// (the Step at abs nowAbs) and t is older than Now.
type dueSum struct {
	t    tick.Tick
	step uint64
}

// goneEnt is a replicated entity despawned by the server at tick t after a
// held report's tick: its value at the report's tick still counts under
// its server id, unless its type was replicated Once on it; replicate
// forgets both the id and the entity's rules at the despawn, so they are
// noted then.
type goneEnt struct {
	e, se ecs.Entity
	t     tick.Tick
	once  uint64 // the component summers' bits of the types replicated Once on e
}

// checksums is a Timeline's side of desync detection (AttachChecksum).
type checksums struct {
	c    *replicate.Client
	tl   *Timeline
	due  []dueSum
	gone []goneEnt
	// mapped is replicate's mapping of client entities to server ids
	// (c.ServerEntity; internal tests give their own).
	mapped func(ecs.Entity) (ecs.Entity, bool)
	sums   []summer // by registered type, built at the first report
	bits   int      // component summers built (each has its bit: compSummer.bit)
	parts  []replicate.Part
	at     tick.Tick // the tick being summed (see entity)
}

// AttachChecksum makes c's checksum reports (replicate.ClientConfig's
// ChecksumInterval) describe the Timeline's confirmed state: the report
// of server tick T is held until the Step that makes T's history final
// (T complete, its authoritative values compared and any rollback done:
// the history of T then holds the server's values of T), and the parts of
// the predicted types registered with tl and replicated by c's protocol
// are their history at T instead of the World's predicted values; the
// other parts (the replicated entities, non-predicted types and
// resources) are the World's when T completed, as without prediction.
// While rollbacks are held (Timeline.HoldRollbacks) reports wait for the
// first Step after the release; an entity the server despawned after T
// meanwhile still counts at T under the server id and rules it had then.
// Attach and NewClientFrame call it. A report whose tick leaves the
// window before a Step finalises it, or is older than a full resync, is
// not sent (Stats.ChecksumsDropped).
func AttachChecksum(c *replicate.Client, tl *Timeline) {
	s := &checksums{c: c, tl: tl, mapped: c.ServerEntity}
	tl.sums = s
	c.HoldChecksums(s.held)
}

// maxDue bounds the reports waiting for their Step: replicate holds as
// many (a Timeline not stepped meanwhile drops the oldest).
const maxDue = replicate.MaxPendingChecksums

// held is replicate's HoldChecksums callback: the report of t waits.
func (s *checksums) held(t tick.Tick) {
	if len(s.due) == maxDue {
		s.tl.stats.ChecksumsDropped++
		s.due = append(s.due[:0], s.due[1:]...)
	}
	s.due = append(s.due, dueSum{t: t, step: s.tl.nowAbs})
	s.build()
	for _, sm := range s.sums {
		if sm != nil {
			sm.hold(t)
		}
	}
}

// build makes the summers of the registered types not summed yet.
func (s *checksums) build() {
	for _, h := range s.tl.types[len(s.sums):] {
		var sm summer
		if hs, ok := h.(interface {
			summer(*replicate.Client) summer
		}); ok {
			sm = hs.summer(s.c)
		}
		if cs, ok := sm.(interface{ setBit(uint64) }); ok && s.bits < 64 {
			// At most 64: replicate's protocol has at most
			// replicate.MaxComponents component types.
			cs.setBit(1 << uint(s.bits))
			s.bits++
		}
		s.sums = append(s.sums, sm)
	}
}

// despawned notes a server despawn of client entity e at tick t (Hooks'
// Despawn hook, while replicate still maps e) when a held report is older:
// its server id, and which types are replicated Once on it (left out of
// the report as the server leaves them out of its checksum). A report
// waits for the Step that makes its tick final, several frames while
// rollbacks are held (HoldRollbacks), and the Update that completed its
// tick may bring later ticks too, so despawns after its tick can arrive
// before it is sent.
func (s *checksums) despawned(e ecs.Entity, t tick.Tick) {
	for _, d := range s.due {
		if d.t.Before(t) {
			if se, ok := s.mapped(e); ok {
				s.build()
				var once uint64
				for _, sm := range s.sums {
					if sm != nil {
						once |= sm.once(e)
					}
				}
				s.gone = append(s.gone, goneEnt{e: e, se: se, t: t, once: once})
			}
			return
		}
	}
}

// entity returns the server id of client entity e at tick s.at and
// whether the value of the type of component summer bit enters the
// checksum there (counts, replicate.ComponentSummer.Counts, for an entity
// replicate maps): replicate's mapping and rules, or, for an entity the
// server despawned after s.at, those noted at its despawn. ok is false
// when e was not replicated at s.at.
func (s *checksums) entity(e ecs.Entity, bit uint64, counts func(ecs.Entity) bool) (se ecs.Entity, count, ok bool) {
	if se, ok := s.mapped(e); ok {
		return se, counts(e), true
	}
	for _, g := range s.gone {
		if g.e == e && s.at.Before(g.t) {
			return g.se, g.once&bit == 0, true
		}
	}
	return 0, false, false
}

// flush sends the held reports the last Step made final (end of Step).
func (s *checksums) flush() {
	tl := s.tl
	if len(s.due) == 0 {
		return
	}
	s.build()
	k := 0
	for _, d := range s.due {
		switch {
		case tl.nowAbs <= d.step || !d.t.Before(tl.now):
			s.due[k] = d // not final yet
			k++
			continue
		case d.t.Before(tl.low()) || (tl.rs.has && d.t.Before(tl.rs.at)) || tl.unsettledAt(d.t):
			tl.stats.ChecksumsDropped++
			continue
		}
		s.at = d.t
		s.parts = s.parts[:0]
		ok := true
		for _, sm := range s.sums {
			if sm == nil {
				continue
			}
			p, held := sm.part(d.t, s)
			if !held {
				ok = false
				break
			}
			if p.Name != "" {
				s.parts = append(s.parts, p)
			}
		}
		if ok && s.c.ReportChecksum(d.t, s.parts) {
			tl.stats.ChecksumsReported++
		} else {
			tl.stats.ChecksumsDropped++
		}
	}
	s.due = s.due[:k]
	// Despawns at or before every held report's tick no longer matter.
	k = 0
	for _, g := range s.gone {
		for _, d := range s.due {
			if d.t.Before(g.t) {
				s.gone[k] = g
				k++
				break
			}
		}
	}
	s.gone = s.gone[:k]
}

// compSummer sums a predicted component type's history, and the values
// of its AttachSplit buffer.
type compSummer[T any] struct {
	c      *Component[T]
	s      *replicate.ComponentSummer[T]
	srv    func(ecs.Entity) (ecs.Entity, bool) // replicate's mapping now
	counts func(ecs.Entity) bool               // s.Counts
	bit    uint64                              // the summer's bit in goneEnt.once
	split  [maxDue + 1]splitSum                // the buffer's sums of the held reports
}

// splitSum is the sum of an AttachSplit buffer's values at tick t.
type splitSum struct {
	t    tick.Tick
	sum  uint64
	used bool
}

// summer returns the component's summer for client c, nil when c's
// protocol does not replicate T.
func (c *Component[T]) summer(rc *replicate.Client) summer {
	s, err := replicate.NewComponentSummer[T](rc)
	if err != nil {
		return nil
	}
	return &compSummer[T]{c: c, s: s, srv: rc.ServerEntity, counts: s.Counts}
}

// setBit gives the summer its bit in goneEnt.once.
func (cs *compSummer[T]) setBit(bit uint64) { cs.bit = bit }

// once returns the summer's bit when T is replicated Once on e.
func (cs *compSummer[T]) once(e ecs.Entity) uint64 {
	if cs.s.Counts(e) {
		return 0
	}
	return cs.bit
}

// hold sums the values of the AttachSplit buffer's entities at t, at t's
// completion: replicate reports t when it is the newest tick seen and
// complete, so the buffer then holds every value up to t and none newer,
// and replicate still maps the entities alive at t. Each entity counts
// its newest value at or before t (unchanged since: the server's value
// at t), under its server id; an entity replicate no longer maps (gone
// at or before t, not yet removed from the buffer) does not count.
func (cs *compSummer[T]) hold(t tick.Tick) {
	b := cs.c.split
	if b == nil {
		return
	}
	var sum uint64
	for i := range b.Slots() {
		e, v, ok := b.HeldAt(i, t)
		if !ok {
			continue
		}
		if se, ok := cs.srv(e); ok && cs.s.Counts(e) {
			sum += cs.s.Term(se, v)
		}
	}
	k := 0 // the slot of t, else a free one, else the oldest
	for i := range cs.split {
		x := &cs.split[i]
		if x.used && x.t == t {
			k = i
			break
		}
		if y := &cs.split[k]; y.used && (!x.used || x.t.Before(y.t)) {
			k = i
		}
	}
	cs.split[k] = splitSum{t: t, sum: sum, used: true}
}

// splitAt returns (and forgets) the AttachSplit buffer's sum at t; false
// when hold did not note t.
func (cs *compSummer[T]) splitAt(t tick.Tick) (uint64, bool) {
	for i := range cs.split {
		if x := &cs.split[i]; x.used && x.t == t {
			x.used = false
			return x.sum, true
		}
	}
	return 0, false
}

// part sums the history of t over the replicated entities. A type with a
// compare function may hold a prediction the compare accepted in place of
// the server's value of t: the authoritative values of t replace them.
func (cs *compSummer[T]) part(t tick.Tick, s *checksums) (replicate.Part, bool) {
	c := cs.c
	f := &c.hist[c.tl.slot(t)]
	if !f.held || f.t != t || f.buf == nil {
		return replicate.Part{}, false
	}
	var sum uint64
	if c.split != nil {
		var ok bool
		if sum, ok = cs.splitAt(t); !ok {
			return replicate.Part{}, false
		}
	}
	vals := f.buf.vals
	for p, e := range f.layout.Ents {
		if se, count, ok := s.entity(e, cs.bit, cs.counts); ok && count {
			sum += cs.s.Term(se, &vals[p])
		}
	}
	if c.p.compare != nil {
		ops := c.ops(t)
		for i := range ops {
			o := &ops[i]
			if !o.auth || o.kind != opSet || laterOp(ops[i+1:], o.e) {
				continue
			}
			p := f.layout.Pos(o.e)
			se, count, ok := s.entity(o.e, cs.bit, cs.counts)
			if p < 0 || !ok || !count {
				continue
			}
			sum += cs.s.Term(se, &o.v) - cs.s.Term(se, &vals[p])
		}
	}
	return replicate.Part{Name: cs.s.Name(), Sum: sum}, true
}

// laterOp reports whether ops hold an authoritative value for e.
func laterOp[T any](ops []op[T], e ecs.Entity) bool {
	for i := range ops {
		if ops[i].auth && ops[i].e == e {
			return true
		}
	}
	return false
}

// resSummer sums a predicted resource's history.
type resSummer[T any] struct {
	r *Resource[T]
	s *replicate.ResourceSummer[T]
}

// summer returns the resource's summer for client c, nil when c's
// protocol does not replicate T.
func (r *Resource[T]) summer(rc *replicate.Client) summer {
	s, err := replicate.NewResourceSummer[T](rc)
	if err != nil {
		return nil
	}
	return &resSummer[T]{r: r, s: s}
}

// part is the resource's part at t: the authoritative value of t when one
// arrived (a compare function may have kept the prediction), else the
// history's. An absent resource has no part (an empty Name): the report
// has none either.
func (rs *resSummer[T]) part(t tick.Tick, _ *checksums) (replicate.Part, bool) {
	r := rs.r
	f := &r.hist[r.tl.slot(t)]
	if !f.held || f.t != t {
		return replicate.Part{}, false
	}
	v, present := &f.v, f.present
	if o := r.op(t); o != nil && o.auth {
		v, present = &o.v, o.present
	}
	if !present {
		return replicate.Part{}, true
	}
	return replicate.Part{Name: rs.s.Name(), Sum: rs.s.Sum(v)}, true
}

// hold does nothing: a resource's part is its history's.
func (rs *resSummer[T]) hold(tick.Tick) {}

// once is 0: a resource belongs to no entity.
func (rs *resSummer[T]) once(ecs.Entity) uint64 { return 0 }
