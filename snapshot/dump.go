package snapshot

// Dumps: a world's state type by type and entity by entity in canonical
// form, so that two peers' states at a desynced frame can be compared down
// to the entity and field (DiffDumps, "rewind diff").

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
)

// Dump is the state of a Registry's types at one frame: for each type its
// name (as in the checksum Parts), its field layout (copy types: the
// canonical form's fields) and each entity's value in canonical bytes.
// Clone and codec types carry their own encodings and no layout: their
// values compare as whole byte strings. A Dump is plain data; its encoding
// (AppendBinary, UnmarshalBinary) is the same on every machine.
type Dump struct {
	// Frame is the frame (or tick) the state belongs to.
	Frame tick.Tick
	// Label says whose state it is ("peer 1", "server", "client 3").
	Label string
	// Types are in registration order.
	Types []TypeDump
}

// TypeDump is one type's part of a Dump.
type TypeDump struct {
	// Name is the type's name, as in its checksum Part ("resource " +
	// name for a resource).
	Name string
	// Resource is set for a resource: one Value (entity 0) when present.
	Resource bool
	// Fields is the canonical field layout (copy types); nil for clone and
	// codec types.
	Fields []Field
	// Values are sorted by entity.
	Values []Value
	data   []byte // backing store of the values' bytes
	ends   []int  // while encoding: where each value's bytes end in data
}

// Field is one primitive field of a copy type's canonical form.
type Field struct {
	// Path is the field's path within the type (".Pos.X", "[1]", "" for a
	// type that is itself a number).
	Path string
	// Kind is the field's kind (an ecs.Entity is a Uint64).
	Kind reflect.Kind
	// Size is the field's size in bytes in the canonical form.
	Size int
}

// Value is one entity's value of a type.
type Value struct {
	Entity ecs.Entity
	Bytes  []byte
}

// DumpOptions selects what Registry.Dump captures.
type DumpOptions struct {
	// Label is the Dump's label.
	Label string
	// Types are the names of the types to capture (checksum Part names,
	// as a desync event lists them); nil captures every registered type.
	Types []string
	// Entity maps each entity to the one the other side knows it by (a
	// replication client maps its entities to the server's with
	// replicate.Client.ServerEntity); false leaves the entity out. Nil
	// keeps entities as they are.
	Entity func(ecs.Entity) (ecs.Entity, bool)
	// MaxBytes bounds the dump's value bytes; a dump that would exceed it
	// fails with ErrDumpTooLarge. Default DefaultDumpMaxBytes.
	MaxBytes int
}

// DefaultDumpMaxBytes is the default bound of a Dump's value bytes (and of
// a dump file).
const DefaultDumpMaxBytes = 64 << 20

// Limits of a decoded Dump, beyond its byte size.
const (
	maxDumpTypes  = 1024
	maxDumpFields = 4096
	maxDumpName   = 1024
	maxDumpValue  = 1 << 20
	dumpMagic     = "RWDUMP"
	dumpVersion   = 1
)

// dumper is implemented by the savers of every strategy.
type dumper interface {
	dump(td *TypeDump, o *DumpOptions, budget *int) error
}

// Dump captures the live World's registered types (those o.Types names, or
// all) as the state of frame f. Call it where the state is the one of f: a
// rollback game right after saving f, a replication server after its send
// phase of tick f, a client when it reports its checksum of f (see
// replicate.Client.CaptureAtReports).
func (r *Registry) Dump(f tick.Tick, o DumpOptions) (*Dump, error) {
	d := &Dump{}
	return d, r.DumpInto(d, f, o)
}

// DumpInto is Dump into d, reusing its memory.
func (r *Registry) DumpInto(d *Dump, f tick.Tick, o DumpOptions) error {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultDumpMaxBytes
	}
	// The options and the budget live in the Registry while dumping, so
	// that passing them to the savers does not allocate.
	r.dumpOpts, r.dumpBudget = o, o.MaxBytes
	defer func() { r.dumpOpts = DumpOptions{} }()
	d.Frame, d.Label = f, o.Label
	n := 0
	for _, s := range r.parts {
		name := s.name()
		if o.Types != nil && !slices.Contains(o.Types, name) {
			continue
		}
		if n == len(d.Types) {
			d.Types = append(d.Types, TypeDump{})
		}
		td := &d.Types[n]
		n++
		td.Name, td.Resource, td.Fields, td.Values, td.data = name, false, td.Fields[:0], td.Values[:0], td.data[:0]
		if err := s.(dumper).dump(td, &r.dumpOpts, &r.dumpBudget); err != nil {
			d.Types = d.Types[:n]
			return err
		}
		if len(td.Fields) == 0 {
			td.Fields = nil
		}
	}
	d.Types = d.Types[:n]
	return nil
}

