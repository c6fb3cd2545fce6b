package transport

import (
	"net/netip"

	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// rxQueue is a bounded FIFO of received datagrams: a msgq.FIFO of slots
// whose buffers are recycled. It holds up to capacity unread datagrams;
// the buffer of the payload most recently returned by pop is kept out of
// reuse until the following pop, which is what lets Receive return a slice
// without copying or allocating.
//
// Buffers are allocated on first use (at most capacity+1 of them over the
// queue's life), so an idle conn costs little memory and steady-state
// traffic allocates nothing.
//
// rxQueue does no locking: its owner guards it.
type rxQueue struct {
	items msgq.FIFO[rxSlot]
	free  [][]byte // buffers to reuse
	last  []byte   // buffer of the payload pop returned last
	cap   int

	// notify receives a token whenever a datagram is queued; WaitReceive
	// waits on it.
	notify msgq.Signal

	received, receivedBytes, droppedFull uint64
}

type rxSlot struct {
	from netip.AddrPort
	buf  []byte
}

func newRxQueue(capacity int) rxQueue {
	if capacity <= 0 {
		capacity = DefaultReceiveQueue
	}
	return rxQueue{cap: capacity, notify: msgq.NewSignal()}
}

// push copies p into the queue. It reports false, and counts a drop, when
// the queue is full. len(p) must not exceed MaxPacketSize.
func (q *rxQueue) push(from netip.AddrPort, p []byte) bool {
	if q.items.Len() >= q.cap {
		q.droppedFull++
		return false
	}
	var buf []byte
	if n := len(q.free); n > 0 {
		buf = q.free[n-1]
		q.free[n-1] = nil
		q.free = q.free[:n-1]
	} else {
		buf = make([]byte, MaxPacketSize)
	}
	q.items.Push(rxSlot{from: from, buf: buf[:copy(buf[:cap(buf)], p)]})
	q.received++
	q.receivedBytes += uint64(len(p))
	q.notify.Wake()
	return true
}

// pop removes the oldest datagram. Its payload stays valid until the next
// pop, which recycles its buffer.
func (q *rxQueue) pop() (netip.AddrPort, []byte, bool) {
	if q.last != nil {
		q.free = append(q.free, q.last)
		q.last = nil
	}
	s, ok := q.items.Pop()
	if !ok {
		return netip.AddrPort{}, nil, false
	}
	q.last = s.buf
	return s.from, s.buf, true
}

// len returns the number of unread datagrams.
func (q *rxQueue) len() int { return q.items.Len() }

// clear discards every queued datagram.
func (q *rxQueue) clear() {
	for {
		s, ok := q.items.Pop()
		if !ok {
			return
		}
		q.free = append(q.free, s.buf)
	}
}

func (q *rxQueue) addStats(st *Stats) {
	st.PacketsReceived = q.received
	st.BytesReceived = q.receivedBytes
	st.DroppedQueueFull = q.droppedFull
}
