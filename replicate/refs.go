package replicate

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// refValue is the last value written of a component that holds entity
// references, kept with the server entities it refers to. When one of them
// appears on the client (it was not visible yet, or was hidden and shown
// again under a new client entity) or disappears from it (despawned or
// hidden), the value is written again, so the reference points at the
// right client entity, or at none.
type refValue struct {
	se   ecs.Entity
	id   int
	t    tick.Tick
	val  []byte
	refs []ecs.Entity // server entities referred to (none excluded)
	// pos[k] is the index of this value's entry for refs[k] in
	// refIndex.byRef[refs[k]].
	pos   []int32
	next  int32  // next value of the same entity (slot+1), 0 at the end
	stamp uint32 // refIndex.stamp when last collected by rewrite
}

// refEntry names reference k of the value in slot.
type refEntry struct{ slot, k int32 }

// refIndex holds the client's values with references, each linked from its
// entity's record (cliEnt.vals), and indexes them by the server entities
// they refer to. Writing, forgetting and finding the values that refer to an
// entity cost O(1) per reference, whatever the number of values.
type refIndex struct {
	vals  []refValue
	free  []int32
	byRef map[ecs.Entity][]refEntry
	pool  [][]refEntry // empty lists, reused (no allocation per changed reference)
	stamp uint32
	hits  []int32
}

const maxRefPool = 1024

func (x *refIndex) reset() {
	x.vals, x.free = x.vals[:0], x.free[:0]
	clear(x.byRef)
}

func (x *refIndex) alloc() int32 {
	var s int32
	if n := len(x.free); n > 0 {
		s = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		s = int32(len(x.vals))
		x.vals = append(x.vals, refValue{})
	}
	v := &x.vals[s]
	*v = refValue{val: v.val[:0], refs: v.refs[:0], pos: v.pos[:0]}
	return s
}

func (x *refIndex) link(slot int32, r ecs.Entity) {
	l, ok := x.byRef[r]
	if !ok && len(x.pool) > 0 {
		l = x.pool[len(x.pool)-1]
		x.pool = x.pool[:len(x.pool)-1]
	}
	v := &x.vals[slot]
	v.refs = append(v.refs, r)
	v.pos = append(v.pos, int32(len(l)))
	x.byRef[r] = append(l, refEntry{slot: slot, k: int32(len(v.refs) - 1)})
}

// unlink removes the value's entries from byRef.
func (x *refIndex) unlink(slot int32) {
	v := &x.vals[slot]
	for k, r := range v.refs {
		l := x.byRef[r]
		i := v.pos[k]
		last := l[len(l)-1]
		l[i] = last
		x.vals[last.slot].pos[last.k] = i
		l = l[:len(l)-1]
		if len(l) == 0 {
			delete(x.byRef, r)
			if len(x.pool) < maxRefPool {
				x.pool = append(x.pool, l)
			}
			continue
		}
		x.byRef[r] = l
	}
	v.refs, v.pos = v.refs[:0], v.pos[:0]
}

// remember keeps val, written at tick t, as the value of component id of
// rec, referring to the server entities refs.
func (c *Client) remember(rec *cliEnt, id int, t tick.Tick, val []byte, refs []ecs.Entity) {
	x := &c.refs
	slot := int32(-1)
	for s := rec.vals; s != 0; s = x.vals[s-1].next {
		if x.vals[s-1].id == id {
			slot = s - 1
			break
		}
	}
	if slot < 0 {
		slot = x.alloc()
		v := &x.vals[slot]
		v.se, v.id, v.next = rec.server, id, rec.vals
		rec.vals = slot + 1
	}
	x.unlink(slot)
	v := &x.vals[slot]
	v.t = t
	v.val = append(v.val[:0], val...)
	for _, r := range refs {
		if !r.IsZero() {
			x.link(slot, r)
		}
	}
}

// forget drops rec's remembered value of component id, or every one of its
// values when id < 0.
func (c *Client) forget(rec *cliEnt, id int) {
	x := &c.refs
	prev := &rec.vals
	for s := *prev; s != 0; s = *prev {
		v := &x.vals[s-1]
		if id >= 0 && v.id != id {
			prev = &v.next
			continue
		}
		*prev = v.next
		x.unlink(s - 1)
		x.free = append(x.free, s-1)
	}
}

// rewrite writes again, once each, the remembered values that refer to the
// server entities in changed (which appeared on the client or left it in
// the update of tick t), so that their references map to the current
// client entities or to none. A value hook sees it as ValueRemapped at t
// (or at the value's own tick when that is newer): the server's value did
// not change, only what its references resolve to on this client, from t on.
func (c *Client) rewrite(changed []ecs.Entity, t tick.Tick) {
	x := &c.refs
	if len(x.byRef) == 0 {
		return
	}
	x.stamp++
	if x.stamp == 0 { // wrapped: no value may look collected already
		for i := range x.vals {
			x.vals[i].stamp = 0
		}
		x.stamp = 1
	}
	x.hits = x.hits[:0]
	for _, e := range changed {
		for _, en := range x.byRef[e] {
			if v := &x.vals[en.slot]; v.stamp != x.stamp {
				v.stamp = x.stamp
				x.hits = append(x.hits, en.slot)
			}
		}
	}
	for _, s := range x.hits {
		v := &x.vals[s]
		rec, ok := c.record(v.se)
		if !ok || !c.comps[v.id].has(rec.client) {
			continue
		}
		c.mapper.refs = c.mapper.refs[:0]
		at := t
		if v.t.After(at) {
			at = v.t
		}
		_ = c.comps[v.id].write(rec.client, at, ValueRemapped, v.val, &c.mapper)
	}
}
