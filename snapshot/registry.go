package snapshot

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/column"
	"github.com/rewindgo/rewind/internal/xxh64"
)

// Registry lists the component and resource types of one World that are
// saved, loaded and checksummed, each with its strategy. Register every type
// before the first Save: a frame saved before a type was registered does not
// restore that type.
type Registry struct {
	w       *ecs.World
	ents    entSaver
	parts   []saver
	names   map[string]bool
	entHash *column.Plain[ecs.Entity]
	d       xxh64.Digest
	// dumpOpts and dumpBudget: the options of the running DumpInto.
	dumpOpts   DumpOptions
	dumpBudget int
}

// saver saves, loads and checksums one registered type.
type saver interface {
	name() string
	newFrame() frameData
	checksum(d *xxh64.Digest) (uint64, error)
	poolBytes() int
	encodable() error // nil, or ErrNotEncodable (encode.go)
}

// frameData is one type's storage in one ring slot.
type frameData interface {
	save() error
	load(rs *ecs.Restore, savedTick uint64) error
	release()
	bytes() int
	// encode appends the frame's exact byte form; decode fills the frame
	// from one (encode.go).
	encode(b []byte) ([]byte, error)
	decode(d *decoder) error
}

// Option configures a registration.
type Option func(*options)

type options struct{ noChecksum bool }

// NoChecksum excludes a Clone type that cannot encode itself from checksums.
// Its Part is still listed (with a zero sum) so desync reports show the gap.
func NoChecksum() Option { return func(o *options) { o.noChecksum = true } }

// NewRegistry returns a Registry for w. The entity allocator and the
// ecs.Hierarchy component are always included.
func NewRegistry(w *ecs.World) *Registry {
	r := &Registry{w: w, names: make(map[string]bool)}
	r.entHash, _ = column.PlainOf[ecs.Entity]()
	r.ents.r = r
	if err := Copy[ecs.Hierarchy](r); err != nil {
		panic(err) // unreachable: Hierarchy is plain data
	}
	return r
}

// World returns the World the Registry belongs to.
func (r *Registry) World() *ecs.World { return r.w }

func (r *Registry) add(name string, s saver) error {
	if r.names[name] {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	r.names[name] = true
	r.parts = append(r.parts, s)
	return nil
}

func copyValuesFor[T any]() (values[T], error) {
	p, err := column.PlainOf[T]()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotPlainData, err)
	}
	return copyValues[T]{p: p}, nil
}

func cloneValuesFor[T Cloner[T]](opts []Option) (values[T], error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	v := &cloneValues[T]{size: int(reflect.TypeFor[T]().Size()), checksum: !o.noChecksum}
	if v.checksum && !hasAppender[T]() {
		return nil, fmt.Errorf("%w: %s: implement encoding.BinaryAppender or register with snapshot.NoChecksum()", ErrNoChecksum, reflect.TypeFor[T]())
	}
	return v, nil
}

// Copy registers component type T with the copy strategy: values are saved
// and restored with a plain memory copy and checksummed from their bytes. T
// must be plain data; otherwise Copy fails with ErrNotPlainData naming the field.
// T is registered with the World if it was not.
func Copy[T any](r *Registry) error {
	v, err := copyValuesFor[T]()
	if err != nil {
		return err
	}
	return addComponent(r, v)
}

// Clone registers component type T with the clone strategy: T deep-copies
// itself with Clone on save and on load. For checksums T (or *T) must
// implement encoding.BinaryAppender, unless NoChecksum is given.
func Clone[T Cloner[T]](r *Registry, opts ...Option) error {
	v, err := cloneValuesFor[T](opts)
	if err != nil {
		return err
	}
	return addComponent(r, v)
}

// Codec registers component type T with the codec strategy: values are saved
// with AppendBinary, restored with UnmarshalBinary and checksummed from
// their encoding.
func Codec[T any, PT CodecPtr[T]](r *Registry) error {
	return addComponent[T](r, &codecValues[T, PT]{size: int(reflect.TypeFor[T]().Size())})
}