// fieldsOf converts a copy strategy's canonical layout.
func fieldsOf[T any](v values[T], dst []Field) []Field {
	cv, ok := v.(copyValues[T])
	if !ok {
		return dst
	}
	for _, f := range cv.p.Form.Layout() {
		dst = append(dst, Field{Path: f.Path, Kind: f.Kind, Size: f.Size})
	}
	return dst
}

// encodeValue appends the dump bytes of *p: canonical bytes for copy
// types, the type's own encoding for clone and codec types (nothing for a
// clone type registered with NoChecksum).
func encodeValue[T any](v values[T], p *T, dst []byte) ([]byte, error) {
	switch v := v.(type) {
	case copyValues[T]:
		return v.p.Form.Append(dst, unsafe.Pointer(p)), nil
	case interface{ noChecksum() bool }:
		if v.noChecksum() {
			return dst, nil
		}
	}
	return appendBinary(p, dst)
}

// appendValues encodes vals (entities ents, nil for a resource) into td.
func appendValues[T any](td *TypeDump, v values[T], ents []ecs.Entity, vals []T, o *DumpOptions, budget *int) error {
	td.Fields = fieldsOf(v, td.Fields)
	td.ends = td.ends[:0]
	for i := range vals {
		var e ecs.Entity
		if ents != nil {
			e = ents[i]
			if o.Entity != nil {
				m, ok := o.Entity(e)
				if !ok {
					continue
				}
				e = m
			}
		}
		start := len(td.data)
		var err error
		td.data, err = encodeValue(v, &vals[i], td.data)
		if err != nil {
			return err
		}
		*budget -= len(td.data) - start
		if *budget < 0 {
			return fmt.Errorf("%w: %s: over %d bytes", ErrDumpTooLarge, td.Name, o.MaxBytes)
		}
		td.Values = append(td.Values, Value{Entity: e})
		td.ends = append(td.ends, len(td.data))
	}
	// data may have moved while growing: slice it once it is complete.
	start := 0
	for i, end := range td.ends {
		td.Values[i].Bytes = td.data[start:end:end]
		start = end
	}
	slices.SortFunc(td.Values, func(a, b Value) int { return cmp.Compare(a.Entity, b.Entity) })
	return nil
}

func (c *compSaver[T]) dump(td *TypeDump, o *DumpOptions, budget *int) error {
	col := c.s.Column()
	return appendValues(td, c.v, col.Entities, col.Values, o, budget)
}

func (c *resSaver[T]) dump(td *TypeDump, o *DumpOptions, budget *int) error {
	td.Resource = true
	v, ok := c.res.Get()
	if !ok {
		td.Fields = fieldsOf(c.v, td.Fields)
		return nil
	}
	one := [1]T{v}
	return appendValues(td, c.v, nil, one[:], o, budget)
}

// Only returns a Dump of d's types named in names (all of d when names is
// empty), sharing d's values.
func (d *Dump) Only(names []string) *Dump {
	out := &Dump{Frame: d.Frame, Label: d.Label}
	for _, t := range d.Types {
		if len(names) == 0 || slices.Contains(names, t.Name) {
			out.Types = append(out.Types, t)
		}
	}
	return out
}

// Clone returns a deep copy of d.
func (d *Dump) Clone() *Dump {
	out := &Dump{Frame: d.Frame, Label: d.Label, Types: make([]TypeDump, len(d.Types))}
	for i, t := range d.Types {
		c := TypeDump{Name: t.Name, Resource: t.Resource, Fields: slices.Clone(t.Fields)}
		for _, v := range t.Values {
			c.Values = append(c.Values, Value{Entity: v.Entity, Bytes: slices.Clone(v.Bytes)})
		}
		out.Types[i] = c
	}
	return out
}

