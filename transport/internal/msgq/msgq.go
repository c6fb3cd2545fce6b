package msgq

// FIFO is a first-in first-out ring of T that grows by doubling as needed.
// Its bound is the caller's business (the caps are checked before Push).
type FIFO[T any] struct {
	buf  []T
	head int
	n    int
}

// Len returns the number of queued values.
func (f *FIFO[T]) Len() int { return f.n }

// Push appends v.
func (f *FIFO[T]) Push(v T) {
	if f.n == len(f.buf) {
		nb := make([]T, max(8, 2*len(f.buf)))
		for i := range f.n {
			nb[i] = f.buf[(f.head+i)%len(f.buf)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)%len(f.buf)] = v
	f.n++
}

// Pop removes and returns the oldest value.
func (f *FIFO[T]) Pop() (T, bool) {
	var zero T
	if f.n == 0 {
		return zero, false
	}
	v := f.buf[f.head]
	f.buf[f.head] = zero
	f.head = (f.head + 1) % len(f.buf)
	f.n--
	return v, true
}

// Peek returns the oldest value without removing it.
func (f *FIFO[T]) Peek() (T, bool) {
	if f.n == 0 {
		var zero T
		return zero, false
	}
	return f.buf[f.head], true
}

// Clear drops every value and releases the ring.
func (f *FIFO[T]) Clear() { *f = FIFO[T]{} }

// Item is one received message and the channel it came on.
type Item struct {
	Ch       uint8
	Reliable bool
	Msg      []byte
}

// Queue is the receive queue of one message conn: one FIFO for every
// channel, so messages are handed out in arrival order, with separate caps
// for reliable messages (count and bytes, including reservations for
// messages still being read) and unreliable ones (count).
//
// A reliable message that does not fit is the peer's fault or the reader's
// (it sends faster than the application polls): the caller closes the conn.
// An unreliable message that does not fit is dropped.
type Queue struct {
	items FIFO[Item]

	relMsgs, relBytes int // waiting + reserved
	unrel             int
	maxRelMsgs        int
	maxRelBytes       int
	maxUnrel          int

	notify Signal
}

// NewQueue returns an empty queue with the given caps (all must be > 0).
func NewQueue(maxRelMsgs, maxRelBytes, maxUnrel int) *Queue {
	return &Queue{
		maxRelMsgs:  maxRelMsgs,
		maxRelBytes: maxRelBytes,
		maxUnrel:    maxUnrel,
		notify:      NewSignal(),
	}
}

// Notify returns a channel that receives a token whenever a message is
// queued. It has capacity 1: a waiter must re-check Len after a wake-up.
func (q *Queue) Notify() <-chan struct{} { return q.notify }

// Len returns the number of messages waiting.
func (q *Queue) Len() int { return q.items.Len() }

// Reserve reserves room for one reliable message of n bytes, before it is
// read, so that nothing is allocated for a message that would not fit. It
// reports false when the reliable caps would be exceeded.
func (q *Queue) Reserve(n int) bool {
	if q.relMsgs+1 > q.maxRelMsgs || q.relBytes+n > q.maxRelBytes {
		return false
	}
	q.relMsgs++
	q.relBytes += n
	return true
}

// Grow adds n bytes to a reservation made with Reserve, for a message whose
// buffer grows as its bytes arrive. It reports false, and changes nothing,
// when the reliable byte cap would be exceeded.
func (q *Queue) Grow(n int) bool {
	if q.relBytes+n > q.maxRelBytes {
		return false
	}
	q.relBytes += n
	return true
}

// Unreserve gives back a reservation of n bytes that will not be pushed.
func (q *Queue) Unreserve(n int) {
	q.relMsgs--
	q.relBytes -= n
}

// PushReserved queues a reliable message whose room was reserved with
// Reserve(len(msg)).
func (q *Queue) PushReserved(ch uint8, msg []byte) {
	q.items.Push(Item{Ch: ch, Reliable: true, Msg: msg})
	q.notify.Wake()
}

// PushReliable reserves room for msg and queues it. It reports false, and
// queues nothing, when the reliable caps would be exceeded.
func (q *Queue) PushReliable(ch uint8, msg []byte) bool {
	if !q.Reserve(len(msg)) {
		return false
	}
	q.PushReserved(ch, msg)
	return true
}

// PushUnreliable queues an unreliable message, or reports false when the
// unreliable cap is reached.
func (q *Queue) PushUnreliable(ch uint8, msg []byte) bool {
	if q.unrel >= q.maxUnrel {
		return false
	}
	q.unrel++
	q.items.Push(Item{Ch: ch, Msg: msg})
	q.notify.Wake()
	return true
}

// Pop removes and returns the oldest message.
func (q *Queue) Pop() (Item, bool) {
	it, ok := q.items.Pop()
	if !ok {
		return it, false
	}
	if it.Reliable {
		q.relMsgs--
		q.relBytes -= len(it.Msg)
	} else {
		q.unrel--
	}
	return it, true
}

// Clear drops every waiting message (reservations stay).
func (q *Queue) Clear() {
	for {
		if _, ok := q.Pop(); !ok {
			break
		}
	}
	q.items.Clear()
}

// Usage returns the reliable messages and bytes waiting or reserved.
func (q *Queue) Usage() (msgs, bytes int) { return q.relMsgs, q.relBytes }
