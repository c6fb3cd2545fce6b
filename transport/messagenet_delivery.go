package transport

// Delivery inside a MessageNetwork: connections (pairs), messages in
// flight, the event queue on virtual time, and what happens when an event
// is due (an attempt, an arrival, a delivery, a close).

import (
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// memPair is one connection: a client conn and the server conn it talks to.
type memPair struct {
	client, server *MessageNetworkConn
	broken         bool   // the path cannot carry traffic
	gen            uint64 // invalidates pending idle-timeout events
}

func (n *MessageNetwork) updatePairOf(a, b netip.AddrPort, now time.Duration) {
	if p := n.pairs[linkKey{a, b}]; p != nil {
		n.updatePair(p, now)
	}
	if p := n.pairs[linkKey{b, a}]; p != nil {
		n.updatePair(p, now)
	}
}

// updatePair re-evaluates whether p's path is broken. When it breaks, the
// idle timer starts; when it is repaired, the reliable messages held back
// are sent.
func (n *MessageNetwork) updatePair(p *memPair, now time.Duration) {
	broken := false
	for _, l := range [2]*link{p.client.out, p.server.out} {
		if l.partitioned || l.cfg.Down || l.cfg.Loss >= 1 {
			broken = true
		}
	}
	if broken == p.broken {
		return
	}
	p.broken = broken
	p.gen++
	if broken {
		if n.idle > 0 {
			n.schedule(memEvent{at: now + n.idle, kind: evTimeout, pair: p, gen: p.gen})
		}
		return
	}
	for _, c := range [2]*MessageNetworkConn{p.client, p.server} {
		parked := c.parked
		c.parked = nil
		for _, m := range parked {
			n.attempt(m, now)
		}
	}
}

func (n *MessageNetwork) removePair(p *memPair) {
	delete(n.pairs, linkKey{p.client.local, p.server.local})
	if i := slices.Index(n.pairList, p); i >= 0 {
		n.pairList = slices.Delete(n.pairList, i, i+1)
	}
}

// memMsg is one message travelling from a conn to its peer.
type memMsg struct {
	from *MessageNetworkConn
	ch   Channel
	seq  uint64 // ReliableOrdered sequence number
	data []byte
}

type evKind uint8

const (
	evArrive      evKind = iota // msg arrives at from.peer
	evRetry                     // msg is retransmitted
	evConnect                   // conn (server side) reaches listener ln
	evCloseNotice               // conn learns its peer closed: cerr
	evTimeout                   // pair's idle timer, if gen is current
)

// memEvent is one event of the network, due at at.
type memEvent struct {
	at   time.Duration
	kind evKind
	msg  *memMsg
	conn *MessageNetworkConn
	ln   *MessageNetworkListener
	pair *memPair
	gen  uint64
	cerr *CloseError
}

// schedule queues a copy of e.
func (n *MessageNetwork) schedule(e memEvent) {
	p := n.freeEv.get()
	*p = e
	n.ev.Push(p.at, p)
}

// newMsg returns a message from c on ch holding a copy of data.
func (n *MessageNetwork) newMsg(c *MessageNetworkConn, ch Channel, data []byte) *memMsg {
	m := n.freeMsg.get()
	*m = memMsg{from: c, ch: ch, data: n.bufs.get(len(data))}
	copy(m.data, data)
	return m
}

// freeMsgOnly recycles m whose data was handed on; dropMsg recycles m and
// its data.
func (n *MessageNetwork) freeMsgOnly(m *memMsg) {
	n.freeMsg.put(m)
}

func (n *MessageNetwork) dropMsg(m *memMsg) {
	n.bufs.put(m.data)
	n.freeMsgOnly(m)
}

// freeList recycles values of T, up to maxFreeList of them.
type freeList[T any] []*T

// maxFreeList bounds each free list.
const maxFreeList = 1024

// get returns a recycled value, or a new one.
func (f *freeList[T]) get() *T {
	if k := len(*f); k > 0 {
		p := (*f)[k-1]
		*f = (*f)[:k-1]
		return p
	}
	return new(T)
}

// put zeroes p (dropping what it points to) and keeps it for get.
func (f *freeList[T]) put(p *T) {
	var zero T
	*p = zero
	if len(*f) < maxFreeList {
		*f = append(*f, p)
	}
}

// catchUp handles every event due by now and re-arms the timer. Called
// with n.mu held.
func (n *MessageNetwork) catchUp() {
	if n.ev.Len() > 0 { // reading the clock costs more than the rest
		n.catchUpAt(n.now())
	}
}

// catchUpAt handles the events due by now in (time, sequence) order. Each
// event is handled at its own time, not at now, so the outcome does not
// depend on when a call or the timer notices it.
func (n *MessageNetwork) catchUpAt(now time.Duration) {
	if n.closed {
		return
	}
	for {
		e, _, ok := n.ev.PopDue(now)
		if !ok {
			break
		}
		n.handle(e)
		n.freeEv.put(e)
	}
	n.ev.Rearm(now)
}

func (n *MessageNetwork) onTimer() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ev.Fired()
	n.catchUp()
}

