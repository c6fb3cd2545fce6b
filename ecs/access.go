package ecs

import (
	"bytes"
	"fmt"
	"unsafe"
)

// Access selects how a query reaches one component type. Write hands out
// pointers into the Store and marks each value visited as written. Read hands
// out pointers into the Store for reading only: nothing is marked, and the
// loop costs no more than a loop over plain slices. Writing through a Read
// pointer is a bug in the game: the value changes without its change tick,
// so replication does not send it and a snapshot load may not undo it. In
// checked mode (World.SetChecks) Read hands out pointers to copies instead,
// and a loop in which one was written panics with ErrWriteThroughRead when
// it ends.
type Access[T any] struct {
	s     *Store[T]
	write bool
	reads *reads[T] // read access: shared by every copy of this Access
}

// reads is a read access's state: the change ticks its loops "mark", which
// nothing reads, and, in checked mode, the copy buffers of its running loops
// (one each: nested loops, or two queries built from one Access) and the
// copy Get hands out.
type reads[T any] struct {
	sink    [maxRun]uint64
	free    []*chunk[T]
	scratch T
}

// chunk is one running loop's copy buffer in checked mode: vals[:n] holds
// the copies handed out, vals[n:] the values as they were, p and m the
// store positions of the last chunk handed out, not yet verified, and bad
// the first write through Read found, reported when the loop ends.
type chunk[T any] struct {
	vals []T
	n    int
	p, m int
	bad  error
}

// Write returns write access to the Store for a query.
func (s *Store[T]) Write() Access[T] {
	s.registered()
	return Access[T]{s: s, write: true}
}

// Read returns read-only access to the Store for a query (see Access).
func (s *Store[T]) Read() Access[T] {
	s.registered()
	return Access[T]{s: s, reads: &reads[T]{}}
}

// In checked mode a read access copies at most maxChunk values, and about
// chunkBytes, at a time, so that the copy stays in the first-level cache
// while the loop body reads it.
const (
	maxChunk   = 256
	chunkBytes = 6144
)

// chunkLen is the number of entities a checked query loop takes at a time
// for a read access to T (maxChunk for small components, fewer for large
// ones).
func chunkLen[T any]() int {
	var v T
	return max(16, min(maxChunk, chunkBytes/max(1, int(unsafe.Sizeof(v)))))
}

// take starts an iteration over the access at change tick now. In checked
// mode it returns a read access's copy buffer (each running iteration has
// its own, so nested loops over one query do not share); give verifies the
// last chunk and hands it back.
func (a *Access[T]) take(now uint64) *chunk[T] {
	if a.write {
		if len(a.s.dense) > 0 {
			a.s.maxChanged = now
		}
		return nil
	}
	if !a.s.w.checks {
		return nil
	}
	if n := len(a.reads.free); n > 0 {
		c := a.reads.free[n-1]
		a.reads.free = a.reads.free[:n-1]
		return c
	}
	n := chunkLen[T]()
	return &chunk[T]{vals: make([]T, 2*n), n: n}
}

// give verifies the last chunk of a buffer from take, takes it back, and
// panics with the first write through Read the loop made. Loops call it
// after unlocking their stores.
func (a *Access[T]) give(c *chunk[T]) {
	if c == nil {
		return
	}
	a.verify(c)
	err := c.bad
	c.bad = nil
	a.reads.free = append(a.reads.free, c)
	if err != nil {
		panic(err)
	}
}

// chunkOf is the longest chunk a loop may take with buffer c (maxRun
// without one).
func chunkOf[T any](c *chunk[T]) int {
	if c == nil {
		return maxRun
	}
	return c.n
}

// part returns the values of m entities from dense position p for a query
// loop, and the change ticks it marks: the store's own values and ticks for
// write access; the store's values (copies in c, in checked mode) and the
// sink for read access.
func (a *Access[T]) part(c *chunk[T], p, m int) ([]T, []uint64) {
	if a.write {
		return a.s.dense[p : p+m], a.s.changed[p : p+m]
	}
	return a.values(c, p, m), a.reads.sink[:m]
}

// values returns the values of read access at dense positions p to p+m:
// the store's own, or, in checked mode, copies whose originals c keeps for
// verify (after verifying the previous chunk).
func (a *Access[T]) values(c *chunk[T], p, m int) []T {
	if c == nil {
		return a.s.dense[p : p+m : p+m]
	}
	a.verify(c)
	src := a.s.dense[p : p+m]
	copy(c.vals[c.n:c.n+m], src)
	b := c.vals[:m:m]
	copy(b, src)
	c.p, c.m = p, m
	return b
}

// view returns the slice of a run for one access in a Batches loop: the
// store's values (marked as written) for write access, or the values of
// read access (see values).
func (a *Access[T]) view(c *chunk[T], p, n int, now uint64) []T {
	if !a.write {
		return a.values(c, p, n)
	}
	fill(a.s.changed[p:p+n], now)
	return a.s.dense[p : p+n : p+n]
}

// fill sets every element of t to v by doubling copies, which move many
// elements per store (a Batches loop over 1024 entities marks them in about
// a third less time than with a store per element).
func fill(t []uint64, v uint64) {
	if len(t) == 0 {
		return
	}
	t[0] = v
	for k := 1; k < len(t); k *= 2 {
		copy(t[k:], t[:k])
	}
}

// ptr returns the pointer Get hands out for dense position p: into the
// store (marked as written for write access), or to a copy for read access
// in checked mode.
func (a *Access[T]) ptr(p int) *T {
	switch {
	case a.write:
		a.s.mark(p)
	case a.s.w.checks:
		a.reads.scratch = a.s.dense[p]
		return &a.reads.scratch
	}
	return &a.s.dense[p]
}

// verify records in c.bad, unless it holds an earlier one, an error
// wrapping ErrWriteThroughRead when a copy of c's last chunk differs from
// the value it was copied from.
func (a *Access[T]) verify(c *chunk[T]) {
	m := c.m
	c.m = 0
	if c.bad != nil {
		return
	}
	j := firstDiff(c.vals[:m], c.vals[c.n:c.n+m])
	if j < 0 {
		return
	}
	var e Entity
	if p := c.p + j; p < len(a.s.ents) {
		e = a.s.ents[p]
	}
	c.bad = fmt.Errorf("%w: %s of %v", ErrWriteThroughRead, a.s.ti.Name, e)
}

// firstDiff returns the index of the first element whose bytes differ
// between x and y (of equal length), or -1.
func firstDiff[T any](x, y []T) int {
	size := int(unsafe.Sizeof(*new(T)))
	if size == 0 || len(x) == 0 {
		return -1
	}
	bx := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*size)
	by := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(y))), len(x)*size)
	if bytes.Equal(bx, by) {
		return -1
	}
	for j := range x {
		if !bytes.Equal(bx[j*size:(j+1)*size], by[j*size:(j+1)*size]) {
			return j
		}
	}
	return -1
}
