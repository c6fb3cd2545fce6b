package transport

import (
	"net/netip"
	"time"
)

// DefaultMaxInFlight is the default limit on datagrams travelling through a
// PacketNetwork or a Proxy at once.
const DefaultMaxInFlight = 4096

// inflight is one datagram travelling through a conditioned link.
type inflight struct {
	at       time.Duration // arrival time since the scheduler's epoch
	seq      uint64        // tie-breaker: scheduling order
	from, to netip.AddrPort
	link     *link
	buf      []byte
}

// sched is the timer heap shared by PacketNetwork and Proxy. Datagrams wait in a
// min-heap ordered by (arrival time, scheduling sequence), so the delivery
// order is a pure function of what was scheduled when, never of goroutine
// timing. One time.AfterFunc timer, re-armed for the earliest arrival, wakes
// the owner; the owner also catches up whenever it is called (popDue with the
// current time), so a datagram due now is visible no matter which goroutine
// runs first. Times are durations since epoch, read from the monotonic
// clock, which testing/synctest virtualises.
//
// Datagram buffers are recycled through a free list, so steady-state
// scheduling allocates nothing.
//
// sched does no locking: its owner guards it, including inside the timer
// callback.
type sched struct {
	epoch   time.Time
	heap    []*inflight
	free    []*inflight
	seq     uint64
	maxSize int // buffer size of each inflight
	maxLen  int // in-flight limit

	timer   *time.Timer
	armed   bool
	armedAt time.Duration
	fire    func() // owner's timer callback
}

func newSched(maxInFlight, maxSize int, fire func()) sched {
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	return sched{epoch: time.Now(), maxLen: maxInFlight, maxSize: maxSize, fire: fire}
}

func (s *sched) now() time.Duration { return time.Since(s.epoch) }

// schedule queues a copy of p to arrive at the given time. It reports false
// when the in-flight limit is reached.
func (s *sched) schedule(at time.Duration, from, to netip.AddrPort, l *link, p []byte) bool {
	if len(s.heap) >= s.maxLen {
		return false
	}
	var d *inflight
	if n := len(s.free); n > 0 {
		d = s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
	} else {
		d = &inflight{buf: make([]byte, s.maxSize)}
	}
	s.seq++
	d.at, d.seq, d.from, d.to, d.link = at, s.seq, from, to, l
	d.buf = d.buf[:copy(d.buf[:cap(d.buf)], p)]
	s.heap = append(s.heap, d)
	s.up(len(s.heap) - 1)
	return true
}

// popDue removes and returns the earliest datagram if it is due at now, or
// nil. The caller hands it back with release.
func (s *sched) popDue(now time.Duration) *inflight {
	if len(s.heap) == 0 || s.heap[0].at > now {
		return nil
	}
	d := s.heap[0]
	last := len(s.heap) - 1
	s.heap[0] = s.heap[last]
	s.heap[last] = nil
	s.heap = s.heap[:last]
	if last > 0 {
		s.down(0)
	}
	return d
}

func (s *sched) release(d *inflight) {
	d.link = nil
	s.free = append(s.free, d)
}

// rearm makes sure the timer fires no later than the earliest arrival.
func (s *sched) rearm(now time.Duration) {
	if len(s.heap) == 0 {
		return
	}
	next := s.heap[0].at
	if s.armed && s.armedAt <= next {
		return
	}
	s.armed, s.armedAt = true, next
	if s.timer == nil {
		s.timer = time.AfterFunc(next-now, s.fire)
	} else {
		s.timer.Reset(next - now)
	}
}

// fired must be called (under the owner's lock) at the start of the timer
// callback.
func (s *sched) fired() { s.armed = false }

// stop stops the timer and drops everything in flight.
func (s *sched) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.armed = false
	for i := range s.heap {
		s.heap[i] = nil
	}
	s.heap = s.heap[:0]
	s.free = nil
}

func (s *sched) less(i, j int) bool {
	a, b := s.heap[i], s.heap[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (s *sched) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			return
		}
		s.heap[i], s.heap[p] = s.heap[p], s.heap[i]
		i = p
	}
}

func (s *sched) down(i int) {
	n := len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			return
		}
		s.heap[i], s.heap[m] = s.heap[m], s.heap[i]
		i = m
	}
}