// CopyResource registers resource type T with the copy strategy (see Copy).
func CopyResource[T any](r *Registry) error {
	v, err := copyValuesFor[T]()
	if err != nil {
		return err
	}
	return addResource(r, v)
}

// CloneResource registers resource type T with the clone strategy (see Clone).
func CloneResource[T Cloner[T]](r *Registry, opts ...Option) error {
	v, err := cloneValuesFor[T](opts)
	if err != nil {
		return err
	}
	return addResource(r, v)
}

// CodecResource registers resource type T with the codec strategy (see Codec).
func CodecResource[T any, PT CodecPtr[T]](r *Registry) error {
	return addResource[T](r, &codecValues[T, PT]{size: int(reflect.TypeFor[T]().Size())})
}

func addComponent[T any](r *Registry, v values[T]) error {
	s := ecs.Register[T](r.w)
	return r.add(s.Info().Name, &compSaver[T]{r: r, s: s, v: v})
}

func addResource[T any](r *Registry, v values[T]) error {
	res := ecs.RegisterResource[T](r.w)
	return r.add("resource "+res.Info().Name, &resSaver[T]{r: r, res: res, v: v})
}

// compSaver handles one component type. Entity layouts are shared between
// frames that saved the same layout, so a ring holds one copy of an
// unchanged layout however deep it is.
type compSaver[T any] struct {
	r       *Registry
	s       *ecs.Store[T]
	v       values[T]
	layouts column.Layouts
	// the hash of the entity layout is cached by layout id: layouts change far
	// less often than values, so a checksum hashes values only
	hashedLayout uint64
	layoutHash   uint64
}

func (c *compSaver[T]) name() string { return c.s.Info().Name }

func (c *compSaver[T]) newFrame() frameData { return &compFrame[T]{c: c} }

func (c *compSaver[T]) checksum(d *xxh64.Digest) (uint64, error) {
	col := c.s.Column()
	if c.hashedLayout != col.Layout || c.hashedLayout == 0 {
		d.Reset()
		d.WriteUint64(uint64(len(col.Entities)))
		c.r.entHash.Hash(d, col.Entities)
		c.hashedLayout, c.layoutHash = col.Layout, d.Sum64()
	}
	if cv, ok := c.v.(copyValues[T]); ok && cv.p.Direct {
		// The values' memory is their canonical bytes: hash it in place.
		return xxh64.Sum64Prefixed(c.layoutHash, column.Bytes(col.Values)), nil
	}
	d.Reset()
	d.WriteUint64(c.layoutHash)
	err := c.v.hash(d, col.Values)
	return d.Sum64(), err
}

type compFrame[T any] struct {
	c      *compSaver[T]
	layout *column.Layout
	buf    valueBuf[T]
}

func (f *compFrame[T]) save() error {
	col := f.c.s.Column()
	if f.layout == nil || f.layout.ID != col.Layout {
		column.Release(&f.layout)
		f.layout = f.c.layouts.Acquire(col.Layout, col.Entities, 0)
	}
	return f.c.v.save(&f.buf, col.Values)
}

func (f *compFrame[T]) load(rs *ecs.Restore, savedTick uint64) error {
	dst, changed, write := ecs.RestoreStore(rs, f.c.s, f.layout.ID, f.layout.Ents, savedTick)
	if !write {
		return nil
	}
	return f.c.v.load(dst, &f.buf, changed, savedTick, f.c.r.w.Tick())
}

func (f *compFrame[T]) release() { column.Release(&f.layout) }

func (f *compFrame[T]) bytes() int { return f.c.v.bytes(&f.buf) + int(unsafe.Sizeof(*f)) }

// poolBytes counts the layout buffers once, however many frames share them.
func (c *compSaver[T]) poolBytes() int { return c.layouts.Bytes() }

// resSaver handles one resource type.
type resSaver[T any] struct {
	r   *Registry
	res *ecs.Resource[T]
	v   values[T]
	one [1]T
}

func (c *resSaver[T]) name() string { return "resource " + c.res.Info().Name }

