package ecs

// Code in this file is regular by design: one query type per arity, 1 to 4.

import "iter"

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

// maxRun bounds a batch, so read-only batches copy through a bounded buffer.
const maxRun = 1024

// scan walks the smallest accessed store and finds runs of matching entities
// that sit at consecutive positions in every accessed store, so a run costs
// one sparse lookup per store instead of one per entity.
type scan struct {
	drv    []Entity
	ents   [4][]Entity
	sparse [4][]int32
	k      int
	f      *filter
	i      int
}

func (s *scan) add(ents []Entity, sparse []int32) {
	s.ents[s.k], s.sparse[s.k] = ents, sparse
	if s.k == 0 || len(ents) < len(s.drv) {
		s.drv = ents
	}
	s.k++
}

// next returns the next run: driver entities drv[i:i+n], found in store k at
// positions start[k] to start[k]+n.
func (s *scan) next() (i, n int, start [4]int, ok bool) {
	filtered := s.f != nil && len(s.f.with)+len(s.f.without) > 0
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
		n = min(len(s.drv)-s.i, maxRun)
		for k := 0; k < s.k; k++ {
			if start[k] != s.i || len(s.ents[k]) != len(s.drv) { // not the driver itself
				n = commonRun(s.drv[s.i:s.i+n], s.ents[k][start[k]:])
			}
		}
		if filtered {
			for j, e2 := range s.drv[s.i+1 : s.i+n] {
				if !s.f.ok(e2) {
					n = j + 1
					break
				}
			}
		}
		i = s.i
		s.i += n
		return i, n, start, true
	}
	return 0, 0, start, false
}

// commonRun returns the length of the common prefix of a and b (capped at len(a)).
func commonRun(a, b []Entity) int {
	if len(b) < len(a) {
		a = a[:len(b)]
	}
	b = b[:len(a)]
	for j := range a {
		if a[j] != b[j] {
			return j
		}
	}
	return len(a)
}

// view returns the slice of a run for one access: the store's values (marked
// as written) for write access, or a copy in the access's buffer for read.
func (a *Access[T]) view(start, n int, now uint64) []T {
	s := a.s
	if a.write {
		c := s.changed[start : start+n]
		for j := range c {
			c[j] = now
		}
		return s.dense[start : start+n : start+n]
	}
	a.buf = append(a.buf[:0], s.dense[start:start+n]...)
	return a.buf
}

// Batch1 is a run of matching entities whose components sit at consecutive
// positions: A[i] belong to Entities[i]. Slices of
// write accesses are the store's own values (all marked as written); slices of
// read accesses are copies. They are valid until the next batch.
type Batch1[T1 any] struct {
	Entities []Entity
	A        []T1
}

// Query1 visits every entity that has a T1, in the dense order of
// the smallest accessed Store: a deterministic order. Build it once and reuse it.
type Query1[T1 any] struct {
	A Access[T1]
	f filter
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

func (q *Query1[T1]) start() (s scan, now uint64) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.f = &q.f
	q.A.s.locks++
	return s, q.A.s.w.tick
}

func (q *Query1[T1]) end() {
	q.A.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
func (q *Query1[T1]) All() iter.Seq2[Entity, *T1] {
	return func(yield func(Entity, *T1) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		aw, ax := q.A.write, q.A.scratch
		ad, ac := q.A.s.dense, q.A.s.changed
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			for j, e := range s.drv[i : i+n] {
				var rA *T1
				if p := st[0] + j; aw {
					ac[p] = now
					rA = &ad[p]
				} else {
					*ax = ad[p]
					rA = ax
				}
				if !yield(e, rA) {
					return
				}
			}
		}
	}
}