// AppendBinary appends d's encoding: "RWDUMP", a version byte, then the
// frame, label and types (uvarints and length-prefixed byte strings).
func (d *Dump) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, dumpMagic...)
	b = append(b, dumpVersion)
	b = binary.AppendUvarint(b, uint64(d.Frame))
	b = bin.AppendBytes(b, []byte(d.Label))
	b = binary.AppendUvarint(b, uint64(len(d.Types)))
	for _, t := range d.Types {
		b = bin.AppendBytes(b, []byte(t.Name))
		flags := byte(0)
		if t.Resource {
			flags |= 1
		}
		b = append(b, flags)
		b = binary.AppendUvarint(b, uint64(len(t.Fields)))
		for _, f := range t.Fields {
			b = bin.AppendBytes(b, []byte(f.Path))
			b = append(b, byte(f.Kind))
			b = binary.AppendUvarint(b, uint64(f.Size))
		}
		b = binary.AppendUvarint(b, uint64(len(t.Values)))
		for _, v := range t.Values {
			b = binary.AppendUvarint(b, uint64(v.Entity))
			b = bin.AppendBytes(b, v.Bytes)
		}
	}
	return b, nil
}

// MarshalBinary returns d's encoding (see AppendBinary).
func (d *Dump) MarshalBinary() ([]byte, error) { return d.AppendBinary(nil) }

// UnmarshalBinary decodes a dump from b (at most DefaultDumpMaxBytes,
// else ErrDumpTooLarge); malformed bytes are ErrDumpFormat. The Dump
// keeps no reference to b.
func (d *Dump) UnmarshalBinary(b []byte) error {
	if len(b) > DefaultDumpMaxBytes+1<<20 {
		return ErrDumpTooLarge
	}
	b = slices.Clone(b)
	r := bin.NewReader(b)
	if string(r.Bytes(len(dumpMagic))) != dumpMagic || r.Byte() != dumpVersion {
		return fmt.Errorf("%w: not a rewind dump (version %d)", ErrDumpFormat, dumpVersion)
	}
	out := Dump{}
	out.Frame = tick.Tick(r.Uvarint32())
	out.Label = string(r.LenBytes(maxDumpName))
	nt := r.Count(maxDumpTypes)
	for range nt {
		var t TypeDump
		t.Name = string(r.LenBytes(maxDumpName))
		flags := r.Byte()
		if flags > 1 {
			r.Fail(ErrDumpFormat)
		}
		t.Resource = flags&1 != 0
		nf := r.Count(maxDumpFields)
		size := 0
		for range nf {
			var f Field
			f.Path = string(r.LenBytes(maxDumpName))
			f.Kind = reflect.Kind(r.Byte())
			f.Size = int(r.Uvarint32())
			if !validField(f) {
				r.Fail(ErrDumpFormat)
				break
			}
			size += f.Size
			t.Fields = append(t.Fields, f)
		}
		nv := r.Count(r.Len())
		var last ecs.Entity
		for i := range nv {
			e := ecs.Entity(r.Uvarint())
			v := r.LenBytes(maxDumpValue)
			if r.Err() != nil {
				break
			}
			if (i > 0 && e <= last) || (t.Fields != nil && len(v) != size) || (t.Resource && (i > 0 || e != 0)) {
				r.Fail(ErrDumpFormat)
				break
			}
			last = e
			t.Values = append(t.Values, Value{Entity: e, Bytes: v})
		}
		if r.Err() != nil {
			break
		}
		out.Types = append(out.Types, t)
	}
	if err := r.End(); err != nil {
		if errors.Is(err, ErrDumpFormat) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrDumpFormat, err)
	}
	*d = out
	return nil
}

// validField reports whether f's kind and size agree (the kinds a
// canonical form has).
func validField(f Field) bool {
	switch f.Kind {
	case reflect.Bool, reflect.Int8, reflect.Uint8:
		return f.Size == 1
	case reflect.Int16, reflect.Uint16:
		return f.Size == 2
	case reflect.Int32, reflect.Uint32, reflect.Float32:
		return f.Size == 4
	case reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Int, reflect.Uint:
		return f.Size == 8
	}
	return false
}

// FieldDiff is one difference between two dumps: a field of an entity's
// value (Field set), a whole value (a type without layout, or with
// differing layouts: Field ""), or an entity that has the type on one
// side only (A or B "absent").
type FieldDiff struct {
	Type   string
	Entity ecs.Entity // zero for a resource
	Field  string
	A, B   string // the two values, formatted
}

