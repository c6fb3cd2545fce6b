package transport

import (
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/transport/internal/timeq"
)

// inflight is one datagram travelling through a conditioned link.
type inflight struct {
	from, to netip.AddrPort
	link     *link
	buf      []byte
}

// sched is the datagram scheduler shared by PacketNetwork and Proxy: the
// datagrams in flight wait in a timeq.Queue by (arrival time, scheduling
// order), so the delivery order is a pure function of what was scheduled
// when, never of goroutine timing. The queue's timer wakes the owner; the
// owner also catches up whenever it is called (popDue with the current
// time), so a datagram due now is visible no matter which goroutine runs
// first.
//
// Datagram buffers are recycled through a free list, so steady-state
// scheduling allocates nothing.
//
// sched does no locking: its owner guards it, including inside the timer
// callback.
type sched struct {
	timeq.Queue[*inflight]
	free    []*inflight
	maxSize int // buffer size of each inflight
	maxLen  int // in-flight limit
}

func newSched(maxInFlight, maxSize int, fire func()) sched {
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	return sched{Queue: timeq.New[*inflight](fire), maxLen: maxInFlight, maxSize: maxSize}
}

// schedule queues a copy of p to arrive at the given time. It reports false
// when the in-flight limit is reached.
func (s *sched) schedule(at time.Duration, from, to netip.AddrPort, l *link, p []byte) bool {
	if s.Len() >= s.maxLen {
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
	d.from, d.to, d.link = from, to, l
	d.buf = d.buf[:copy(d.buf[:cap(d.buf)], p)]
	s.Push(at, d)
	return true
}

// popDue removes and returns the earliest datagram if it is due at now, or
// nil. The caller hands it back with release.
func (s *sched) popDue(now time.Duration) *inflight {
	d, _, _ := s.PopDue(now)
	return d
}

func (s *sched) release(d *inflight) {
	d.link = nil
	s.free = append(s.free, d)
}

// stop stops the timer and drops everything in flight.
func (s *sched) stop() {
	s.Stop()
	s.free = nil
}
