package replicate

import (
	"io"
	"math"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
)

// Saved state format, version 2: "RWRS", a version byte, the protocol hash
// (8 bytes little-endian), the entity count, then per entity its index and
// generation and its components as (component id, value length, value)
// with the protocol's codecs, then the count of present replicated
// resources and each as (resource id, value length, value); integers are
// uvarints. Version 1 (no resource section) is still read.
const (
	saveMagic      = "RWRS"
	saveVersion    = 2
	maxSavedEntity = 1 << 24
	maxSavedState  = 1 << 30
)

// stateEncoder binds a protocol's replicated types to one world, for
// saving, loading and checkpoints (checkpoint.go).
type stateEncoder struct {
	w     *ecs.World
	p     *Protocol
	comps []boundComponent
	res   []boundResource
	rep   *ecs.Store[Replicated]
}

func newStateEncoder(world *ecs.World, p *Protocol) *stateEncoder {
	p.freeze()
	s := &stateEncoder{w: world, p: p, rep: ecs.Register[Replicated](world)}
	s.comps = make([]boundComponent, len(p.comps))
	for i, c := range p.comps {
		s.comps[i] = c.bind(world)
	}
	s.res = make([]boundResource, len(p.res))
	for i, r := range p.res {
		s.res[i] = r.bind(world)
	}
	return s
}

// SaveState writes the replicated state of world (every entity marked
// Replicated, with each of its components registered in p, and the present
// resources registered with ReplicateResource) to w: for server restarts,
// debugging and checkpoints (Checkpoint.AppendState writes the same form).
// Entities come in the order of the Replicated store, so equal worlds give
// equal bytes. Entity references are written as they are and remapped by
// LoadState.
func SaveState(w io.Writer, world *ecs.World, p *Protocol) error {
	enc := newStateEncoder(world, p)
	st := newCkState(enc)
	st.capture(enc, nil)
	var x ckScratch
	_, err := w.Write(x.appendState(nil, p, st))
	return err
}

func (b *typedComponent[T]) grow(n int) { b.s.Grow(n) }

// stateReader reads a saved state as bin.Reader does (minimal uvarints,
// bounded counts and lengths, the first error kept), moving an offset
// rather than a slice: its hot loop stores no pointers, so it runs free of
// GC write barriers.
type stateReader struct {
	b   []byte
	off int
	err error
}

func (r *stateReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	// Fast paths: one to three bytes (counts, ids, lengths, entity
	// indices below 2^21), minimal (a last byte of 0 after a continuation
	// byte takes the checked path, which refuses it).
	if off := r.off; off+2 < len(r.b) {
		b0, b1, b2 := r.b[off], r.b[off+1], r.b[off+2]
		switch {
		case b0 < 0x80:
			r.off++
			return uint64(b0)
		case b1 < 0x80 && b1 != 0:
			r.off += 2
			return uint64(b0&0x7f) | uint64(b1)<<7
		case b1 >= 0x80 && b2 < 0x80 && b2 != 0:
			r.off += 3
			return uint64(b0&0x7f) | uint64(b1&0x7f)<<7 | uint64(b2)<<14
		}
	} else if off < len(r.b) && r.b[off] < 0x80 {
		r.off++
		return uint64(r.b[off])
	}
	v, n, err := bin.Uvarint(r.b[r.off:])
	if err != nil {
		r.fail(err)
		return 0
	}
	r.off += n
	return v
}

func (r *stateReader) entity() ecs.Entity {
	i, g := r.uvarint(), r.uvarint()
	if i > math.MaxUint32 || g > math.MaxUint32 {
		r.fail(bin.ErrRange)
		return 0
	}
	return ecs.NewEntity(uint32(i), uint32(g))
}

// count reads an element count of at most max and at most the unread
// bytes (every element takes one byte at least).
func (r *stateReader) count(max int) int {
	v := r.uvarint()
	if r.err == nil && (v > uint64(max) || v > uint64(len(r.b)-r.off)) {
		r.fail(bin.ErrRange)
	}
	if r.err != nil {
		return 0
	}
	return int(v)
}

// lenBytes reads a length of at most max and that many bytes (aliased).
func (r *stateReader) lenBytes(max int) []byte {
	n := r.uvarint()
	switch {
	case r.err != nil:
		return nil
	case n > uint64(max):
		r.fail(bin.ErrRange)
		return nil
	case n > uint64(len(r.b)-r.off):
		r.fail(bin.ErrTruncated)
		return nil
	}
	start := r.off
	r.off += int(n)
	return r.b[start:r.off:r.off]
}

func (r *stateReader) end() error {
	if r.err == nil && r.off != len(r.b) {
		r.err = bin.ErrTrailing
	}
	return r.err
}

// LoadState reads a state written by SaveState (or Checkpoint.AppendState)
// into world, spawning a new entity (marked Replicated) for each saved
// one, setting the saved resources and remapping entity references between
// them. It returns the map from saved to new entities. A state saved with
// another protocol is refused (ErrProtocolMismatch); malformed input
// (including an entity index saved twice) returns an error wrapping
// ErrMalformed and spawns nothing. It reads the input twice: once to
// check every value, once to write them, so it holds no per-value buffers.
//
// LoadState is a one-off Loader whose table it copies into a map: its
// allocations are the input, the Loader's binding and tables, the
// returned map, and the world's own growth. Code that loads repeatedly
// (a client applying pushed checkpoints, a tool that reloads) keeps a
// Loader instead, which allocates nothing in steady state.
func LoadState(r io.Reader, world *ecs.World, p *Protocol) (map[ecs.Entity]ecs.Entity, error) {
	var l Loader
	t, err := l.LoadFrom(r, world, p)
	if t == nil {
		return nil, err
	}
	out := make(map[ecs.Entity]ecs.Entity, t.Len())
	for k := range t.Len() {
		saved, loaded := t.At(k)
		out[saved] = loaded
	}
	return out, err
}
