package transport

import (
	"net/netip"

	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// rxQueue is a bounded FIFO of received datagrams backed by a ring of reusable
// buffers. It holds up to capacity unread datagrams; one extra slot keeps the
// payload most recently returned by pop intact until the following pop, which
// is what lets Receive return a slice without copying or allocating.
//
// Slot buffers are allocated on first use (at most capacity+1 of them over the
// queue's life), so an idle conn costs little memory and steady-state traffic
// allocates nothing.
//
// It is a ring of its own rather than a msgq.FIFO, the ring of the message
// conns: a FIFO hands values in and out by copy and zeroes what it pops,
// which for these pointer-holding slots cost 2 to 3 times the ring's push
// and pop (13-31 against 45-73 ns a pair, measured), and it could not keep
// the returned payload's slot out of reuse.
//
// rxQueue does no locking: its owner guards it.
type rxQueue struct {
	slots []rxSlot
	head  int // index of the oldest unread datagram
	count int // number of unread datagrams
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
	return rxQueue{
		slots:  make([]rxSlot, capacity+1),
		cap:    capacity,
		notify: msgq.NewSignal(),
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
	q.notify.Wake()
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

// len returns the number of unread datagrams.
func (q *rxQueue) len() int { return q.count }

// clear discards every queued datagram.
func (q *rxQueue) clear() {
	q.head, q.count = 0, 0
}

func (q *rxQueue) addStats(st *Stats) {
	st.PacketsReceived = q.received
	st.BytesReceived = q.receivedBytes
	st.DroppedQueueFull = q.droppedFull
}
