package ecs

// Code in this file is regular by design: one query type per arity, 1 to 4.

import (
	"iter"
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

// Batch1 is a run of matching entities whose components sit at consecutive
// positions: A[i] belong to Entities[i]. Slices of
// write accesses are the store's own values (all marked as written); slices of
// read accesses are the store's own values too, for reading only (copies in
// checked mode; see Access). They are valid until the next batch.
type Batch1[T1 any] struct {
	Entities []Entity
	A        []T1
}

// Query1 visits every entity that has a T1, in the dense order of
// the smallest accessed Store: a deterministic order. Build it once and reuse it.
type Query1[T1 any] struct {
	A  Access[T1]
	f  filter
	al alignment
}

// NewQuery1 returns a query over the given accesses (see Store.Write and Store.Read).
func NewQuery1[T1 any](a Access[T1]) *Query1[T1] {
	return &Query1[T1]{A: a}
}

// With restricts the query to entities that also have every component in ss.
func (q *Query1[T1]) With(ss ...Storage) *Query1[T1] {
	q.f.with = append(q.f.with, ss...)
	return q
}

// Without restricts the query to entities that have none of the components in ss.
func (q *Query1[T1]) Without(ss ...Storage) *Query1[T1] {
	q.f.without = append(q.f.without, ss...)
	return q
}

func (q *Query1[T1]) scan(limit int) (s scan) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.f, s.limit = &q.f, limit
	q.al.check(&s, [4]uint64{q.A.s.layout})
	return s
}

// start locks the accessed stores (end(gen) unlocks them unless a snapshot
// load released every lock since; see World.BeginRestore), takes the read
// buffers of one iteration into c, and limits runs to what they hold.
func (q *Query1[T1]) start(c *cut[T1, none, none, none]) (s scan, now, gen uint64) {
	s = q.scan(maxRun)
	q.A.s.locks++
	w := q.A.s.w
	now = w.tick
	c.ka = q.A.take(now)
	s.limit = chunkOf(c.ka)
	return s, now, w.lockGen
}

func (q *Query1[T1]) end(gen uint64) {
	if q.A.s.w.lockGen != gen {
		return
	}
	q.A.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
// The iterator has no deferred cleanup, so that it and the loop body inline
// into a plain loop over the stores' arrays; if the loop body panics, the
// stores stay locked until the next snapshot load (see World.BeginRestore).
func (q *Query1[T1]) All() iter.Seq2[Entity, *T1] {
	return func(yield func(Entity, *T1) bool) {
		var cu cut[T1, none, none, none]
		s, now, gen := q.start(&cu)
	loop:
		for {
			i, n, st, ok := s.next()
			if !ok {
				break
			}
			q.cut(&cu, st, n)
			ents := s.drv[i:][:n]
			a := cu.a[:n]
			t0 := cu.t[0][:n]
			j := 0
			for ; j < len(ents)-1; j += 2 { // two at a time: half the loop overhead
				t0[j] = now
				if !yield(ents[j], &a[j]) {
					break loop
				}
				t0[j+1] = now
				if !yield(ents[j+1], &a[j+1]) {
					break loop
				}
			}
			if j < len(ents) {
				t0[j] = now
				if !yield(ents[j], &a[j]) {
					break loop
				}
			}
		}
		q.finish(gen, &cu)
	}
}

// cut fills c with the chunk of n entities at positions st.
func (q *Query1[T1]) cut(c *cut[T1, none, none, none], st [4]int, n int) {
	c.a, c.t[0] = q.A.part(c.ka, st[0], n)
	c.nw = writesFirst(&c.t, [4]bool{q.A.write})
}

// Batches iterates over the matching entities in runs of up to 1024 (see
// Batch1), for code that works on slices (a copy, a bulk operation, a
// function taking slices); its write accesses mark a whole run before the
// loop body sees it. Same order and locking as All; the stores are
// unlocked even if the loop body panics.
func (q *Query1[T1]) Batches() iter.Seq[Batch1[T1]] {
	return func(yield func(Batch1[T1]) bool) {
		var cu cut[T1, none, none, none]
		s, now, gen := q.start(&cu)
		defer q.finish(gen, &cu)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch1[T1]{s.drv[i : i+n : i+n], q.A.view(cu.ka, st[0], n, now)}) {
				return
			}
		}
	}
}

