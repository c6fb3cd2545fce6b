package replicate

// Replicated resources (ecs.Resource[T]): registration, the server's
// per-tick scan and per-client section of the update, and the client's
// parsing and applying of that section.
//
// Decision: a resource travels in the update message of the tick it
// changed in (reliable, ordered, applied atomically with the tick's
// structure), not in the mutations. A resource is one value per world, so
// the reliable channel costs nothing per entity; in exchange a client that
// has applied the update of tick T holds exactly the server's resources at
// T, with no completeness rule to check (mutations are latest-value and
// unreliable: a client may hold component values of different ticks until
// a tick completes). Presence is structure (insert, remove) and travels
// with the structure of its tick. The cost: a resource that changes every
// tick makes an update every tick, and loss delays later updates until the
// lost one is resent (head-of-line blocking on the ordered channel).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/internal/typename"
	"github.com/rewindgo/rewind/tick"
)

// MaxResources is the most resource types one Protocol replicates.
const MaxResources = 64

// ResourceID identifies a replicated resource type within a Protocol.
type ResourceID int

// resource is a registered resource type, independent of any world.
type resource struct {
	fixed int // encoded size of every value (plain codec), 0 when sizes vary
	id    int
	name  string
	mode  Mode
	tag   string
	isMap bool // values hold entity references
	rng   bool // RNG state: in the scope of an RNG-only resync
	bind  func(w *ecs.World) boundResource
}

// boundResource is a resource type's operations on one world.
type boundResource interface {
	info() *resource
	// state reports whether the resource is present and its change tick.
	state() (present bool, changed uint64)
	appendValue(dst []byte) []byte
	decodeCheck(src []byte) error
	// write decodes src into the resource (client side), mapping entity
	// references, or hands it to the receive hook.
	write(t tick.Tick, src []byte, m ecs.EntityMapper) error
	// remove removes the resource (or hands the removal to the hook).
	remove(t tick.Tick)
}

// ReplicateResource registers resource type T (an ecs.Resource[T] of the
// world) as replicated: its value and its presence (insert, remove) reach
// every client (or those a filter lets see it, Server.FilterResource) in
// the update of the tick it changed in, applied atomically with the
// entities of that tick. A late joiner gets the present resources in its
// first update. Options are those of components: WithMode (OnChange, the
// default, sends every change; Once sends the value when the resource
// appears on a client, and its removal), WithCodec and WithWireForm; the
// default codec is the canonical form of plain data (package
// internal/canon), as for components. WithOwnRule does not apply. A value
// is sent only when its encoding differs from the last one sent, so a
// resource handed out for writing (Resource.Ptr) but left as it was costs
// nothing on the wire. Entity references in a value (ecs.MapEntitieser)
// are mapped to client entities, as in components: an entity the client
// does not have maps to none, and the value is written again (from the
// bytes received) whenever an update brings or takes away entities, so a
// reference follows its entity appearing later or leaving the client.
func ReplicateResource[T any](p *Protocol, opts ...ComponentOption) (ResourceID, error) {
	if err := p.check(); err != nil {
		return -1, err
	}
	t := reflect.TypeFor[T]()
	name := typename.Of(t)
	for _, r := range p.res {
		if r.name == name {
			return -1, fmt.Errorf("%w: resource %v registered twice", ErrRegistered, t)
		}
	}
	if len(p.res) >= MaxResources {
		return -1, fmt.Errorf("%w: more than %d resource types", ErrRegistered, MaxResources)
	}
	spec, codec, fixed, err := resolveSpec[T](opts)
	if err != nil {
		return -1, err
	}
	if spec.ownRule {
		return -1, fmt.Errorf("%w: WithOwnRule given to resource %v", ErrRegistered, t)
	}
	r := &resource{id: len(p.res), name: name, mode: spec.mode, tag: spec.codecTag, fixed: fixed, rng: spec.rng}
	_, isMap := any((*T)(nil)).(ecs.MapEntitieser)
	r.isMap = isMap
	r.bind = func(w *ecs.World) boundResource {
		return &typedResource[T]{r: r, res: ecs.RegisterResource[T](w), codec: codec, isMap: isMap}
	}
	p.res = append(p.res, r)
	return ResourceID(r.id), nil
}

// typedResource is a resource type bound to a world.
type typedResource[T any] struct {
	r     *resource
	res   *ecs.Resource[T]
	codec Codec[T]
	hook  func(t tick.Tick, v T, present bool) bool
	isMap bool
	tmp   T
}

func (b *typedResource[T]) info() *resource { return b.r }

func (b *typedResource[T]) state() (bool, uint64) {
	return b.res.Present(), b.res.Ticks().Changed
}

func (b *typedResource[T]) appendValue(dst []byte) []byte {
	b.tmp, _ = b.res.Get()
	return b.codec.Append(dst, &b.tmp)
}

func (b *typedResource[T]) decodeCheck(src []byte) error { return b.codec.Decode(src, &b.tmp) }

