package transport

import "net/netip"

// rxQueue is a bounded FIFO of received datagrams backed by a ring of reusable
// buffers. It holds up to capacity unread datagrams; one extra slot keeps the
// payload most recently returned by pop intact until the following pop, which
// is what lets Receive return a slice without copying or allocating.
//
// Slot buffers are allocated on first use (at most capacity+1 of them over the
// queue's life), so an idle conn costs little memory and steady-state traffic
// allocates nothing.
//
// rxQueue does no locking: its owner guards it.
type rxQueue struct {
	slots []rxSlot
	head  int // index of the oldest unread datagram
	count int // number of unread datagrams
	cap   int

	// notify has capacity 1 and receives a token whenever a datagram is
	// queued; WaitReceive blocks on it.
	notify chan struct{}

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
	return rxQueue{
		slots:  make([]rxSlot, capacity+1),
		cap:    capacity,
		notify: make(chan struct{}, 1),
	}
}

// push copies p into the queue. It reports false, and counts a drop, when
// the queue is full. len(p) must not exceed MaxPacketSize.
func (q *rxQueue) push(from netip.AddrPort, p []byte) bool {
	if q.count >= q.cap {
		q.droppedFull++
		return false
	}
	s := &q.slots[(q.head+q.count)%len(q.slots)]
	if s.buf == nil {
		s.buf = make([]byte, MaxPacketSize)
	}
	s.from = from
	s.buf = s.buf[:copy(s.buf[:cap(s.buf)], p)]
	q.count++
	q.received++
	q.receivedBytes += uint64(len(p))
	select {
	case q.notify <- struct{}{}:
	default:
	}
	return true
}

// pop removes the oldest datagram. Its payload stays valid until the next pop:
// push never writes to the slot just behind head, because count < len(slots).
func (q *rxQueue) pop() (netip.AddrPort, []byte, bool) {
	if q.count == 0 {
		return netip.AddrPort{}, nil, false
	}
	s := &q.slots[q.head]
	q.head = (q.head + 1) % len(q.slots)
	q.count--
	return s.from, s.buf, true
}

// clear discards every queued datagram.
func (q *rxQueue) clear() {
	q.head, q.count = 0, 0
}

func (q *rxQueue) addStats(st *Stats) {
	st.PacketsReceived = q.received
	st.BytesReceived = q.receivedBytes
	st.DroppedQueueFull = q.droppedFull
}
