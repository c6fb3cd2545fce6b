package replicate

import (
	"io"

	"github.com/rewindgo/rewind/ecs"
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