func (n *MessageNetwork) handle(e *memEvent) {
	switch e.kind {
	case evArrive:
		n.arrive(e.msg, e.at)
	case evRetry:
		if e.msg.from.err == nil {
			n.attempt(e.msg, e.at)
		} else {
			n.dropMsg(e.msg)
		}
	case evConnect:
		s, l := e.conn, e.ln
		switch {
		case s.err != nil:
		case l.closed || l.backlog.Len() >= n.backlog:
			n.closeConn(s, &CloseError{Reason: "connection refused", Err: ErrRefused}, true, true, e.at)
		default:
			s.ln = l
			l.conns = append(l.conns, s)
			l.backlog.Push(s)
			l.notify.Wake()
		}
	case evCloseNotice:
		if e.conn.err == nil {
			n.closeConn(e.conn, e.cerr, false, false, e.at)
		}
	case evTimeout:
		p := e.pair
		if p.gen == e.gen && p.broken {
			for _, c := range [2]*MessageNetworkConn{p.client, p.server} {
				n.closeConn(c, &CloseError{Reason: fmt.Sprintf("no contact with peer for %v", n.idle), Err: ErrTimeout}, false, false, e.at)
			}
		}
	}
}

// attempt transmits reliable message m at time now: it arrives, waits for a
// retransmission timeout, or waits at the sender for the path to be
// repaired.
func (n *MessageNetwork) attempt(m *memMsg, now time.Duration) {
	from := m.from
	l := from.out
	_, at, f := l.decide(now, len(m.data), true)
	switch {
	case f == fateDelivered:
		n.schedule(memEvent{at: at[0], kind: evArrive, msg: m})
	case f == fateDown || from.pair.broken:
		from.parked = append(from.parked, m)
	default:
		n.schedule(memEvent{at: now + n.rto(from), kind: evRetry, msg: m})
	}
}

// arrive hands message m to the peer of its sender.
func (n *MessageNetwork) arrive(m *memMsg, now time.Duration) {
	from := m.from
	to := from.peer
	from.out.stats.Delivered++
	if !m.ch.Reliable() {
		n.inFlight--
		st := &to.stats[m.ch]
		switch {
		case to.err != nil:
			n.dropMsg(m)
		case !to.rx.PushUnreliable(uint8(m.ch), m.data):
			st.DroppedReceiveQueue++
			n.dropMsg(m)
		default:
			st.Received++
			st.ReceivedBytes += uint64(len(m.data))
			n.freeMsgOnly(m)
		}
		return
	}
	if to.err != nil {
		from.release(m)
		n.dropMsg(m)
		return
	}
	if m.ch == ReliableUnordered {
		n.deliver(to, m, now)
		return
	}
	if m.seq != to.nextSeq {
		if to.pending == nil {
			to.pending = make(map[uint64]*memMsg)
		}
		to.pending[m.seq] = m
		return
	}
	for m != nil && to.err == nil {
		delete(to.pending, m.seq)
		to.nextSeq++
		n.deliver(to, m, now) // recycles m
		m = to.pending[to.nextSeq]
	}
}

// deliver queues reliable message m at to, or closes to with
// ErrReceiveOverflow when it does not fit.
func (n *MessageNetwork) deliver(to *MessageNetworkConn, m *memMsg, now time.Duration) {
	m.from.release(m)
	if !to.rx.PushReliable(uint8(m.ch), m.data) {
		n.dropMsg(m)
		msgs, b := to.rx.Usage()
		reason := fmt.Sprintf("%d reliable messages (%d bytes) waiting to be received", msgs, b)
		n.log.Debug("transport: memnet receive overflow", "local", to.local, "remote", to.remote, "reason", reason)
		n.closeConn(to, &CloseError{Reason: reason, Err: ErrReceiveOverflow}, true, false, now)
		return
	}
	st := &to.stats[m.ch]
	st.Received++
	st.ReceivedBytes += uint64(len(m.data))
	n.freeMsgOnly(m)
}

// closeConn closes c with cause cerr (unless it is closed already). With
// notify, the peer learns (as Remote) after the link's latency unless the
// path is broken. With discard, messages waiting in c's receive queue are
// dropped (a local Close); otherwise they stay receivable.
func (n *MessageNetwork) closeConn(c *MessageNetworkConn, cerr *CloseError, notify, discard bool, now time.Duration) {
	if c.err != nil {
		return
	}
	c.err = cerr
	close(c.done)
	if discard {
		c.discarded = true
		c.rx.Clear()
	}
	c.parked, c.pending = nil, nil
	if l := c.ln; l != nil {
		if i := slices.Index(l.conns, c); i >= 0 {
			l.conns = slices.Delete(l.conns, i, i+1)
		}
	}
	peer := c.peer
	if notify && peer.err == nil && !c.pair.broken {
		remote := &CloseError{Remote: true, Reason: cerr.Reason, Err: cerr.Err}
		n.schedule(memEvent{at: now + c.out.cfg.Latency, kind: evCloseNotice, conn: peer, cerr: remote})
	}
	if peer.err != nil {
		n.removePair(c.pair)
	}
	n.log.Debug("transport: memnet conn closed", "local", c.local, "remote", c.remote, "err", cerr)
}

func (n *MessageNetwork) closeListener(l *MessageNetworkListener, now time.Duration) {
	if l.closed {
		return
	}
	l.closed = true
	close(l.closedCh)
	if n.listeners[l.addr] == l {
		delete(n.listeners, l.addr)
	}
	if i := slices.Index(n.lnList, l); i >= 0 {
		n.lnList = slices.Delete(n.lnList, i, i+1)
	}
	for _, c := range slices.Clone(l.conns) {
		n.closeConn(c, &CloseError{Reason: "listener closed"}, true, true, now)
	}
	l.backlog.Clear()
}