// finish unlocks the stores (see end) and gives back the read buffers of
// one iteration (verifying them in checked mode).
func (q *Query1[T1]) finish(gen uint64, c *cut[T1, none, none, none]) {
	q.end(gen)
	q.A.give(c.ka)
}

// Get returns the row of e, or false when e does not match the query.
func (q *Query1[T1]) Get(e Entity) (*T1, bool) {
	pA := q.A.s.pos(e)
	if pA < 0 {
		return nil, false
	}
	if !q.f.ok(e) {
		return nil, false
	}
	return q.A.ptr(pA), true
}

// Count returns the number of matching entities.
func (q *Query1[T1]) Count() int {
	s := q.scan(noLimit)
	c := 0
	for {
		_, n, _, ok := s.next()
		if !ok {
			return c
		}
		c += n
	}
}

// Row2 holds pointers to the components of one entity visited by a Query2.
type Row2[T1, T2 any] struct {
	A *T1
	B *T2
}

// Batch2 is a run of matching entities whose components sit at consecutive
// positions: A[i], B[i] belong to Entities[i]. Slices of
// write accesses are the store's own values (all marked as written); slices of
// read accesses are the store's own values too, for reading only (copies in
// checked mode; see Access). They are valid until the next batch.
type Batch2[T1, T2 any] struct {
	Entities []Entity
	A        []T1
	B        []T2
}

// Query2 visits every entity that has all of T1, T2, in the dense order of
// the smallest accessed Store: a deterministic order. Build it once and reuse it.
type Query2[T1, T2 any] struct {
	A  Access[T1]
	B  Access[T2]
	f  filter
	al alignment
}

// NewQuery2 returns a query over the given accesses (see Store.Write and Store.Read).
func NewQuery2[T1, T2 any](a Access[T1], b Access[T2]) *Query2[T1, T2] {
	return &Query2[T1, T2]{A: a, B: b}
}

// With restricts the query to entities that also have every component in ss.
func (q *Query2[T1, T2]) With(ss ...Storage) *Query2[T1, T2] {
	q.f.with = append(q.f.with, ss...)
	return q
}

// Without restricts the query to entities that have none of the components in ss.
func (q *Query2[T1, T2]) Without(ss ...Storage) *Query2[T1, T2] {
	q.f.without = append(q.f.without, ss...)
	return q
}

func (q *Query2[T1, T2]) scan(limit int) (s scan) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.add(q.B.s.ents, q.B.s.sparse)
	s.f, s.limit = &q.f, limit
	q.al.check(&s, [4]uint64{q.A.s.layout, q.B.s.layout})
	return s
}

// start locks the accessed stores (end(gen) unlocks them unless a snapshot
// load released every lock since; see World.BeginRestore), takes the read
// buffers of one iteration into c, and limits runs to what they hold.
func (q *Query2[T1, T2]) start(c *cut[T1, T2, none, none]) (s scan, now, gen uint64) {
	s = q.scan(maxRun)
	q.A.s.locks++
	q.B.s.locks++
	w := q.A.s.w
	now = w.tick
	c.ka, c.kb = q.A.take(now), q.B.take(now)
	s.limit = min(chunkOf(c.ka), chunkOf(c.kb))
	return s, now, w.lockGen
}

