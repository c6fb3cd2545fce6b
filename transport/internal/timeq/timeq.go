package timeq

import "time"

// Queue holds values of T by due time. Build it with New.
type Queue[T any] struct {
	epoch time.Time
	heap  []entry[T]
	seq   uint64 // pushes so far: the tie-breaker

	timer   *time.Timer
	armed   bool
	armedAt time.Duration
	fire    func()
}

type entry[T any] struct {
	at  time.Duration
	seq uint64
	v   T
}

// New returns an empty queue whose epoch is now. fire is the timer's
// callback: it must take the owner's lock, call Fired, then pop what is
// due and Rearm.
func New[T any](fire func()) Queue[T] {
	return Queue[T]{epoch: time.Now(), fire: fire}
}

// Now returns the time since the epoch.
func (q *Queue[T]) Now() time.Duration { return time.Since(q.epoch) }

// Len returns the number of values waiting.
func (q *Queue[T]) Len() int { return len(q.heap) }

// Push queues v, due at the given time. Values due at the same time come
// out in the order they were pushed.
func (q *Queue[T]) Push(at time.Duration, v T) {
	q.seq++
	q.heap = append(q.heap, entry[T]{at: at, seq: q.seq, v: v})
	q.up(len(q.heap) - 1)
}

// PopDue removes and returns the earliest value if it is due at now (its
// time is at or before now), with its due time.
func (q *Queue[T]) PopDue(now time.Duration) (v T, at time.Duration, ok bool) {
	if len(q.heap) == 0 || q.heap[0].at > now {
		return v, 0, false
	}
	e := q.heap[0]
	last := len(q.heap) - 1
	q.heap[0] = q.heap[last]
	q.heap[last] = entry[T]{}
	q.heap = q.heap[:last]
	if last > 0 {
		q.down(0)
	}
	return e.v, e.at, true
}

// Rearm makes sure the timer fires no later than the earliest value's due
// time; now is the current time. With nothing waiting it does nothing.
func (q *Queue[T]) Rearm(now time.Duration) {
	if len(q.heap) == 0 {
		return
	}
	next := q.heap[0].at
	if q.armed && q.armedAt <= next {
		return
	}
	q.armed, q.armedAt = true, next
	if q.timer == nil {
		q.timer = time.AfterFunc(next-now, q.fire)
	} else {
		q.timer.Reset(next - now)
	}
}

// Fired must be called (under the owner's lock) at the start of the timer
// callback.
func (q *Queue[T]) Fired() { q.armed = false }

// Stop stops the timer and drops every value.
func (q *Queue[T]) Stop() {
	if q.timer != nil {
		q.timer.Stop()
	}
	q.armed = false
	clear(q.heap)
	q.heap = q.heap[:0]
}

func (q *Queue[T]) less(i, j int) bool {
	a, b := &q.heap[i], &q.heap[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q *Queue[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.heap[i], q.heap[p] = q.heap[p], q.heap[i]
		i = p
	}
}

func (q *Queue[T]) down(i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q.heap[i], q.heap[m] = q.heap[m], q.heap[i]
		i = m
	}
}