func (c *resSaver[T]) newFrame() frameData { return &resFrame[T]{c: c} }

func (c *resSaver[T]) checksum(d *xxh64.Digest) (uint64, error) {
	d.Reset()
	v, ok := c.res.Get()
	if !ok {
		d.Write([]byte{0})
		return d.Sum64(), nil
	}
	d.Write([]byte{1})
	c.one[0] = v
	err := c.v.hash(d, c.one[:])
	var zero T
	c.one[0] = zero
	return d.Sum64(), err
}

type resFrame[T any] struct {
	c       *resSaver[T]
	present bool
	buf     valueBuf[T]
}

func (f *resFrame[T]) save() error {
	v, ok := f.c.res.Get()
	f.present = ok
	if !ok {
		return nil
	}
	f.c.one[0] = v
	err := f.c.v.save(&f.buf, f.c.one[:])
	var zero T
	f.c.one[0] = zero
	return err
}

// load brings the resource to its saved presence and value through its
// public methods, with the same change-tick rule as a store (see
// ecs.RestoreStore): a resource that comes back, or whose value the load
// changes, is stamped with the current tick; one unwritten since the save is
// left alone.
func (f *resFrame[T]) load(_ *ecs.Restore, savedTick uint64) error {
	res := f.c.res
	if !f.present {
		res.Remove()
		return nil
	}
	now := f.c.r.w.Tick()
	if !res.Present() {
		var zero T
		res.Set(zero) // stamped now: added by the load
	} else if res.Ticks().Changed <= savedTick {
		return nil // unwritten since the save: already the saved value
	}
	v, _ := res.Get()
	f.c.one[0] = v
	changed := [1]uint64{res.Ticks().Changed}
	err := f.c.v.load(f.c.one[:], &f.buf, changed[:], savedTick, now)
	if err == nil && changed[0] == now {
		res.Set(f.c.one[0])
	}
	var zero T
	f.c.one[0] = zero
	return err
}

func (c *resSaver[T]) poolBytes() int { return 0 }

func (f *resFrame[T]) release()   {}
func (f *resFrame[T]) bytes() int { return f.c.v.bytes(&f.buf) + int(unsafe.Sizeof(*f)) }

// entSaver handles the entity allocator, with shared buffers like layouts.
type entSaver struct {
	r       *Registry
	bufs    []*entBuf
	scratch []byte
	// cached hash of the allocator state, by layout id
	hashed uint64
	hash   uint64
}

type entBuf struct {
	st   ecs.EntityState
	refs int
}

func (e *entSaver) acquire(st ecs.EntityState) *entBuf {
	var free *entBuf
	for _, b := range e.bufs {
		if b.refs > 0 && b.st.Layout == st.Layout {
			b.refs++
			return b
		}
		if b.refs == 0 && free == nil {
			free = b
		}
	}
	if free == nil {
		free = &entBuf{}
		e.bufs = append(e.bufs, free)
	}
	free.st.Layout = st.Layout
	free.st.Slots = append(free.st.Slots[:0], st.Slots...)
	free.st.Free = append(free.st.Free[:0], st.Free...)
	free.refs = 1
	return free
}

func (e *entSaver) checksum(d *xxh64.Digest) uint64 {
	st := e.r.w.EntityState()
	if st.Layout == e.hashed && e.hashed != 0 {
		return e.hash
	}
	d.Reset()
	b := binary.LittleEndian.AppendUint64(e.scratch[:0], uint64(len(st.Slots)))
	for _, s := range st.Slots {
		v := uint64(s.Gen) << 1
		if s.Alive {
			v |= 1
		}
		b = binary.LittleEndian.AppendUint64(b, v)
		if len(b) >= 4096 {
			d.Write(b)
			b = b[:0]
		}
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(st.Free)))
	for _, f := range st.Free {
		b = binary.LittleEndian.AppendUint32(b, f)
		if len(b) >= 4096 {
			d.Write(b)
			b = b[:0]
		}
	}
	d.Write(b)
	e.scratch = b
	e.hashed, e.hash = st.Layout, d.Sum64()
	return e.hash
}