func (q *Query2[T1, T2]) end(gen uint64) {
	if q.A.s.w.lockGen != gen {
		return
	}
	q.A.s.locks--
	q.B.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
// The iterator has no deferred cleanup, so that it and the loop body inline
// into a plain loop over the stores' arrays; if the loop body panics, the
// stores stay locked until the next snapshot load (see World.BeginRestore).
func (q *Query2[T1, T2]) All() iter.Seq2[Entity, Row2[T1, T2]] {
	return func(yield func(Entity, Row2[T1, T2]) bool) {
		var cu cut[T1, T2, none, none]
		s, now, gen := q.start(&cu)
	loop:
		for {
			i, n, st, ok := s.next()
			if !ok {
				break
			}
			q.cut(&cu, st, n)
			ents := s.drv[i:][:n]
			a, b := cu.a[:n], cu.b[:n]
			t0, t1 := cu.t[0][:n], cu.t[1]
			if cu.nw <= 1 { // the slices after the writes' are sinks
				j := 0
				for ; j < len(ents)-1; j += 2 { // two at a time: half the loop overhead
					t0[j] = now
					if !yield(ents[j], Row2[T1, T2]{&a[j], &b[j]}) {
						break loop
					}
					t0[j+1] = now
					if !yield(ents[j+1], Row2[T1, T2]{&a[j+1], &b[j+1]}) {
						break loop
					}
				}
				if j < len(ents) {
					t0[j] = now
					if !yield(ents[j], Row2[T1, T2]{&a[j], &b[j]}) {
						break loop
					}
				}
				continue
			}
			for j, e := range ents {
				t0[j], t1[j] = now, now
				if !yield(e, Row2[T1, T2]{&a[j], &b[j]}) {
					break loop
				}
			}
		}
		q.finish(gen, &cu)
	}
}

// cut fills c with the chunk of n entities at positions st.
func (q *Query2[T1, T2]) cut(c *cut[T1, T2, none, none], st [4]int, n int) {
	c.a, c.t[0] = q.A.part(c.ka, st[0], n)
	c.b, c.t[1] = q.B.part(c.kb, st[1], n)
	c.nw = writesFirst(&c.t, [4]bool{q.A.write, q.B.write})
}

// Batches iterates over the matching entities in runs of up to 1024 (see
// Batch2), for code that works on slices (a copy, a bulk operation, a
// function taking slices); its write accesses mark a whole run before the
// loop body sees it. Same order and locking as All; the stores are
// unlocked even if the loop body panics.
func (q *Query2[T1, T2]) Batches() iter.Seq[Batch2[T1, T2]] {
	return func(yield func(Batch2[T1, T2]) bool) {
		var cu cut[T1, T2, none, none]
		s, now, gen := q.start(&cu)
		defer q.finish(gen, &cu)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch2[T1, T2]{s.drv[i : i+n : i+n], q.A.view(cu.ka, st[0], n, now), q.B.view(cu.kb, st[1], n, now)}) {
				return
			}
		}
	}
}

// finish unlocks the stores (see end) and gives back the read buffers of
// one iteration (verifying them in checked mode).
func (q *Query2[T1, T2]) finish(gen uint64, c *cut[T1, T2, none, none]) {
	q.end(gen)
	q.A.give(c.ka)
	q.B.give(c.kb)
}

// Get returns the row of e, or false when e does not match the query.
func (q *Query2[T1, T2]) Get(e Entity) (Row2[T1, T2], bool) {
	pA := q.A.s.pos(e)
	if pA < 0 {
		return Row2[T1, T2]{}, false
	}
	pB := q.B.s.pos(e)
	if pB < 0 {
		return Row2[T1, T2]{}, false
	}
	if !q.f.ok(e) {
		return Row2[T1, T2]{}, false
	}
	return Row2[T1, T2]{q.A.ptr(pA), q.B.ptr(pB)}, true
}

// Count returns the number of matching entities.
func (q *Query2[T1, T2]) Count() int {
	s := q.scan(noLimit)
	c := 0
	for {
		_, n, _, ok := s.next()
		if !ok {
			return c
		}
		c += n
	}
}

// Row3 holds pointers to the components of one entity visited by a Query3.
type Row3[T1, T2, T3 any] struct {
	A *T1
	B *T2
	C *T3
}

