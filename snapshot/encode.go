package snapshot

// Encoded states: the exact byte form of a saved frame, which a rejoining
// peer loads (Ring.Encode, Ring.LoadEncoded).

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
)

// MaxEncodedBytes bounds the encoded state LoadEncoded accepts.
const MaxEncodedBytes = 64 << 20

const (
	stateMagic   = "RWSTATE"
	stateVersion = 1
	// strategy codes of the encoding
	encCopy  = 1
	encCodec = 2
	// maxEncodedValue bounds one codec value's bytes.
	maxEncodedValue = 1 << 20
)

// Encode appends to dst the exact byte form of saved frame f: the entity
// allocator (every slot's generation and liveness, the free list in order)
// and every registered type, in registration order, with its entities in
// store order and their values (copy types in canonical form, codec types
// in their own encoding; resources with their presence). LoadEncoded of
// these bytes into a World with the same registrations brings back exactly
// the same state: the same entities, the same next Spawn, the same
// checksum. The encoding is the same on every machine:
//
//	"RWSTATE", version byte 1
//	uvarint slot count, per slot uvarint generation<<1 | alive
//	uvarint free-list length, per entry uvarint slot index
//	uvarint type count, per type:
//	  uvarint-prefixed name, strategy byte (1 copy, 2 codec), resource byte
//	  component: uvarint count, the entities (uvarints), then the values
//	  resource: presence byte, then the value if present
//	  a copy value is its canonical bytes; a codec value uvarint-prefixed
//
// A Clone type has no exact byte form: Encode fails with ErrNotEncodable
// naming it (register such a type with Codec to make a world encodable).
// It fails with ErrFrameNotHeld when f is not held.
func (g *Ring) Encode(f tick.Tick, dst []byte) ([]byte, error) {
	s := g.slotFor(f)
	if !s.held || s.frame != f {
		return dst, fmt.Errorf("%w: %v", ErrFrameNotHeld, f)
	}
	b := append(dst, stateMagic...)
	b = append(b, stateVersion)
	st := s.ents.st
	b = binary.AppendUvarint(b, uint64(len(st.Slots)))
	for _, sl := range st.Slots {
		v := uint64(sl.Gen) << 1
		if sl.Alive {
			v |= 1
		}
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(st.Free)))
	for _, i := range st.Free {
		b = binary.AppendUvarint(b, uint64(i))
	}
	b = binary.AppendUvarint(b, uint64(len(s.data)))
	for i, d := range s.data {
		name := g.r.parts[i].name()
		b = append(binary.AppendUvarint(b, uint64(len(name))), name...)
		var err error
		if b, err = d.encode(b); err != nil {
			return dst, fmt.Errorf("snapshot: encode frame %v: %w", f, err)
		}
	}
	return b, nil
}

// Encodable reports whether the Registry's worlds can be encoded
// (Ring.Encode): nil, or ErrNotEncodable naming the first Clone type.
func (r *Registry) Encodable() error {
	for _, p := range r.parts {
		if err := p.encodable(); err != nil {
			return fmt.Errorf("%w: %s", err, p.name())
		}
	}
	return nil
}

// LoadEncoded restores the World to the state encoded in b (by Encode, in
// a process whose Registry lists the same types in the same order), keeps
// it as frame f (which Load(f) restores again) and loads it: the World
// holds the same entities with the same generations, the same free list,
// components and resources, and so the same checksum, as the encoded
// frame. Change ticks treat the load as a write of every value it changes.
//
// b is untrusted input: it is validated in full before the World is
// touched. At most MaxEncodedBytes are accepted; bytes that are not a
// valid encoding for this Registry (another type list, an entity that is
// not alive in the encoded allocator or listed twice, a free list naming
// a live or repeated slot, a bad canonical value, trailing bytes) fail
// with ErrStateFormat, a Clone type with ErrNotEncodable, a codec value
// whose UnmarshalBinary fails with ErrDecode. On failure the World is
// unchanged and the ring no longer holds the frame of f's slot.
func (g *Ring) LoadEncoded(f tick.Tick, b []byte) error {
	if err := g.r.Encodable(); err != nil {
		return err
	}
	if len(b) > MaxEncodedBytes {
		return fmt.Errorf("%w: %d bytes, over %d", ErrStateFormat, len(b), MaxEncodedBytes)
	}
	s := g.slotFor(f)
	g.release(s)
	if err := g.decode(s, b); err != nil {
		g.release(s)
		return err
	}
	// Saved "before every tick", so that the load writes every stored
	// value that differs (see ecs.RestoreStore).
	s.frame, s.savedTick, s.held, s.summed = f, 0, true, false
	return g.Load(f)
}