// Batches iterates over the matching entities in runs (see Batch1), the
// fastest way to visit many entities. Same order and locking as All.
func (q *Query1[T1]) Batches() iter.Seq[Batch1[T1]] {
	return func(yield func(Batch1[T1]) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch1[T1]{s.drv[i : i+n : i+n], q.A.view(st[0], n, now)}) {
				return
			}
		}
	}
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
	var rA *T1
	if q.A.write {
		q.A.s.mark(pA)
		rA = &q.A.s.dense[pA]
	} else {
		*q.A.scratch = q.A.s.dense[pA]
		rA = q.A.scratch
	}
	return rA, true
}

// Count returns the number of matching entities.
func (q *Query1[T1]) Count() int {
	s, _ := q.start()
	defer q.end()
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
// read accesses are copies. They are valid until the next batch.
type Batch2[T1, T2 any] struct {
	Entities []Entity
	A        []T1
	B        []T2
}

// Query2 visits every entity that has all of T1, T2, in the dense order of
// the smallest accessed Store: a deterministic order. Build it once and reuse it.
type Query2[T1, T2 any] struct {
	A Access[T1]
	B Access[T2]
	f filter
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

func (q *Query2[T1, T2]) start() (s scan, now uint64) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.add(q.B.s.ents, q.B.s.sparse)
	s.f = &q.f
	q.A.s.locks++
	q.B.s.locks++
	return s, q.A.s.w.tick
}

func (q *Query2[T1, T2]) end() {
	q.A.s.locks--
	q.B.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
func (q *Query2[T1, T2]) All() iter.Seq2[Entity, Row2[T1, T2]] {
	return func(yield func(Entity, Row2[T1, T2]) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		q.B.begin(now)
		aw, ax := q.A.write, q.A.scratch
		ad, ac := q.A.s.dense, q.A.s.changed
		bw, bx := q.B.write, q.B.scratch
		bd, bc := q.B.s.dense, q.B.s.changed
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			for j, e := range s.drv[i : i+n] {
				var rA *T1
				if p := st[0] + j; aw {
					ac[p] = now
					rA = &ad[p]
				} else {
					*ax = ad[p]
					rA = ax
				}
				var rB *T2
				if p := st[1] + j; bw {
					bc[p] = now
					rB = &bd[p]
				} else {
					*bx = bd[p]
					rB = bx
				}
				if !yield(e, Row2[T1, T2]{rA, rB}) {
					return
				}
			}
		}
	}
}

// Batches iterates over the matching entities in runs (see Batch2), the
// fastest way to visit many entities. Same order and locking as All.
func (q *Query2[T1, T2]) Batches() iter.Seq[Batch2[T1, T2]] {
	return func(yield func(Batch2[T1, T2]) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		q.B.begin(now)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch2[T1, T2]{s.drv[i : i+n : i+n], q.A.view(st[0], n, now), q.B.view(st[1], n, now)}) {
				return
			}
		}
	}
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
	var rA *T1
	if q.A.write {
		q.A.s.mark(pA)
		rA = &q.A.s.dense[pA]
	} else {
		*q.A.scratch = q.A.s.dense[pA]
		rA = q.A.scratch
	}
	var rB *T2
	if q.B.write {
		q.B.s.mark(pB)
		rB = &q.B.s.dense[pB]
	} else {
		*q.B.scratch = q.B.s.dense[pB]
		rB = q.B.scratch
	}
	return Row2[T1, T2]{rA, rB}, true
}

