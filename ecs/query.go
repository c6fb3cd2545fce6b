package ecs

// This file is the query engine every query type shares: the scan that
// finds runs of matching entities, the alignment cache and the chunk a loop
// works on. The query types themselves (Query1 to Query4, Row2 to Row4,
// Batch1 to Batch4) are generated into query_gen.go from one template in
// internal/querygen; edit the template and run go generate.

//go:generate go run ./internal/querygen

import (
	"math"
	"unsafe"
)

// Storage is implemented by every *Store[T]; queries take it for With and
// Without filters.
type Storage interface {
	Info() TypeInfo
	Has(e Entity) bool
	Len() int
	storage
}

// filter holds a query's With and Without conditions.
type filter struct {
	with, without []Storage
}

func (f *filter) active() bool { return len(f.with)+len(f.without) > 0 }

func (f *filter) ok(e Entity) bool {
	for _, s := range f.with {
		if !s.Has(e) {
			return false
		}
	}
	for _, s := range f.without {
		if s.Has(e) {
			return false
		}
	}
	return true
}

// lookup returns e's dense position through a sparse array, or -1.
func lookup(sparse []int32, ents []Entity, e Entity) int {
	if i := e.Index(); int(i) < len(sparse) {
		if p := int(sparse[i]) - 1; p >= 0 && ents[p] == e {
			return p
		}
	}
	return -1
}

// maxRun bounds a batch and a loop's chunk (in checked mode, read buffers
// bound them further); Count takes runs of any length.
const (
	maxRun  = 1024
	noLimit = math.MaxInt
)

// scan walks the smallest accessed store and finds runs of matching entities
// that sit at consecutive positions in every accessed store, so a run costs
// one sparse lookup per store instead of one per entity. When every store
// holds exactly the driver's entities in the same order (aligned), runs need
// no lookups at all.
type scan struct {
	drv     []Entity
	ents    [4][]Entity
	sparse  [4][]int32
	k       int
	d       int // index of the driver among the stores
	f       *filter
	i       int
	limit   int  // longest run returned
	aligned bool // every store's entities equal drv
}

func (s *scan) add(ents []Entity, sparse []int32) {
	s.ents[s.k], s.sparse[s.k] = ents, sparse
	if s.k == 0 || len(ents) < len(s.drv) {
		s.drv, s.d = ents, s.k
	}
	s.k++
}

// next returns the next run: driver entities drv[i:i+n], found in store k at
// positions start[k] to start[k]+n.
func (s *scan) next() (i, n int, start [4]int, ok bool) {
	filtered := s.f != nil && s.f.active()
	if s.aligned {
		for ; s.i < len(s.drv); s.i++ {
			if filtered && !s.f.ok(s.drv[s.i]) {
				continue
			}
			i = s.i
			n = min(len(s.drv)-i, s.limit)
			if filtered {
				n = s.filterRun(i, n)
			}
			s.i += n
			return i, n, [4]int{i, i, i, i}, true
		}
		return 0, 0, start, false
	}
outer:
	for s.i < len(s.drv) {
		e := s.drv[s.i]
		for k := 0; k < s.k; k++ {
			p := lookup(s.sparse[k], s.ents[k], e)
			if p < 0 {
				s.i++
				continue outer
			}
			start[k] = p
		}
		if filtered && !s.f.ok(e) {
			s.i++
			continue
		}
		n = min(len(s.drv)-s.i, s.limit)
		for k := 0; k < s.k; k++ {
			if k != s.d {
				n = commonRun(s.drv[s.i:s.i+n], s.ents[k][start[k]:])
			}
		}
		if filtered {
			n = s.filterRun(s.i, n)
		}
		i = s.i
		s.i += n
		return i, n, start, true
	}
	return 0, 0, start, false
}

// filterRun shortens the run drv[i:i+n], whose first entity passes the
// filter, to the entities before the first one that does not.
func (s *scan) filterRun(i, n int) int {
	for j, e := range s.drv[i+1 : i+n] {
		if !s.f.ok(e) {
			return j + 1
		}
	}
	return n
}

// commonRun returns the length of the common prefix of a and b (capped at len(a)).
func commonRun(a, b []Entity) int {
	if len(b) < len(a) {
		a = a[:len(b)]
	}
	b = b[:len(a)]
	const chunk = 64
	j := 0
	for j+chunk <= len(a) && sameEntities(a[j:j+chunk], b[j:j+chunk]) {
		j += chunk
	}
	for j < len(a) && a[j] == b[j] {
		j++
	}
	return j
}

// sameEntities reports whether a and b hold the same entities in the same
// order, comparing their memory at memequal speed.
func sameEntities(a, b []Entity) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	n := len(a) * int(unsafe.Sizeof(a[0]))
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), n)) == string(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), n))
}

// alignment remembers whether a query's stores hold the same entities in the
// same order. A store's layout id changes with every insert and removal and
// equal ids mean equal layouts, so the answer holds until an id changes;
// while the layouts stay, a query finds its runs without comparing entities.
type alignment struct {
	ids     [4]uint64
	aligned bool
}

// check sets s.aligned for stores with the given layout ids.
func (a *alignment) check(s *scan, ids [4]uint64) {
	if ids != a.ids {
		a.ids = ids
		a.aligned = true
		for k := 0; k < s.k; k++ {
			if !sameEntities(s.ents[k], s.drv) {
				a.aligned = false
				break
			}
		}
	}
	s.aligned = a.aligned
}

// none fills the unused type parameters of cut.
type none struct{}

// cut is one chunk of a query loop: the values each access hands out (the
// store's own, or copies for read access in checked mode) and the change-tick
// slices the loop marks, those of the nw write accesses first.
type cut[T1, T2, T3, T4 any] struct {
	a  []T1
	b  []T2
	c  []T3
	d  []T4
	t  [4][]uint64
	nw int
	// the read buffers of the iteration (checked mode), one per access
	ka *chunk[T1]
	kb *chunk[T2]
	kc *chunk[T3]
	kd *chunk[T4]
}

// writesFirst reorders a chunk's change-tick slices so that those of the
// write accesses (w) come first, in order, and returns how many there are. A
// query loop marks the first one always (a read access's slice is its
// sink, so a query without write access marks nothing that counts) and the
// others while they belong to write accesses.
func writesFirst(t *[4][]uint64, w [4]bool) int {
	n := 0
	for k := range t {
		if w[k] {
			t[n], t[k] = t[k], t[n]
			n++
		}
	}
	return n
}