// decoder is the state of one LoadEncoded.
type decoder struct {
	r     bin.Reader
	w     *ecs.World
	slots []ecs.EntitySlot
	seen  []uint32 // per slot: the number of the type that last listed it
	typ   uint32
}

func stateErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrStateFormat}, args...)...)
}

// entity reads one entity of the current type: alive in the decoded
// allocator, listed once.
func (d *decoder) entity() ecs.Entity {
	e := ecs.Entity(d.r.Uvarint())
	if d.r.Err() != nil {
		return 0
	}
	i := e.Index()
	if int(i) >= len(d.slots) || !d.slots[i].Alive || d.slots[i].Gen != e.Generation() {
		d.r.Fail(stateErr("entity %v is not alive", e))
		return 0
	}
	if d.seen[i] == d.typ {
		d.r.Fail(stateErr("entity %v listed twice", e))
		return 0
	}
	d.seen[i] = d.typ
	return e
}

func (g *Ring) decode(s *slot, b []byte) error {
	d := &decoder{r: bin.NewReader(b), w: g.r.w}
	r := &d.r
	if string(r.Bytes(len(stateMagic))) != stateMagic || r.Byte() != stateVersion {
		return stateErr("not an encoded state (magic or version)")
	}
	n := r.Count(math.MaxInt32)
	d.slots = make([]ecs.EntitySlot, n)
	for i := range d.slots {
		v := r.Uvarint()
		if v>>1 == 0 || v>>33 != 0 {
			r.Fail(stateErr("slot %d: generation %d", i, v>>1))
		}
		d.slots[i] = ecs.EntitySlot{Gen: uint32(v >> 1), Alive: v&1 == 1}
	}
	nf := r.Count(len(d.slots))
	free := make([]uint32, nf)
	d.seen = make([]uint32, len(d.slots))
	for k := range free {
		i := r.Uvarint()
		if r.Err() != nil {
			break
		}
		if i >= uint64(len(d.slots)) || d.slots[i].Alive || d.seen[i] != 0 {
			r.Fail(stateErr("free list entry %d: slot %d is out of range, alive or repeated", k, i))
			break
		}
		d.seen[i] = 1
		free[k] = uint32(i)
	}
	if err := r.Err(); err != nil {
		return stateErr("entities: %w", err)
	}
	if nt := r.Count(len(g.r.parts)); nt != len(g.r.parts) || r.Err() != nil {
		return stateErr("%d types, this registry has %d", nt, len(g.r.parts))
	}
	for len(s.data) < len(g.r.parts) {
		s.data = append(s.data, g.r.parts[len(s.data)].newFrame())
	}
	for i, p := range g.r.parts {
		name := r.LenBytes(maxDumpName)
		if r.Err() == nil && string(name) != p.name() {
			return stateErr("type %d is %q, this registry has %q", i, name, p.name())
		}
		d.typ = uint32(i + 2) // 1 marks the free list
		if err := s.data[i].decode(d); err != nil {
			return err
		}
		if err := r.Err(); err != nil {
			return stateErr("%s: %w", p.name(), err)
		}
	}
	if err := r.End(); err != nil {
		return stateErr("%w", err)
	}
	layout := ecs.NewLayout(d.w)
	s.ents = g.r.ents.acquire(ecs.EntityState{Layout: layout, Slots: d.slots, Free: free})
	return nil
}

// strategyCode reads and checks the strategy and resource bytes.
func strategyCode(d *decoder, want byte, resource bool) bool {
	code, res := d.r.Byte(), d.r.Byte()
	if d.r.Err() != nil {
		return false
	}
	if code != want || (res == 1) != resource || res > 1 {
		d.r.Fail(stateErr("strategy %d resource %d, want %d %v", code, res, want, resource))
		return false
	}
	return true
}

func (f *compFrame[T]) encode(b []byte) ([]byte, error) {
	code, err := f.c.v.code()
	if err != nil {
		return b, fmt.Errorf("%w: %s", err, f.c.name())
	}
	b = append(b, code, 0)
	b = binary.AppendUvarint(b, uint64(len(f.layout.Ents)))
	for _, e := range f.layout.Ents {
		b = binary.AppendUvarint(b, uint64(e))
	}
	return f.c.v.encode(b, &f.buf, len(f.layout.Ents))
}