// Batch3 is a run of matching entities whose components sit at consecutive
// positions: A[i], B[i], C[i] belong to Entities[i]. Slices of
// write accesses are the store's own values (all marked as written); slices of
// read accesses are the store's own values too, for reading only (copies in
// checked mode; see Access). They are valid until the next batch.
type Batch3[T1, T2, T3 any] struct {
	Entities []Entity
	A        []T1
	B        []T2
	C        []T3
}

// Query3 visits every entity that has all of T1, T2, T3, in the dense order of
// the smallest accessed Store: a deterministic order. Build it once and reuse it.
type Query3[T1, T2, T3 any] struct {
	A  Access[T1]
	B  Access[T2]
	C  Access[T3]
	f  filter
	al alignment
}

// NewQuery3 returns a query over the given accesses (see Store.Write and Store.Read).
func NewQuery3[T1, T2, T3 any](a Access[T1], b Access[T2], c Access[T3]) *Query3[T1, T2, T3] {
	return &Query3[T1, T2, T3]{A: a, B: b, C: c}
}

// With restricts the query to entities that also have every component in ss.
func (q *Query3[T1, T2, T3]) With(ss ...Storage) *Query3[T1, T2, T3] {
	q.f.with = append(q.f.with, ss...)
	return q
}

// Without restricts the query to entities that have none of the components in ss.
func (q *Query3[T1, T2, T3]) Without(ss ...Storage) *Query3[T1, T2, T3] {
	q.f.without = append(q.f.without, ss...)
	return q
}

func (q *Query3[T1, T2, T3]) scan(limit int) (s scan) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.add(q.B.s.ents, q.B.s.sparse)
	s.add(q.C.s.ents, q.C.s.sparse)
	s.f, s.limit = &q.f, limit
	q.al.check(&s, [4]uint64{q.A.s.layout, q.B.s.layout, q.C.s.layout})
	return s
}

// start locks the accessed stores (end(gen) unlocks them unless a snapshot
// load released every lock since; see World.BeginRestore), takes the read
// buffers of one iteration into c, and limits runs to what they hold.
func (q *Query3[T1, T2, T3]) start(c *cut[T1, T2, T3, none]) (s scan, now, gen uint64) {
	s = q.scan(maxRun)
	q.A.s.locks++
	q.B.s.locks++
	q.C.s.locks++
	w := q.A.s.w
	now = w.tick
	c.ka, c.kb, c.kc = q.A.take(now), q.B.take(now), q.C.take(now)
	s.limit = min(chunkOf(c.ka), chunkOf(c.kb), chunkOf(c.kc))
	return s, now, w.lockGen
}