// Count returns the number of matching entities.
func (q *Query2[T1, T2]) Count() int {
	s, _ := q.start()
	defer q.end()
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
// read accesses are copies. They are valid until the next batch.
type Batch3[T1, T2, T3 any] struct {
	Entities []Entity
	A        []T1
	B        []T2
	C        []T3
}

// Query3 visits every entity that has all of T1, T2, T3, in the dense order of
// the smallest accessed Store: a deterministic order. Build it once and reuse it.
type Query3[T1, T2, T3 any] struct {
	A Access[T1]
	B Access[T2]
	C Access[T3]
	f filter
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

func (q *Query3[T1, T2, T3]) start() (s scan, now uint64) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.add(q.B.s.ents, q.B.s.sparse)
	s.add(q.C.s.ents, q.C.s.sparse)
	s.f = &q.f
	q.A.s.locks++
	q.B.s.locks++
	q.C.s.locks++
	return s, q.A.s.w.tick
}

func (q *Query3[T1, T2, T3]) end() {
	q.A.s.locks--
	q.B.s.locks--
	q.C.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
func (q *Query3[T1, T2, T3]) All() iter.Seq2[Entity, Row3[T1, T2, T3]] {
	return func(yield func(Entity, Row3[T1, T2, T3]) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		q.B.begin(now)
		q.C.begin(now)
		aw, ax := q.A.write, q.A.scratch
		ad, ac := q.A.s.dense, q.A.s.changed
		bw, bx := q.B.write, q.B.scratch
		bd, bc := q.B.s.dense, q.B.s.changed
		cw, cx := q.C.write, q.C.scratch
		cd, cc := q.C.s.dense, q.C.s.changed
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			for j, e := range s.drv[i : i+n] {
				var rA *T1
				if p := st[0] + j; aw {
					ac[p] = now
					rA = &ad[p]
				} else {
					*ax = ad[p]
					rA = ax
				}
				var rB *T2
				if p := st[1] + j; bw {
					bc[p] = now
					rB = &bd[p]
				} else {
					*bx = bd[p]
					rB = bx
				}
				var rC *T3
				if p := st[2] + j; cw {
					cc[p] = now
					rC = &cd[p]
				} else {
					*cx = cd[p]
					rC = cx
				}
				if !yield(e, Row3[T1, T2, T3]{rA, rB, rC}) {
					return
				}
			}
		}
	}
}

// Batches iterates over the matching entities in runs (see Batch3), the
// fastest way to visit many entities. Same order and locking as All.
func (q *Query3[T1, T2, T3]) Batches() iter.Seq[Batch3[T1, T2, T3]] {
	return func(yield func(Batch3[T1, T2, T3]) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		q.B.begin(now)
		q.C.begin(now)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch3[T1, T2, T3]{s.drv[i : i+n : i+n], q.A.view(st[0], n, now), q.B.view(st[1], n, now), q.C.view(st[2], n, now)}) {
				return
			}
		}
	}
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
	var rA *T1
	if q.A.write {
		q.A.s.mark(pA)
		rA = &q.A.s.dense[pA]
	} else {
		*q.A.scratch = q.A.s.dense[pA]
		rA = q.A.scratch
	}
	var rB *T2
	if q.B.write {
		q.B.s.mark(pB)
		rB = &q.B.s.dense[pB]
	} else {
		*q.B.scratch = q.B.s.dense[pB]
		rB = q.B.scratch
	}
	var rC *T3
	if q.C.write {
		q.C.s.mark(pC)
		rC = &q.C.s.dense[pC]
	} else {
		*q.C.scratch = q.C.s.dense[pC]
		rC = q.C.scratch
	}
	return Row3[T1, T2, T3]{rA, rB, rC}, true
}