func (f *compFrame[T]) decode(d *decoder) error {
	code, err := f.c.v.code()
	if err != nil {
		return fmt.Errorf("%w: %s", err, f.c.name())
	}
	if !strategyCode(d, code, false) {
		return nil
	}
	n := d.r.Count(len(d.slots))
	ents := make([]ecs.Entity, n)
	for i := range ents {
		ents[i] = d.entity()
	}
	if d.r.Err() != nil {
		return nil
	}
	if err := f.c.v.decode(&d.r, &f.buf, n); err != nil {
		return fmt.Errorf("%s: %w", f.c.name(), err)
	}
	f.layout = f.c.layouts.Acquire(ecs.NewLayout(d.w), ents, 0)
	return nil
}

func (f *resFrame[T]) encode(b []byte) ([]byte, error) {
	code, err := f.c.v.code()
	if err != nil {
		return b, fmt.Errorf("%w: %s", err, f.c.name())
	}
	b = append(b, code, 1)
	if !f.present {
		return append(b, 0), nil
	}
	return f.c.v.encode(append(b, 1), &f.buf, 1)
}

func (f *resFrame[T]) decode(d *decoder) error {
	code, err := f.c.v.code()
	if err != nil {
		return fmt.Errorf("%w: %s", err, f.c.name())
	}
	if !strategyCode(d, code, true) {
		return nil
	}
	switch d.r.Byte() {
	case 0:
		f.present = false
		return nil
	case 1:
		f.present = true
		if err := f.c.v.decode(&d.r, &f.buf, 1); err != nil {
			return fmt.Errorf("%s: %w", f.c.name(), err)
		}
	default:
		d.r.Fail(stateErr("resource presence byte"))
	}
	return nil
}

func (copyValues[T]) code() (byte, error) { return encCopy, nil }

func (v copyValues[T]) encode(b []byte, buf *valueBuf[T], n int) ([]byte, error) {
	for i := range buf.vals[:n] {
		b = v.p.Form.Append(b, unsafe.Pointer(&buf.vals[i]))
	}
	return b, nil
}

func (v copyValues[T]) decode(r *bin.Reader, buf *valueBuf[T], n int) error {
	size := v.p.Form.Encoded
	if size > 0 && n > r.Len()/size {
		r.Fail(bin.ErrTruncated)
		return nil
	}
	buf.vals = resizeClear(buf.vals, n)
	for i := range buf.vals {
		if !v.p.Form.Decode(r.Bytes(size), unsafe.Pointer(&buf.vals[i])) {
			r.Fail(stateErr("value %d is not a canonical %s", i, reflect.TypeFor[T]()))
			return nil
		}
	}
	return nil
}

func (*cloneValues[T]) code() (byte, error) { return 0, ErrNotEncodable }

func (*cloneValues[T]) encode(b []byte, _ *valueBuf[T], _ int) ([]byte, error) {
	return b, ErrNotEncodable
}

func (*cloneValues[T]) decode(*bin.Reader, *valueBuf[T], int) error { return ErrNotEncodable }

func (*codecValues[T, PT]) code() (byte, error) { return encCodec, nil }

func (*codecValues[T, PT]) encode(b []byte, buf *valueBuf[T], n int) ([]byte, error) {
	start := uint32(0)
	for _, end := range buf.offs[:n] {
		b = bin.AppendBytes(b, buf.data[start:end])
		start = end
	}
	return b, nil
}

// decode keeps the values' bytes as saved, after checking that each
// unmarshals, so that the load cannot fail halfway.
func (*codecValues[T, PT]) decode(r *bin.Reader, buf *valueBuf[T], n int) error {
	buf.data, buf.offs = buf.data[:0], buf.offs[:0]
	for range n {
		v := r.LenBytes(maxEncodedValue)
		if r.Err() != nil {
			return nil
		}
		var t T
		if err := PT(&t).UnmarshalBinary(v); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrDecode, reflect.TypeFor[T](), err)
		}
		buf.data = append(buf.data, v...)
		buf.offs = append(buf.offs, uint32(len(buf.data)))
	}
	return nil
}

func (c *compSaver[T]) encodable() error { _, err := c.v.code(); return err }
func (c *resSaver[T]) encodable() error  { _, err := c.v.code(); return err }