func (q *Query3[T1, T2, T3]) end(gen uint64) {
	if q.A.s.w.lockGen != gen {
		return
	}
	q.A.s.locks--
	q.B.s.locks--
	q.C.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
// The iterator has no deferred cleanup, so that it and the loop body inline
// into a plain loop over the stores' arrays; if the loop body panics, the
// stores stay locked until the next snapshot load (see World.BeginRestore).
func (q *Query3[T1, T2, T3]) All() iter.Seq2[Entity, Row3[T1, T2, T3]] {
	return func(yield func(Entity, Row3[T1, T2, T3]) bool) {
		var cu cut[T1, T2, T3, none]
		s, now, gen := q.start(&cu)
	loop:
		for {
			i, n, st, ok := s.next()
			if !ok {
				break
			}
			q.cut(&cu, st, n)
			ents := s.drv[i:][:n]
			a, b, c := cu.a[:n], cu.b[:n], cu.c[:n]
			t0, t1, t2 := cu.t[0][:n], cu.t[1], cu.t[2]
			if cu.nw <= 1 { // the slices after the writes' are sinks
				j := 0
				for ; j < len(ents)-1; j += 2 { // two at a time: half the loop overhead
					t0[j] = now
					if !yield(ents[j], Row3[T1, T2, T3]{&a[j], &b[j], &c[j]}) {
						break loop
					}
					t0[j+1] = now
					if !yield(ents[j+1], Row3[T1, T2, T3]{&a[j+1], &b[j+1], &c[j+1]}) {
						break loop
					}
				}
				if j < len(ents) {
					t0[j] = now
					if !yield(ents[j], Row3[T1, T2, T3]{&a[j], &b[j], &c[j]}) {
						break loop
					}
				}
				continue
			}
			for j, e := range ents {
				t0[j], t1[j], t2[j] = now, now, now
				if !yield(e, Row3[T1, T2, T3]{&a[j], &b[j], &c[j]}) {
					break loop
				}
			}
		}
		q.finish(gen, &cu)
	}
}

// cut fills c with the chunk of n entities at positions st.
func (q *Query3[T1, T2, T3]) cut(c *cut[T1, T2, T3, none], st [4]int, n int) {
	c.a, c.t[0] = q.A.part(c.ka, st[0], n)
	c.b, c.t[1] = q.B.part(c.kb, st[1], n)
	c.c, c.t[2] = q.C.part(c.kc, st[2], n)
	c.nw = writesFirst(&c.t, [4]bool{q.A.write, q.B.write, q.C.write})
}

// Batches iterates over the matching entities in runs of up to 1024 (see
// Batch3), for code that works on slices (a copy, a bulk operation, a
// function taking slices); its write accesses mark a whole run before the
// loop body sees it. Same order and locking as All; the stores are
// unlocked even if the loop body panics.
func (q *Query3[T1, T2, T3]) Batches() iter.Seq[Batch3[T1, T2, T3]] {
	return func(yield func(Batch3[T1, T2, T3]) bool) {
		var cu cut[T1, T2, T3, none]
		s, now, gen := q.start(&cu)
		defer q.finish(gen, &cu)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch3[T1, T2, T3]{s.drv[i : i+n : i+n], q.A.view(cu.ka, st[0], n, now), q.B.view(cu.kb, st[1], n, now), q.C.view(cu.kc, st[2], n, now)}) {
				return
			}
		}
	}
}

// finish unlocks the stores (see end) and gives back the read buffers of
// one iteration (verifying them in checked mode).
func (q *Query3[T1, T2, T3]) finish(gen uint64, c *cut[T1, T2, T3, none]) {
	q.end(gen)
	q.A.give(c.ka)
	q.B.give(c.kb)
	q.C.give(c.kc)
}

// Get returns the row of e, or false when e does not match the query.
func (q *Query3[T1, T2, T3]) Get(e Entity) (Row3[T1, T2, T3], bool) {
	pA := q.A.s.pos(e)
	if pA < 0 {
		return Row3[T1, T2, T3]{}, false
	}
	pB := q.B.s.pos(e)
	if pB < 0 {
		return Row3[T1, T2, T3]{}, false
	}
	pC := q.C.s.pos(e)
	if pC < 0 {
		return Row3[T1, T2, T3]{}, false
	}
	if !q.f.ok(e) {
		return Row3[T1, T2, T3]{}, false
	}
	return Row3[T1, T2, T3]{q.A.ptr(pA), q.B.ptr(pB), q.C.ptr(pC)}, true
}

// Count returns the number of matching entities.
func (q *Query3[T1, T2, T3]) Count() int {
	s := q.scan(noLimit)
	c := 0
	for {
		_, n, _, ok := s.next()
		if !ok {
			return c
		}
		c += n
	}
}

// Row4 holds pointers to the components of one entity visited by a Query4.
type Row4[T1, T2, T3, T4 any] struct {
	A *T1
	B *T2
	C *T3
	D *T4
}

// Batch4 is a run of matching entities whose components sit at consecutive
// positions: A[i], B[i], C[i], D[i] belong to Entities[i]. Slices of
// write accesses are the store's own values (all marked as written); slices of
// read accesses are the store's own values too, for reading only (copies in
// checked mode; see Access). They are valid until the next batch.
type Batch4[T1, T2, T3, T4 any] struct {
	Entities []Entity
	A        []T1
	B        []T2
	C        []T3
	D        []T4
}