// String formats the difference as "Type entity Field: A != B".
func (f FieldDiff) String() string {
	who := "entity " + f.Entity.String()
	if f.Entity == 0 {
		who = "(resource)"
	}
	return fmt.Sprintf("%s %s %s: %s != %s", f.Type, who, f.Field, f.A, f.B)
}

// DiffDumps compares a and b type by type (by name), entity by entity and
// field by field, and returns at most max differences (all for max <= 0)
// and their total count. A type in one dump only is one difference with
// Entity 0 and A or B "type not dumped".
func DiffDumps(a, b *Dump, max int) (diffs []FieldDiff, total int) {
	add := func(d FieldDiff) {
		total++
		if max <= 0 || len(diffs) < max {
			diffs = append(diffs, d)
		}
	}
	for _, ta := range a.Types {
		i := slices.IndexFunc(b.Types, func(t TypeDump) bool { return t.Name == ta.Name })
		if i < 0 {
			add(FieldDiff{Type: ta.Name, A: "dumped", B: "type not dumped"})
			continue
		}
		diffType(&ta, &b.Types[i], add)
	}
	for _, tb := range b.Types {
		if !slices.ContainsFunc(a.Types, func(t TypeDump) bool { return t.Name == tb.Name }) {
			add(FieldDiff{Type: tb.Name, A: "type not dumped", B: "dumped"})
		}
	}
	return diffs, total
}

func diffType(ta, tb *TypeDump, add func(FieldDiff)) {
	fields := ta.Fields
	if !slices.Equal(ta.Fields, tb.Fields) {
		fields = nil // layouts differ: compare whole values
	}
	va, vb := ta.Values, tb.Values
	for len(va) > 0 || len(vb) > 0 {
		switch {
		case len(vb) == 0 || (len(va) > 0 && va[0].Entity < vb[0].Entity):
			add(FieldDiff{Type: ta.Name, Entity: va[0].Entity, A: formatValue(fields, va[0].Bytes), B: "absent"})
			va = va[1:]
		case len(va) == 0 || vb[0].Entity < va[0].Entity:
			add(FieldDiff{Type: ta.Name, Entity: vb[0].Entity, A: "absent", B: formatValue(fields, vb[0].Bytes)})
			vb = vb[1:]
		default:
			x, y := va[0], vb[0]
			va, vb = va[1:], vb[1:]
			if string(x.Bytes) == string(y.Bytes) {
				continue
			}
			if fields == nil {
				add(FieldDiff{Type: ta.Name, Entity: x.Entity, A: fmt.Sprintf("%x", x.Bytes), B: fmt.Sprintf("%x", y.Bytes)})
				continue
			}
			off := 0
			for _, f := range fields {
				p, q := x.Bytes[off:off+f.Size], y.Bytes[off:off+f.Size]
				off += f.Size
				if string(p) != string(q) {
					a, b := formatField(f, p), formatField(f, q)
					if a == b { // the same text for different bits (NaN payloads)
						a, b = fmt.Sprintf("%s (%x)", a, p), fmt.Sprintf("%s (%x)", b, q)
					}
					add(FieldDiff{Type: ta.Name, Entity: x.Entity, Field: f.Path, A: a, B: b})
				}
			}
		}
	}
}

// formatValue formats a whole value: its fields, or its bytes in hex.
func formatValue(fields []Field, b []byte) string {
	if fields == nil {
		return fmt.Sprintf("%x", b)
	}
	s, off := "{", 0
	for i, f := range fields {
		if i > 0 {
			s += " "
		}
		s += f.Path + ":" + formatField(f, b[off:off+f.Size])
		off += f.Size
	}
	return s + "}"
}

// formatField formats one field's canonical bytes.
func formatField(f Field, b []byte) string {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	switch f.Kind {
	case reflect.Bool:
		return strconv.FormatBool(u != 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		shift := 64 - 8*uint(len(b))
		return strconv.FormatInt(int64(u<<shift)>>shift, 10)
	case reflect.Float32:
		return strconv.FormatFloat(float64(math.Float32frombits(uint32(u))), 'g', -1, 32)
	case reflect.Float64:
		return strconv.FormatFloat(math.Float64frombits(u), 'g', -1, 64)
	}
	return strconv.FormatUint(u, 10)
}