func (b *typedResource[T]) write(t tick.Tick, src []byte, m ecs.EntityMapper) error {
	v := &b.tmp
	if err := b.codec.Decode(src, v); err != nil {
		return err
	}
	if b.isMap && m != nil {
		any(v).(ecs.MapEntitieser).MapEntities(m)
	}
	if b.hook != nil && b.hook(t, *v, true) {
		return nil
	}
	// Write only a different value, as for components.
	if cur, ok := b.res.Get(); ok && equalBytes(&cur, v) {
		return nil
	}
	b.res.Set(*v)
	return nil
}

func (b *typedResource[T]) remove(t tick.Tick) {
	var zero T
	if b.hook != nil && b.hook(t, zero, false) {
		return
	}
	b.res.Remove()
}

// SetResourceReceiveHook routes the authoritative value (present) or
// removal (!present, v is the zero T) of resource T to fn instead of
// writing it into the world, when fn returns true: a prediction layer
// takes values for past ticks this way. fn gets the server tick of the
// update that carried it.
func SetResourceReceiveHook[T any](c *Client, fn func(t tick.Tick, v T, present bool) bool) error {
	name := typename.Of(reflect.TypeFor[T]())
	for _, b := range c.resources() {
		if b.info().name == name {
			b.(*typedResource[T]).hook = fn
			return nil
		}
	}
	return fmt.Errorf("%w: resource %v", ErrUnknownType, reflect.TypeFor[T]())
}

// Server side.

// resourceTable is the server's view of the replicated resources: each
// one's latest encoding and version, scanned once per tick for all
// clients. Invariant, kept by bindResources and scanResources (this
// file): res and resInfo are parallel, and a resource's version changes
// exactly when its presence or encoding does (resTick: the tick scanned).
type resourceTable struct {
	res      []boundResource
	resInfo  []resShared
	resTmp   []byte
	resWorld uint64    // world tick of the last scan
	resTick  tick.Tick // server tick of the last scan
	resInit  bool      // scanned at least once
}

// resShared is one resource's state on the server, shared by every client.
type resShared struct {
	version uint64 // bumped on every change of value or presence
	present bool
	enc     []byte // encoding of the present value
	filter  func(ClientID) bool
}

// clientResources is what one client was sent of the resources, and the
// tick of its last update with entity sections: mutations need that one
// (their entities' structure), not a later update that carried resources
// only, so a resource changing every tick does not hold the client's
// mutations behind the reliable channel. Invariant: res[i] is what the
// client holds of resource i after the updates sent (resourceSection and
// the methods below are its only writers).
type clientResources struct {
	res       []resClient
	secRes    []byte
	nRes      int
	entUpdate tick.Tick
}

// entitiesSent notes that the update of tick t carried entity sections
// (or is one mutations of t need): mutations of later ticks require it.
func (r *clientResources) entitiesSent(t tick.Tick) { r.entUpdate = t }

// fitResources makes room for n resources (new ones: not held).
func (r *clientResources) fitResources(n int) {
	if len(r.res) < n {
		r.res = append(r.res, make([]resClient, n-len(r.res))...)
	}
}

// forceResource makes the next update send resource j: its value if the
// client wants it, else its removal.
func (r *clientResources) forceResource(j int, want bool) { r.res[j].has = !want }

// forgetResources notes that the client holds no resource (a full resync).
func (r *clientResources) forgetResources() { clear(r.res) }

// wants reports whether client id is to hold the resource: it is present
// and its filter shows it to id.
func (sh *resShared) wants(id ClientID) bool {
	return sh.present && (sh.filter == nil || sh.filter(id))
}

// filtered reports whether a resource has a visibility filter.
func (t *resourceTable) filtered() bool {
	for _, ri := range t.resInfo {
		if ri.filter != nil {
			return true
		}
	}
	return false
}

// resClient is one resource as a client has it.
type resClient struct {
	version uint64
	has     bool
}

// FilterResource makes resource id visible only to the clients for which
// visible returns true (nil: every client, the default). It is asked every
// tick for every client: a client that stops seeing the resource gets its
// removal, one that starts seeing it gets its value, both in the update of
// that tick. visible must be deterministic and cheap.
func (s *Server) FilterResource(id ResourceID, visible func(ClientID) bool) error {
	s.bindResources()
	if id < 0 || int(id) >= len(s.res) {
		return fmt.Errorf("%w: resource %d", ErrUnknownType, id)
	}
	s.resInfo[id].filter = visible
	return nil
}

func (s *Server) bindResources() {
	if len(s.res) == len(s.p.res) {
		return
	}
	for _, r := range s.p.res[len(s.res):] {
		s.res = append(s.res, r.bind(s.w))
		s.resInfo = append(s.resInfo, resShared{})
	}
}