// Query4 visits every entity that has all of T1, T2, T3, T4, in the dense order of
// the smallest accessed Store: a deterministic order. Build it once and reuse it.
type Query4[T1, T2, T3, T4 any] struct {
	A  Access[T1]
	B  Access[T2]
	C  Access[T3]
	D  Access[T4]
	f  filter
	al alignment
}

// NewQuery4 returns a query over the given accesses (see Store.Write and Store.Read).
func NewQuery4[T1, T2, T3, T4 any](a Access[T1], b Access[T2], c Access[T3], d Access[T4]) *Query4[T1, T2, T3, T4] {
	return &Query4[T1, T2, T3, T4]{A: a, B: b, C: c, D: d}
}

// With restricts the query to entities that also have every component in ss.
func (q *Query4[T1, T2, T3, T4]) With(ss ...Storage) *Query4[T1, T2, T3, T4] {
	q.f.with = append(q.f.with, ss...)
	return q
}

// Without restricts the query to entities that have none of the components in ss.
func (q *Query4[T1, T2, T3, T4]) Without(ss ...Storage) *Query4[T1, T2, T3, T4] {
	q.f.without = append(q.f.without, ss...)
	return q
}

func (q *Query4[T1, T2, T3, T4]) scan(limit int) (s scan) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.add(q.B.s.ents, q.B.s.sparse)
	s.add(q.C.s.ents, q.C.s.sparse)
	s.add(q.D.s.ents, q.D.s.sparse)
	s.f, s.limit = &q.f, limit
	q.al.check(&s, [4]uint64{q.A.s.layout, q.B.s.layout, q.C.s.layout, q.D.s.layout})
	return s
}

// start locks the accessed stores (end(gen) unlocks them unless a snapshot
// load released every lock since; see World.BeginRestore), takes the read
// buffers of one iteration into c, and limits runs to what they hold.
func (q *Query4[T1, T2, T3, T4]) start(c *cut[T1, T2, T3, T4]) (s scan, now, gen uint64) {
	s = q.scan(maxRun)
	q.A.s.locks++
	q.B.s.locks++
	q.C.s.locks++
	q.D.s.locks++
	w := q.A.s.w
	now = w.tick
	c.ka, c.kb, c.kc, c.kd = q.A.take(now), q.B.take(now), q.C.take(now), q.D.take(now)
	s.limit = min(chunkOf(c.ka), chunkOf(c.kb), chunkOf(c.kc), chunkOf(c.kd))
	return s, now, w.lockGen
}

