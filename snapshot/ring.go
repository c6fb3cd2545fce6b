package snapshot

import (
	"fmt"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// Ring holds the saved states of the last frames of one World: Save(frame),
// Load(frame), Confirm(frame). Frame f lives in slot f mod Depth, so saving f
// replaces f-Depth; a rollback session sizes the depth to its prediction
// window. Buffers are reused: in steady state Save and Load allocate nothing.
//
// Load restores the World exactly: entities spawned after the frame disappear,
// entities despawned since come back with the same identity and generation,
// resources come and go as they were, and the next Spawn returns what it
// returned after the original frame. Components of types not in the Registry
// are left as they are, except that those of entities that no longer exist
// are dropped.
type Ring struct {
	r     *Registry
	slots []slot
}

type slot struct {
	held      bool
	frame     tick.Tick
	savedTick uint64
	ents      *entBuf
	data      []frameData
	summed    bool
	sum       uint64
	parts     []Part
}

// NewRing returns an empty ring of the given depth (number of frames held, at
// least 1) for the Registry's World.
func NewRing(r *Registry, depth int) (*Ring, error) {
	g := &Ring{r: r}
	if err := g.SetDepth(depth); err != nil {
		return nil, err
	}
	return g, nil
}

// Depth returns the number of frames the ring can hold.
func (g *Ring) Depth() int { return len(g.slots) }

// SetDepth changes the number of frames held, keeping the newest held frames
// that still fit.
func (g *Ring) SetDepth(depth int) error {
	if depth < 1 {
		return fmt.Errorf("%w: %d", ErrInvalidDepth, depth)
	}
	if depth == len(g.slots) {
		return nil
	}
	old := g.slots
	g.slots = make([]slot, depth)
	for _, s := range old {
		if !s.held {
			g.release(&s)
			continue
		}
		d := g.slotFor(s.frame)
		if d.held && d.frame.After(s.frame) {
			g.release(&s)
			continue
		}
		g.release(d)
		*d = s
	}
	return nil
}

func (g *Ring) release(s *slot) {
	for _, d := range s.data {
		d.release()
	}
	if s.ents != nil {
		s.ents.refs--
		s.ents = nil
	}
	s.held = false
}

func (g *Ring) slotFor(f tick.Tick) *slot { return &g.slots[int(uint32(f)%uint32(len(g.slots)))] }

// Save stores the World's state as frame f, replacing whatever the slot held.
// It advances the World's change tick (see ecs.World.AdvanceTick), so writes
// after the save are told apart from the saved state.
func (g *Ring) Save(f tick.Tick) error {
	s := g.slotFor(f)
	s.held, s.summed = false, false
	w := g.r.w
	st := w.EntityState()
	if s.ents == nil || s.ents.st.Layout != st.Layout {
		if s.ents != nil {
			s.ents.refs--
		}
		s.ents = g.r.ents.acquire(st)
	}
	for len(s.data) < len(g.r.parts) {
		s.data = append(s.data, g.r.parts[len(s.data)].newFrame())
	}
	for _, d := range s.data {
		if err := d.save(); err != nil {
			return fmt.Errorf("snapshot: save frame %v: %w", f, err)
		}
	}
	s.frame, s.savedTick, s.held = f, w.Tick(), true
	w.AdvanceTick()
	return nil
}

// SaveChecksum saves frame f like Save and also computes and keeps its
// checksum (see Registry.Checksum), returned here and later by Checksum.
func (g *Ring) SaveChecksum(f tick.Tick) (uint64, error) {
	s := g.slotFor(f)
	s.held = false
	sum, parts, err := g.r.Checksum(s.parts)
	s.parts = parts
	if err != nil {
		return 0, err
	}
	if err := g.Save(f); err != nil {
		return 0, err
	}
	s.sum, s.summed = sum, true
	return sum, nil
}

// Held reports whether frame f is held.
func (g *Ring) Held(f tick.Tick) bool {
	s := g.slotFor(f)
	return s.held && s.frame == f
}

// Checksum returns the checksum and parts kept by SaveChecksum for frame f.
// The parts slice belongs to the ring and is overwritten when the slot is
// reused.
func (g *Ring) Checksum(f tick.Tick) (sum uint64, parts []Part, ok bool) {
	s := g.slotFor(f)
	if !s.held || s.frame != f || !s.summed {
		return 0, nil, false
	}
	return s.sum, s.parts, true
}

// Load restores the World to frame f. It fails with ErrFrameNotHeld when f
// was never saved, was replaced or was freed by Confirm; the World is then
// unchanged.
func (g *Ring) Load(f tick.Tick) error {
	s := g.slotFor(f)
	if !s.held || s.frame != f {
		return fmt.Errorf("%w: %v", ErrFrameNotHeld, f)
	}
	w := g.r.w
	rs := ecs.BeginRestore(w, s.ents.st)
	var err error
	for _, d := range s.data {
		if e := d.load(rs, s.savedTick); e != nil && err == nil {
			err = e
		}
	}
	rs.Finish()
	if err != nil {
		return fmt.Errorf("snapshot: load frame %v: %w", f, err)
	}
	return nil
}

// Confirm frees every held frame before f (f itself stays): a rollback
// session calls it with its confirmed frame, as no rollback can reach further
// back. Freed slots keep their buffers for reuse.
func (g *Ring) Confirm(f tick.Tick) {
	for i := range g.slots {
		if s := &g.slots[i]; s.held && s.frame.Before(f) {
			g.release(s) // drops shared layout references so the buffers can be reused
		}
	}
}

// Frames returns the held frames, oldest first.
func (g *Ring) Frames() []tick.Tick {
	var out []tick.Tick
	for _, s := range g.slots {
		if s.held {
			out = append(out, s.frame)
		}
	}
	for i := 1; i < len(out); i++ { // insertion sort, wrap-safe
		for j := i; j > 0 && out[j].Before(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Bytes returns the memory held by the ring's buffers: saved values, entity
// layouts and allocator states (each shared buffer counted once) and the
// fixed per-slot overhead.
func (g *Ring) Bytes() int {
	n := len(g.slots) * int(unsafe.Sizeof(slot{}))
	for _, s := range g.slots {
		for _, d := range s.data {
			n += d.bytes()
		}
		n += cap(s.parts) * int(unsafe.Sizeof(Part{}))
	}
	for _, p := range g.r.parts {
		n += p.poolBytes()
	}
	for _, b := range g.r.ents.bufs {
		n += cap(b.st.Slots)*int(unsafe.Sizeof(b.st.Slots[0])) + 4*cap(b.st.Free)
	}
	return n
}
