package column

import (
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
)

// Layout is a saved entity layout of one store (ecs.Column's Layout id and
// Entities), shared by every saved frame of that store that holds the same
// layout. Take one from Layouts.Acquire and give it back with Release.
type Layout struct {
	// ID is the store's layout id at the save (ecs.Column.Layout).
	ID uint64
	// Ents are the store's entities at the save, in column order.
	Ents []ecs.Entity
	// Mark is the owner's: Acquire sets it to the mark it is given when it
	// fills the layout (predict notes the World's death count at which
	// every entity was known alive).
	Mark uint64

	refs  int
	idx   []int32 // entity slot index -> position+1, built on first lookup
	idxOK bool
}

// Pos returns the position of e in the layout, or -1. The first call
// builds an index by entity slot, reused until the layout is refilled.
func (l *Layout) Pos(e ecs.Entity) int {
	if !l.idxOK {
		clear(l.idx)
		for _, x := range l.Ents {
			if i := int(x.Index()); i >= len(l.idx) {
				l.idx = append(l.idx, make([]int32, i+1-len(l.idx))...)
			}
		}
		for p, x := range l.Ents {
			l.idx[x.Index()] = int32(p + 1)
		}
		l.idxOK = true
	}
	if i := int(e.Index()); i < len(l.idx) {
		if p := int(l.idx[i]) - 1; p >= 0 && l.Ents[p] == e {
			return p
		}
	}
	return -1
}

// Layouts is the pool of one store's saved layouts. Its zero value is
// ready to use.
type Layouts struct {
	bufs []*Layout
}

// Acquire returns a held layout with id, sharing one already held, or
// fills a free one with a copy of ents and mark.
func (p *Layouts) Acquire(id uint64, ents []ecs.Entity, mark uint64) *Layout {
	var free *Layout
	for _, b := range p.bufs {
		if b.refs > 0 && b.ID == id {
			b.refs++
			return b
		}
		if b.refs == 0 && free == nil {
			free = b
		}
	}
	if free == nil {
		free = &Layout{}
		p.bufs = append(p.bufs, free)
	}
	free.ID, free.Ents, free.refs = id, append(free.Ents[:0], ents...), 1
	free.Mark, free.idxOK = mark, false
	return free
}

// Release gives back *l (if not nil) and sets *l to nil.
func Release(l **Layout) {
	if *l != nil {
		(*l).refs--
		*l = nil
	}
}

// Bytes is the memory the pool holds, each layout counted once however many
// frames share it.
func (p *Layouts) Bytes() int {
	n := 0
	for _, b := range p.bufs {
		n += 8*cap(b.Ents) + 4*cap(b.idx) + int(unsafe.Sizeof(*b))
	}
	return n
}