func (q *Query4[T1, T2, T3, T4]) end(gen uint64) {
	if q.A.s.w.lockGen != gen {
		return
	}
	q.A.s.locks--
	q.B.s.locks--
	q.C.s.locks--
	q.D.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
// The iterator has no deferred cleanup, so that it and the loop body inline
// into a plain loop over the stores' arrays; if the loop body panics, the
// stores stay locked until the next snapshot load (see World.BeginRestore).
func (q *Query4[T1, T2, T3, T4]) All() iter.Seq2[Entity, Row4[T1, T2, T3, T4]] {
	return func(yield func(Entity, Row4[T1, T2, T3, T4]) bool) {
		var cu cut[T1, T2, T3, T4]
		s, now, gen := q.start(&cu)
	loop:
		for {
			i, n, st, ok := s.next()
			if !ok {
				break
			}
			q.cut(&cu, st, n)
			ents := s.drv[i:][:n]
			a, b, c, d := cu.a[:n], cu.b[:n], cu.c[:n], cu.d[:n]
			t0, t1, t2, t3 := cu.t[0][:n], cu.t[1], cu.t[2], cu.t[3]
			if cu.nw <= 1 { // the slices after the writes' are sinks
				j := 0
				for ; j < len(ents)-1; j += 2 { // two at a time: half the loop overhead
					t0[j] = now
					if !yield(ents[j], Row4[T1, T2, T3, T4]{&a[j], &b[j], &c[j], &d[j]}) {
						break loop
					}
					t0[j+1] = now
					if !yield(ents[j+1], Row4[T1, T2, T3, T4]{&a[j+1], &b[j+1], &c[j+1], &d[j+1]}) {
						break loop
					}
				}
				if j < len(ents) {
					t0[j] = now
					if !yield(ents[j], Row4[T1, T2, T3, T4]{&a[j], &b[j], &c[j], &d[j]}) {
						break loop
					}
				}
				continue
			}
			for j, e := range ents {
				t0[j], t1[j], t2[j], t3[j] = now, now, now, now
				if !yield(e, Row4[T1, T2, T3, T4]{&a[j], &b[j], &c[j], &d[j]}) {
					break loop
				}
			}
		}
		q.finish(gen, &cu)
	}
}

// cut fills c with the chunk of n entities at positions st.
func (q *Query4[T1, T2, T3, T4]) cut(c *cut[T1, T2, T3, T4], st [4]int, n int) {
	c.a, c.t[0] = q.A.part(c.ka, st[0], n)
	c.b, c.t[1] = q.B.part(c.kb, st[1], n)
	c.c, c.t[2] = q.C.part(c.kc, st[2], n)
	c.d, c.t[3] = q.D.part(c.kd, st[3], n)
	c.nw = writesFirst(&c.t, [4]bool{q.A.write, q.B.write, q.C.write, q.D.write})
}

// Batches iterates over the matching entities in runs of up to 1024 (see
// Batch4), for code that works on slices (a copy, a bulk operation, a
// function taking slices); its write accesses mark a whole run before the
// loop body sees it. Same order and locking as All; the stores are
// unlocked even if the loop body panics.
func (q *Query4[T1, T2, T3, T4]) Batches() iter.Seq[Batch4[T1, T2, T3, T4]] {
	return func(yield func(Batch4[T1, T2, T3, T4]) bool) {
		var cu cut[T1, T2, T3, T4]
		s, now, gen := q.start(&cu)
		defer q.finish(gen, &cu)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch4[T1, T2, T3, T4]{s.drv[i : i+n : i+n], q.A.view(cu.ka, st[0], n, now), q.B.view(cu.kb, st[1], n, now), q.C.view(cu.kc, st[2], n, now), q.D.view(cu.kd, st[3], n, now)}) {
				return
			}
		}
	}
}

// finish unlocks the stores (see end) and gives back the read buffers of
// one iteration (verifying them in checked mode).
func (q *Query4[T1, T2, T3, T4]) finish(gen uint64, c *cut[T1, T2, T3, T4]) {
	q.end(gen)
	q.A.give(c.ka)
	q.B.give(c.kb)
	q.C.give(c.kc)
	q.D.give(c.kd)
}

// Get returns the row of e, or false when e does not match the query.
func (q *Query4[T1, T2, T3, T4]) Get(e Entity) (Row4[T1, T2, T3, T4], bool) {
	pA := q.A.s.pos(e)
	if pA < 0 {
		return Row4[T1, T2, T3, T4]{}, false
	}
	pB := q.B.s.pos(e)
	if pB < 0 {
		return Row4[T1, T2, T3, T4]{}, false
	}
	pC := q.C.s.pos(e)
	if pC < 0 {
		return Row4[T1, T2, T3, T4]{}, false
	}
	pD := q.D.s.pos(e)
	if pD < 0 {
		return Row4[T1, T2, T3, T4]{}, false
	}
	if !q.f.ok(e) {
		return Row4[T1, T2, T3, T4]{}, false
	}
	return Row4[T1, T2, T3, T4]{q.A.ptr(pA), q.B.ptr(pB), q.C.ptr(pC), q.D.ptr(pD)}, true
}

// Count returns the number of matching entities.
func (q *Query4[T1, T2, T3, T4]) Count() int {
	s := q.scan(noLimit)
	c := 0
	for {
		_, n, _, ok := s.next()
		if !ok {
			return c
		}
		c += n
	}
}