// Count returns the number of matching entities.
func (q *Query3[T1, T2, T3]) Count() int {
	s, _ := q.start()
	defer q.end()
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
// read accesses are copies. They are valid until the next batch.
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
	A Access[T1]
	B Access[T2]
	C Access[T3]
	D Access[T4]
	f filter
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

func (q *Query4[T1, T2, T3, T4]) start() (s scan, now uint64) {
	s.add(q.A.s.ents, q.A.s.sparse)
	s.add(q.B.s.ents, q.B.s.sparse)
	s.add(q.C.s.ents, q.C.s.sparse)
	s.add(q.D.s.ents, q.D.s.sparse)
	s.f = &q.f
	q.A.s.locks++
	q.B.s.locks++
	q.C.s.locks++
	q.D.s.locks++
	return s, q.A.s.w.tick
}

func (q *Query4[T1, T2, T3, T4]) end() {
	q.A.s.locks--
	q.B.s.locks--
	q.C.s.locks--
	q.D.s.locks--
}

// All iterates over the matching entities. Stores accessed by the query are
// locked against inserts and removals while the loop runs; use Commands.
func (q *Query4[T1, T2, T3, T4]) All() iter.Seq2[Entity, Row4[T1, T2, T3, T4]] {
	return func(yield func(Entity, Row4[T1, T2, T3, T4]) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		q.B.begin(now)
		q.C.begin(now)
		q.D.begin(now)
		aw, ax := q.A.write, q.A.scratch
		ad, ac := q.A.s.dense, q.A.s.changed
		bw, bx := q.B.write, q.B.scratch
		bd, bc := q.B.s.dense, q.B.s.changed
		cw, cx := q.C.write, q.C.scratch
		cd, cc := q.C.s.dense, q.C.s.changed
		dw, dx := q.D.write, q.D.scratch
		dd, dc := q.D.s.dense, q.D.s.changed
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			for j, e := range s.drv[i : i+n] {
				var rA *T1
				if p := st[0] + j; aw {
					ac[p] = now
					rA = &ad[p]
				} else {
					*ax = ad[p]
					rA = ax
				}
				var rB *T2
				if p := st[1] + j; bw {
					bc[p] = now
					rB = &bd[p]
				} else {
					*bx = bd[p]
					rB = bx
				}
				var rC *T3
				if p := st[2] + j; cw {
					cc[p] = now
					rC = &cd[p]
				} else {
					*cx = cd[p]
					rC = cx
				}
				var rD *T4
				if p := st[3] + j; dw {
					dc[p] = now
					rD = &dd[p]
				} else {
					*dx = dd[p]
					rD = dx
				}
				if !yield(e, Row4[T1, T2, T3, T4]{rA, rB, rC, rD}) {
					return
				}
			}
		}
	}
}

// Batches iterates over the matching entities in runs (see Batch4), the
// fastest way to visit many entities. Same order and locking as All.
func (q *Query4[T1, T2, T3, T4]) Batches() iter.Seq[Batch4[T1, T2, T3, T4]] {
	return func(yield func(Batch4[T1, T2, T3, T4]) bool) {
		s, now := q.start()
		defer q.end()
		q.A.begin(now)
		q.B.begin(now)
		q.C.begin(now)
		q.D.begin(now)
		for {
			i, n, st, ok := s.next()
			if !ok {
				return
			}
			if !yield(Batch4[T1, T2, T3, T4]{s.drv[i : i+n : i+n], q.A.view(st[0], n, now), q.B.view(st[1], n, now), q.C.view(st[2], n, now), q.D.view(st[3], n, now)}) {
				return
			}
		}
	}
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
	var rA *T1
	if q.A.write {
		q.A.s.mark(pA)
		rA = &q.A.s.dense[pA]
	} else {
		*q.A.scratch = q.A.s.dense[pA]
		rA = q.A.scratch
	}
	var rB *T2
	if q.B.write {
		q.B.s.mark(pB)
		rB = &q.B.s.dense[pB]
	} else {
		*q.B.scratch = q.B.s.dense[pB]
		rB = q.B.scratch
	}
	var rC *T3
	if q.C.write {
		q.C.s.mark(pC)
		rC = &q.C.s.dense[pC]
	} else {
		*q.C.scratch = q.C.s.dense[pC]
		rC = q.C.scratch
	}
	var rD *T4
	if q.D.write {
		q.D.s.mark(pD)
		rD = &q.D.s.dense[pD]
	} else {
		*q.D.scratch = q.D.s.dense[pD]
		rD = q.D.scratch
	}
	return Row4[T1, T2, T3, T4]{rA, rB, rC, rD}, true
}

// Count returns the number of matching entities.
func (q *Query4[T1, T2, T3, T4]) Count() int {
	s, _ := q.start()
	defer q.end()
	c := 0
	for {
		_, n, _, ok := s.next()
		if !ok {
			return c
		}
		c += n
	}
}
