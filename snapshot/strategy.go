package snapshot

import (
	"encoding"
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/internal/column"
	"github.com/rewindgo/rewind/internal/xxh64"
)

// Cloner is implemented by types that deep-copy themselves (the clone strategy).
type Cloner[T any] interface {
	Clone() T
}

// CodecPtr is implemented by the pointer of a type that encodes itself (the
// codec strategy): AppendBinary appends the value's bytes and UnmarshalBinary
// restores a value from them.
type CodecPtr[T any] interface {
	*T
	encoding.BinaryAppender
	encoding.BinaryUnmarshaler
}

// values stores a slice of T for one saved frame and hashes live values.
// Implementations are the three strategies.
type values[T any] interface {
	save(b *valueBuf[T], src []T) error
	// load overwrites dst with the saved values and stamps changed[p] = now
	// for every value it changes (see ecs.RestoreStore).
	load(dst []T, b *valueBuf[T], changed []uint64, savedTick, now uint64) error
	hash(d *xxh64.Digest, vals []T) error
	bytes(b *valueBuf[T]) int
	name() string
	// code is the strategy's code in an encoded state, or ErrNotEncodable;
	// encode appends the first n saved values' exact byte form, decode
	// reads n values into b (encode.go).
	code() (byte, error)
	encode(dst []byte, b *valueBuf[T], n int) ([]byte, error)
	decode(r *bin.Reader, b *valueBuf[T], n int) error
}

// valueBuf is the storage of one type in one frame.
type valueBuf[T any] struct {
	vals []T      // copy and clone
	data []byte   // codec
	offs []uint32 // codec: end offset of value i
}

// copyValues is the copy strategy: column.Plain's save, compare and
// restore kernels.
type copyValues[T any] struct{ p *column.Plain[T] }

func (copyValues[T]) name() string { return "copy" }
func (copyValues[T]) save(b *valueBuf[T], src []T) error {
	b.vals = append(b.vals[:0], src...)
	return nil
}

// load overwrites the live values with the saved ones and stamps exactly
// those whose bytes change (column.Plain.Stamp).
func (v copyValues[T]) load(dst []T, b *valueBuf[T], changed []uint64, _, now uint64) error {
	v.p.Stamp(dst, b.vals, changed, now)
	return nil
}

func (v copyValues[T]) hash(d *xxh64.Digest, vals []T) error {
	v.p.Hash(d, vals)
	return nil
}
func (v copyValues[T]) bytes(b *valueBuf[T]) int { return cap(b.vals) * int(v.p.Size) }

type cloneValues[T Cloner[T]] struct {
	size     int
	checksum bool
	scratch  []byte
}

func (*cloneValues[T]) name() string { return "clone" }

// noChecksum reports a type registered with NoChecksum (dumps leave its
// values out).
func (v *cloneValues[T]) noChecksum() bool { return !v.checksum }
func (*cloneValues[T]) save(b *valueBuf[T], src []T) error {
	b.vals = resizeClear(b.vals, len(src))
	for i := range src {
		b.vals[i] = src[i].Clone()
	}
	return nil
}
func (*cloneValues[T]) load(dst []T, b *valueBuf[T], changed []uint64, savedTick, now uint64) error {
	column.StampWritten(changed, savedTick, now)
	for i := range dst {
		dst[i] = b.vals[i].Clone() // the saved value stays untouched by later writes
	}
	return nil
}
func (v *cloneValues[T]) hash(d *xxh64.Digest, vals []T) error {
	if !v.checksum {
		return nil
	}
	for i := range vals {
		var err error
		v.scratch, err = appendBinary(&vals[i], v.scratch[:0])
		if err != nil {
			return err
		}
		d.WriteUint64(uint64(len(v.scratch)))
		d.Write(v.scratch)
	}
	return nil
}
func (v *cloneValues[T]) bytes(b *valueBuf[T]) int { return cap(b.vals) * v.size }

// appendBinary appends the encoding of *p when T or *T implements encoding.BinaryAppender.
func appendBinary[T any](p *T, dst []byte) ([]byte, error) {
	switch a := any(p).(type) {
	case encoding.BinaryAppender:
		return a.AppendBinary(dst)
	}
	if a, ok := any(*p).(encoding.BinaryAppender); ok {
		return a.AppendBinary(dst)
	}
	return dst, fmt.Errorf("%w: %s", ErrNoChecksum, reflect.TypeFor[T]())
}

func hasAppender[T any]() bool {
	var zero T
	_, a := any(&zero).(encoding.BinaryAppender)
	_, b := any(zero).(encoding.BinaryAppender)
	return a || b
}

type codecValues[T any, PT CodecPtr[T]] struct{ size int }

func (*codecValues[T, PT]) name() string { return "codec" }
func (*codecValues[T, PT]) save(b *valueBuf[T], src []T) error {
	b.data, b.offs = b.data[:0], b.offs[:0]
	for i := range src {
		var err error
		if b.data, err = PT(&src[i]).AppendBinary(b.data); err != nil {
			return fmt.Errorf("snapshot: encoding %s: %w", reflect.TypeFor[T](), err)
		}
		b.offs = append(b.offs, uint32(len(b.data)))
	}
	return nil
}
func (*codecValues[T, PT]) load(dst []T, b *valueBuf[T], changed []uint64, savedTick, now uint64) error {
	column.StampWritten(changed, savedTick, now)
	start := uint32(0)
	var zero T
	for i := range dst {
		end := b.offs[i]
		dst[i] = zero
		if err := PT(&dst[i]).UnmarshalBinary(b.data[start:end]); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrDecode, reflect.TypeFor[T](), err)
		}
		start = end
	}
	return nil
}
func (*codecValues[T, PT]) hash(d *xxh64.Digest, vals []T) error {
	var buf [256]byte
	for i := range vals {
		b, err := PT(&vals[i]).AppendBinary(buf[:0])
		if err != nil {
			return err
		}
		d.WriteUint64(uint64(len(b)))
		d.Write(b)
	}
	return nil
}
func (v *codecValues[T, PT]) bytes(b *valueBuf[T]) int {
	return cap(b.data) + 4*cap(b.offs)
}

func resizeClear[E any](b []E, n int) []E {
	if cap(b) >= n {
		clear(b[n:cap(b)]) // drop references held by values past the new length
		return b[:n]
	}
	return make([]E, n)
}
