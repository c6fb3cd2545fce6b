package snapshot

import (
	"encoding"
	"fmt"
	"reflect"
	"unsafe"

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
}

// valueBuf is the storage of one type in one frame.
type valueBuf[T any] struct {
	vals []T      // copy and clone
	data []byte   // codec
	offs []uint32 // codec: end offset of value i
}

type copyValues[T any] struct {
	c *canonical
	k kernel // load kernel for the value size, if any
}

func (copyValues[T]) name() string { return "copy" }
func (copyValues[T]) save(b *valueBuf[T], src []T) error {
	b.vals = append(b.vals[:0], src...)
	return nil
}

// load overwrites the live values with the saved ones and stamps exactly
// those whose bytes change (see copyStamp).
func (v copyValues[T]) load(dst []T, b *valueBuf[T], changed []uint64, _, now uint64) error {
	if len(dst) == 0 {
		return nil
	}
	src := b.vals[:len(dst)]
	copyStamp(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), len(dst), v.c.size, v.c.align, v.k, changed, now)
	return nil
}

// bytesOf views the memory of a slice of plain data.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// stampWritten stamps every value written since the save: strategies that
// cannot compare values treat each of them as changed by the load.
func stampWritten(changed []uint64, savedTick, now uint64) {
	for p, c := range changed {
		if c > savedTick {
			changed[p] = now
		}
	}
}
func (v copyValues[T]) hash(d *xxh64.Digest, vals []T) error {
	hashSlice(d, v.c, vals)
	return nil
}
func (v copyValues[T]) bytes(b *valueBuf[T]) int { return cap(b.vals) * int(v.c.size) }

type cloneValues[T Cloner[T]] struct {
	size     int
	checksum bool
	scratch  []byte
}

func (*cloneValues[T]) name() string { return "clone" }
func (*cloneValues[T]) save(b *valueBuf[T], src []T) error {
	b.vals = resizeClear(b.vals, len(src))
	for i := range src {
		b.vals[i] = src[i].Clone()
	}
	return nil
}
func (*cloneValues[T]) load(dst []T, b *valueBuf[T], changed []uint64, savedTick, now uint64) error {
	stampWritten(changed, savedTick, now)
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
	stampWritten(changed, savedTick, now)
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
