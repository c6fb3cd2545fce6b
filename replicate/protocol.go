package replicate

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"sort"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/typename"
	"github.com/rewindgo/rewind/internal/xxh64"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Replicated marks the entities a server replicates. Remove it (or despawn
// the entity) to despawn the entity on the clients.
type Replicated struct{}

// Mode says when a component's value is sent.
type Mode uint8

const (
	// OnChange sends the value when the entity appears and whenever it
	// changes (the latest value per tick).
	OnChange Mode = iota
	// Once sends the value only when the entity (or the component) first
	// appears on a client; later changes are not sent. Removal is sent.
	Once
)

// MaxComponents is the most component types one Protocol replicates.
const MaxComponents = 64

// ComponentOption configures a replicated component type.
type ComponentOption func(*componentSpec)

type componentSpec struct {
	mode     Mode
	codec    any    // Codec[T] when set
	codecTag string // for the protocol hash
	ownRule  bool
	rng      bool // RNG state (RNGState, or the type is rng.Rand)
	every    int  // WithSendEvery
}

// WithSendEvery sends the component's changes only on ticks that are
// multiples of n (n > 1): for slow or cosmetic data that need not go out
// every tick it changes. A change made between is held and goes out, with
// the value of then, at the next such tick; spawns and insertions carry
// the current value at once. Values sent this way are left out of
// checksums (a client holds an older value between two sends, as with
// Once). Not for a type a client predicts: its authority would look
// unchanged at the ticks between.
func WithSendEvery(n int) ComponentOption {
	return func(s *componentSpec) {
		if n > 1 {
			s.every = n
		}
	}
}

// WithMode sets the component's mode (default OnChange).
func WithMode(m Mode) ComponentOption { return func(s *componentSpec) { s.mode = m } }

// WithOwnRule also adds a Rule of the component alone, with no filters
// and priority 1: the component replicates on every Replicated entity that
// has it (bevy_replicon's replicate::<C>()). Without it, a component
// replicates only through the rules added with AddRule that contain it.
func WithOwnRule() ComponentOption { return func(s *componentSpec) { s.ownRule = true } }

// WithCodec replaces the default codec. tag names the encoding in the
// protocol hash: change it when the encoding changes, so old clients are
// refused instead of misreading values.
func WithCodec[T any](c Codec[T], tag string) ComponentOption {
	return func(s *componentSpec) { s.codec, s.codecTag = c, "custom:"+tag }
}

// WithWireForm sends T as W (for example a float position as an int16 pair
// at a fixed scale), converting with to on the server and from on the
// client. W uses its default codec. tag names the conversion in the
// protocol hash.
func WithWireForm[T, W any](to func(T) W, from func(W) T, tag string) ComponentOption {
	return func(s *componentSpec) {
		wc, err := newPlainCodec[W]()
		if err != nil {
			s.codec = err
			return
		}
		s.codec, s.codecTag = Codec[T](convCodec[T, W]{to: to, from: from, w: wc}), "as:"+typename.Of(reflect.TypeFor[W]())+":"+tag
	}
}

// resolveSpec applies opts and resolves T's codec (the canonical codec of
// plain data unless one is given), with its fixed encoded size (0: sizes
// vary). Components and resources share it.
func resolveSpec[T any](opts []ComponentOption) (spec componentSpec, codec Codec[T], fixed int, err error) {
	for _, o := range opts {
		o(&spec)
	}
	switch c := spec.codec.(type) {
	case nil:
		pc, err := newPlainCodec[T]()
		if err != nil {
			return spec, nil, 0, err
		}
		codec = pc
		spec.codecTag = fmt.Sprintf("plain:%d", pc.l.Encoded)
	case error:
		return spec, nil, 0, c
	case Codec[T]:
		codec = c
	default:
		return spec, nil, 0, fmt.Errorf("%w: codec for another type given to %v", ErrRegistered, reflect.TypeFor[T]())
	}
	if pc, ok := codec.(plainCodec[T]); ok {
		fixed = pc.l.Encoded
	} else if fs, ok := codec.(FixedSizer); ok && fs.FixedSize() > 0 {
		fixed = fs.FixedSize()
		spec.codecTag += fmt.Sprintf(":fixed%d", fixed) // no length prefix: another wire form
	}
	if reflect.TypeFor[T]() == reflect.TypeFor[rng.Rand]() {
		spec.rng = true
	}
	return spec, codec, fixed, nil
}

// component is a registered component type, independent of any world.
type component struct {
	// fixed is the encoded size of every value (plain codec), 0 when the
	// codec's sizes vary (values are then length-prefixed on the wire).
	fixed int
	id    int
	name  string
	typ   reflect.Type
	mode  Mode
	every int // WithSendEvery, 0 or more than 1
	tag   string
	// delta is the bit widths of the fields of the component's encoding
	// (delta.go), nil when its mutations are always absolute (varying
	// sizes, or Once).
	delta []int
	bind  func(w *ecs.World) boundComponent
	isMap bool
	rng   bool // RNG state: in the scope of an RNG-only resync
}

// summed reports whether the type's values enter checksums: not when
// replicated Once or at an interval (clients hold older values between).
func (c *component) summed() bool { return c.mode != Once && c.every <= 1 }

// boundComponent is a component type's operations on one world.
type boundComponent interface {
	info() *component
	has(e ecs.Entity) bool
	changed(e ecs.Entity) uint64
	appendValue(dst []byte, e ecs.Entity) []byte
	// column lists every entity with the component and its change tick.
	column() ([]ecs.Entity, []uint64)
	// write decodes src into e's component (client side), mapping entity
	// references, or hands it to the value hook with kind.
	write(e ecs.Entity, t tick.Tick, kind ValueKind, src []byte, m ecs.EntityMapper) error
	// late hands src, a value for tick t older than what e has, to the
	// value hook (if any), never to the World.
	late(e ecs.Entity, t tick.Tick, src []byte, m ecs.EntityMapper)
	// remove removes e's component at server tick t, or hands the removal
	// to the remove hook.
	remove(e ecs.Entity, t tick.Tick)
	// decodeCheck decodes src without writing it anywhere (validation).
	decodeCheck(src []byte) error
	// adopt asks the adopt hook (if any) which client entity, if any,
	// a server entity spawned at t with value src is.
	adopt(t tick.Tick, src []byte, m ecs.EntityMapper) (ecs.Entity, bool)
}

// Filter restricts a Rule to entities that have (With) or lack (Without) a
// component type, which need not be replicated.
type Filter struct {
	name string
	with bool
	bind func(w *ecs.World) func(ecs.Entity) bool
}

// With is a Filter for entities that have a T.
func With[T any]() Filter {
	return Filter{name: typename.Of(reflect.TypeFor[T]()), with: true, bind: func(w *ecs.World) func(ecs.Entity) bool {
		s := ecs.Register[T](w)
		return s.Has
	}}
}

// Without is a Filter for entities that lack a T.
func Without[T any]() Filter {
	f := With[T]()
	f.with = false
	return f
}

// Rule replicates a set of components together, as in bevy_replicon: a rule
// applies to a Replicated entity that has all of its components and passes
// every filter, and then replicates all of them. A component replicates
// only through the rules that contain it (WithOwnRule adds a rule of the
// component alone): on an entity where none of them applies, it is not
// sent (and is removed from clients that have it). A component in several
// rules replicates when any of them applies; the applying rule with the
// higher Priority decides its Mode (ties: the rule added first). The
// default priority is the number of components plus the number of filters.
type Rule struct {
	Components []ComponentIndex
	Filters    []Filter
	Priority   int
	// Mode, if set, overrides the components' modes within this rule.
	Mode *Mode
}

// ComponentIndex identifies a replicated component type within a
// Protocol: its index in registration order (Component's result), the
// same on the server and every client, and the id the wire and saved
// states carry. It is not an ecs.ComponentID, which numbers the types
// registered in one World (components and resources, in that world's
// order): a type's two numbers differ in general.
type ComponentIndex int

// Direction says who sends a message type.
type Direction uint8

const (
	// ClientToServer messages are sent by clients.
	ClientToServer Direction = iota + 1
	// ServerToClient messages are sent by the server.
	ServerToClient
)

type messageSpec struct {
	// validate decodes a payload into the value kept in *scratch (made on
	// first use: the receiving inbox's typed scratch) and maps its entity
	// references through m.
	validate    func(payload []byte, m ecs.EntityMapper, scratch *any) error
	id          int
	name        string
	dir         Direction
	ch          transport.Channel
	independent bool
	tag         string
}

// Protocol lists what a server and its clients exchange: replicated
// component types, replication rules and message types, in registration
// order. Server and client must build the same Protocol (same calls in the
// same order): its Hash is checked when a client connects.
type Protocol struct {
	comps  []*component
	byType map[reflect.Type]*component
	res    []*resource // replicated resource types (resources.go)
	rules  []Rule
	msgs   []*messageSpec
	custom []string
	frozen bool
	hash   uint64
}

// NewProtocol returns an empty Protocol.
func NewProtocol() *Protocol {
	return &Protocol{byType: map[reflect.Type]*component{}}
}

func (p *Protocol) check() error {
	if p.frozen {
		return fmt.Errorf("%w: the protocol is in use by a server or client", ErrRegistered)
	}
	return nil
}

// Component registers T as a replicated component type. It replicates
// through the rules that contain it (AddRule), or a rule of its own with
// WithOwnRule; a component in no rule makes NewServer and NewClient fail.
func Component[T any](p *Protocol, opts ...ComponentOption) (ComponentIndex, error) {
	if err := p.check(); err != nil {
		return -1, err
	}
	t := reflect.TypeFor[T]()
	if p.byType[t] != nil {
		return -1, fmt.Errorf("%w: %v registered twice", ErrRegistered, t)
	}
	if len(p.comps) >= MaxComponents {
		return -1, fmt.Errorf("%w: more than %d component types", ErrRegistered, MaxComponents)
	}
	spec, codec, fixed, err := resolveSpec[T](opts)
	if err != nil {
		return -1, err
	}
	if spec.every > 1 {
		spec.codecTag += fmt.Sprintf(":every%d", spec.every) // clients sum it or not: both sides must agree
	}
	c := &component{id: len(p.comps), name: typename.Of(t), typ: t, mode: spec.mode, every: spec.every, tag: spec.codecTag, fixed: fixed, rng: spec.rng}
	if spec.mode == OnChange {
		c.delta = fieldBitsOf(codec, fixed)
	}
	_, c.isMap = any((*T)(nil)).(ecs.MapEntitieser)
	c.bind = func(w *ecs.World) boundComponent {
		return &typedComponent[T]{c: c, s: ecs.Register[T](w), codec: codec}
	}
	p.comps = append(p.comps, c)
	p.byType[t] = c
	if spec.ownRule {
		p.rules = append(p.rules, Rule{Components: []ComponentIndex{ComponentIndex(c.id)}, Priority: 1})
	}
	return ComponentIndex(c.id), nil
}

// AddRule adds a replication rule over registered components.
func (p *Protocol) AddRule(r Rule) error {
	if err := p.check(); err != nil {
		return err
	}
	if len(r.Components) == 0 {
		return fmt.Errorf("%w: a rule needs components", ErrRegistered)
	}
	for _, id := range r.Components {
		if id < 0 || int(id) >= len(p.comps) {
			return fmt.Errorf("%w: rule names component %d", ErrUnknownType, id)
		}
	}
	if r.Priority == 0 {
		r.Priority = len(r.Components) + len(r.Filters)
	}
	p.rules = append(p.rules, r)
	return nil
}

// checkRules reports a registered component that is in no rule: it could
// never replicate, which is a mistake in the protocol.
func (p *Protocol) checkRules() error {
	var in uint64
	for _, r := range p.rules {
		for _, id := range r.Components {
			in |= 1 << uint(id)
		}
	}
	for _, c := range p.comps {
		if in&(1<<uint(c.id)) == 0 {
			return fmt.Errorf("%w: component %s is in no rule (add a Rule, or register it WithOwnRule)", ErrRegistered, c.name)
		}
	}
	return nil
}

// AddCustom mixes a string into the protocol hash (for example a game
// version), so that clients built differently are refused.
func (p *Protocol) AddCustom(s string) error {
	if err := p.check(); err != nil {
		return err
	}
	p.custom = append(p.custom, s)
	return nil
}

// Hash is the protocol's fingerprint, compared when a client connects.
func (p *Protocol) Hash() uint64 {
	if p.frozen {
		return p.hash
	}
	return p.computeHash()
}

func (p *Protocol) computeHash() uint64 {
	var b []byte
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	// Version 2: components replicate only through their rules (version 1
	// gave every component an implicit rule of its own).
	str("rewind/replicate/2")
	for _, c := range p.comps {
		str("c")
		str(c.name)
		str(c.tag)
		b = append(b, byte(c.mode))
		if c.rng {
			str("rng")
		}
	}
	for _, r := range p.rules {
		str("r")
		for _, id := range r.Components {
			b = binary.AppendUvarint(b, uint64(id))
		}
		for _, f := range r.Filters {
			str(f.name)
			if f.with {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
		b = binary.AppendVarint(b, int64(r.Priority))
		if r.Mode != nil {
			b = append(b, 1+byte(*r.Mode))
		}
	}
	for _, m := range p.msgs {
		str("m")
		str(m.name)
		str(m.tag)
		b = append(b, byte(m.dir), byte(m.ch))
		if m.independent {
			b = append(b, 1)
		}
	}
	for _, r := range p.res {
		str("R")
		str(r.name)
		str(r.tag)
		b = append(b, byte(r.mode))
		if r.rng {
			str("rng")
		}
	}
	for _, s := range p.custom {
		str("x")
		str(s)
	}
	return xxh64.Sum64(b)
}

func (p *Protocol) freeze() {
	if !p.frozen {
		p.hash = p.computeHash()
		p.frozen = true
	}
}

// resolvedRule is a rule bound to a world, with every component's mode.
type resolvedRule struct {
	comps    uint64 // bitmask of component ids
	modes    []Mode // per component id in the rule
	ids      []int
	filters  []func(ecs.Entity) bool
	want     []bool
	priority int
	order    int
}

// bindRules returns the rules in the order they claim components (decide
// their modes): priority descending, then creation order.
func (p *Protocol) bindRules(w *ecs.World) []resolvedRule {
	var rs []resolvedRule
	for i, r := range p.rules {
		rr := resolvedRule{priority: r.Priority, order: i}
		for _, id := range r.Components {
			rr.comps |= 1 << uint(id)
			rr.ids = append(rr.ids, int(id))
			m := p.comps[id].mode
			if r.Mode != nil {
				m = *r.Mode
			}
			rr.modes = append(rr.modes, m)
		}
		for _, f := range r.Filters {
			rr.filters = append(rr.filters, f.bind(w))
			rr.want = append(rr.want, f.with)
		}
		rs = append(rs, rr)
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].priority != rs[j].priority {
			return rs[i].priority > rs[j].priority
		}
		return rs[i].order < rs[j].order
	})
	return rs
}

// typedComponent is a component type bound to a world.
type typedComponent[T any] struct {
	c     *component
	s     *ecs.Store[T]
	codec Codec[T]
	hooks ComponentHooks[T]
	tmp   T // scratch value: codec calls through an interface would make a local escape
	cur   T
}

func (b *typedComponent[T]) info() *component      { return b.c }
func (b *typedComponent[T]) has(e ecs.Entity) bool { return b.s.Has(e) }
func (b *typedComponent[T]) changed(e ecs.Entity) uint64 {
	t, _ := b.s.Ticks(e)
	return t.Changed
}

func (b *typedComponent[T]) appendValue(dst []byte, e ecs.Entity) []byte {
	b.tmp, _ = b.s.Get(e)
	return b.codec.Append(dst, &b.tmp)
}

func (b *typedComponent[T]) column() ([]ecs.Entity, []uint64) {
	c := b.s.Column()
	return c.Entities, c.Changed
}

func (b *typedComponent[T]) decodeCheck(src []byte) error {
	return b.codec.Decode(src, &b.tmp)
}

func (b *typedComponent[T]) write(e ecs.Entity, t tick.Tick, kind ValueKind, src []byte, m ecs.EntityMapper) error {
	v := &b.tmp
	if err := b.codec.Decode(src, v); err != nil {
		return err
	}
	if b.c.isMap && m != nil {
		any(v).(ecs.MapEntitieser).MapEntities(m)
	}
	if h := b.hooks.Value; h != nil && h(e, t, *v, kind) {
		return nil
	}
	// Write only a different value, so a resent mutation does not look
	// like a change to the client's own change detection.
	var ok bool
	if b.cur, ok = b.s.Get(e); ok && equalBytes(&b.cur, v) {
		return nil
	}
	return b.s.Set(e, *v)
}

func (b *typedComponent[T]) late(e ecs.Entity, t tick.Tick, src []byte, m ecs.EntityMapper) {
	h := b.hooks.Value
	if h == nil {
		return
	}
	v := &b.tmp
	if b.codec.Decode(src, v) != nil {
		return
	}
	if b.c.isMap && m != nil {
		any(v).(ecs.MapEntitieser).MapEntities(m)
	}
	h(e, t, *v, ValueAuthoritative)
}

func (b *typedComponent[T]) adopt(t tick.Tick, src []byte, m ecs.EntityMapper) (ecs.Entity, bool) {
	h := b.hooks.Adopt
	if h == nil {
		return 0, false
	}
	v := &b.tmp
	if b.codec.Decode(src, v) != nil {
		return 0, false
	}
	if b.c.isMap && m != nil {
		any(v).(ecs.MapEntitieser).MapEntities(m)
	}
	return h(t, *v)
}

// equalBytes compares the memory of two values (conservative: padding or
// pointer fields may make equal values look different, never the reverse).
func equalBytes[T any](a, b *T) bool {
	n := unsafe.Sizeof(*a)
	return string(unsafe.Slice((*byte)(unsafe.Pointer(a)), n)) == string(unsafe.Slice((*byte)(unsafe.Pointer(b)), n))
}

func (b *typedComponent[T]) remove(e ecs.Entity, t tick.Tick) {
	if h := b.hooks.Remove; h != nil && h(e, t) {
		return
	}
	_ = b.s.Remove(e)
}