// scanResources updates each resource's encoding and version, once per
// server tick: a value written since the last scan is encoded and compared
// with the previous encoding.
func (s *Server) scanResources(t tick.Tick) {
	if s.resInit && s.resTick == t {
		return
	}
	s.bindResources()
	for i, b := range s.res {
		sh := &s.resInfo[i]
		present, changed := b.state()
		switch {
		case present != sh.present:
			sh.present, sh.enc = present, sh.enc[:0]
			if present {
				sh.enc = b.appendValue(sh.enc)
				checkFixed(s.p.res[i].fixed, len(sh.enc), s.p.res[i].name)
			}
			sh.version++
		case present && (!s.resInit || changed > s.resWorld):
			s.resTmp = b.appendValue(s.resTmp[:0])
			if !bytes.Equal(s.resTmp, sh.enc) {
				sh.enc, s.resTmp = s.resTmp, sh.enc
				sh.version++
			}
		}
	}
	s.resWorld, s.resTick, s.resInit = s.w.Tick(), t, true
}

// resourceSection fills c's resource section of the update of tick t:
// every resource whose value the client has not been sent, or that it may
// no longer have.
func (s *Server) resourceSection(c *serverClient, t tick.Tick) {
	c.secRes, c.nRes = c.secRes[:0], 0
	if len(s.p.res) == 0 {
		return
	}
	s.scanResources(t)
	c.fitResources(len(s.res))
	for i := range s.res {
		sh, cr := &s.resInfo[i], &c.res[i]
		want := sh.wants(c.id)
		switch {
		case want && (!cr.has || cr.version != sh.version && s.p.res[i].mode == OnChange):
			c.secRes = binary.AppendUvarint(c.secRes, uint64(i))
			c.secRes = append(c.secRes, 1)
			if s.p.res[i].fixed == 0 {
				c.secRes = bin.AppendBytes(c.secRes, sh.enc)
			} else {
				c.secRes = append(c.secRes, sh.enc...)
			}
			cr.has, cr.version = true, sh.version
			c.nRes++
		case !want && cr.has:
			c.secRes = binary.AppendUvarint(c.secRes, uint64(i))
			c.secRes = append(c.secRes, 0)
			cr.has = false
			c.nRes++
		}
	}
}

// Client side.

// cliResources is the client's bound resources, one update's parsed
// resource section, and the last bytes and tick received of each resource
// with entity references (written again when entities come or go).
type cliResources struct {
	res     []boundResource
	resVals []resVal
	resRefs []resRef
}

type resRef struct {
	val     []byte
	t       tick.Tick
	present bool
}

type resVal struct {
	id      int
	present bool
	val     []byte
}

// resources returns the client's bound resources, binding them on first
// use.
func (c *Client) resources() []boundResource {
	for _, r := range c.p.res[len(c.res):] {
		c.res = append(c.res, r.bind(c.w))
	}
	return c.res
}

// parseResources reads an update's resource section into c.resVals,
// validating every value: ids strictly ascending, each below the number of
// resources, a presence byte of 0 or 1.
func (c *Client) parseResources(r *bin.Reader) {
	c.resVals = c.resVals[:0]
	res := c.resources()
	n := r.Count(MaxResources)
	prev := -1
	for i := 0; i < n && r.Err() == nil; i++ {
		id := int(r.Uvarint())
		if r.Err() != nil {
			break
		}
		if id <= prev || id >= len(res) {
			r.Fail(errRange)
			break
		}
		prev = id
		v := resVal{id: id}
		switch r.Byte() {
		case 0:
		case 1:
			v.present = true
			if f := c.p.res[id].fixed; f > 0 {
				v.val = r.Bytes(f)
			} else {
				v.val = r.LenBytes(maxMessageValue)
			}
			if r.Err() == nil {
				if err := res[id].decodeCheck(v.val); err != nil {
					r.Fail(err)
				}
			}
		default:
			r.Fail(errRange)
		}
		c.resVals = append(c.resVals, v)
	}
}

// applyResources writes the parsed resource section of the update of tick
// t (after its entities, so references to them resolve), then writes again
// the other resources with references when entities came or went (moved).
func (c *Client) applyResources(t tick.Tick, moved []ecs.Entity) {
	if len(c.resRefs) < len(c.res) {
		c.resRefs = append(c.resRefs, make([]resRef, len(c.res)-len(c.resRefs))...)
	}
	for _, v := range c.resVals {
		b, ref := c.res[v.id], &c.resRefs[v.id]
		if b.info().isMap {
			ref.val, ref.t, ref.present = append(ref.val[:0], v.val...), t, v.present
		}
		if !v.present {
			b.remove(t)
			continue
		}
		if err := b.write(t, v.val, &c.mapper); err != nil {
			c.stats.Malformed++
		}
	}
	if len(moved) == 0 {
		return
	}
	for id, b := range c.res {
		ref := &c.resRefs[id]
		if !b.info().isMap || !ref.present || ref.t == t {
			continue
		}
		if err := b.write(ref.t, ref.val, &c.mapper); err != nil {
			c.stats.Malformed++
		}
	}
}

// clearResources removes the replicated resources (on disconnect).
func (c *Client) clearResources() {
	for _, b := range c.res {
		b.remove(c.applied)
	}
	for i := range c.resRefs {
		c.resRefs[i].present = false
	}
}
