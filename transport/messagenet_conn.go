package transport

// The two ends a MessageNetwork hands out: MessageNetworkListener and
// MessageNetworkConn, and the conns' buffer pool.

import (
	"context"
	"math/bits"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// MessageNetworkListener accepts the conns dialed to its address on a
// MessageNetwork. It implements MessageListener.
type MessageNetworkListener struct {
	n        *MessageNetwork
	addr     netip.AddrPort
	notify   msgq.Signal
	closedCh chan struct{}

	// Guarded by n.mu.
	backlog msgq.FIFO[*MessageNetworkConn]
	conns   []*MessageNetworkConn // open conns created for this listener
	closed  bool
}

var _ MessageListener = (*MessageNetworkListener)(nil)

// Accept implements MessageListener. It returns conns in the order their
// dials reached the listener, including ones that closed while waiting.
func (l *MessageNetworkListener) Accept(ctx context.Context) (MessageConn, error) {
	n := l.n
	var c *MessageNetworkConn
	err := msgq.Wait(ctx, l.notify, l.closedCh, func() (ok bool, err error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if l.closed {
			return false, ErrClosed
		}
		n.catchUp()
		c, ok = l.backlog.Pop()
		return ok, nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Addr implements MessageListener.
func (l *MessageNetworkListener) Addr() netip.AddrPort { return l.addr }

// Close implements MessageListener. The address becomes free for Listen.
func (l *MessageNetworkListener) Close() error {
	l.n.change(func(now time.Duration) { l.n.closeListener(l, now) })
	return nil
}

// MessageNetworkConn is one end of a connection on a MessageNetwork. It implements
// MessageConn.
type MessageNetworkConn struct {
	n             *MessageNetwork
	pair          *memPair
	peer          *MessageNetworkConn
	local, remote netip.AddrPort
	out           *link // local -> remote
	done          chan struct{}

	// Guarded by n.mu.
	ln        *MessageNetworkListener // server side, once it reached the listener
	rx        *msgq.Queue
	err       error
	discarded bool // closed locally: the receive queue is gone
	sendSeq   uint64
	nextSeq   uint64             // next ReliableOrdered sequence to hand over
	pending   map[uint64]*memMsg // ReliableOrdered messages that overtook nextSeq
	parked    []*memMsg          // reliable messages waiting for the path
	relMsgs   int                // reliable messages sent and not yet delivered
	relBytes  int
	last      []byte // returned by the last Receive, recycled by the next
	stats     [NumChannels]ChannelStats
}

var _ MessageConn = (*MessageNetworkConn)(nil)

// release returns m's room in its sender's send queue.
func (c *MessageNetworkConn) release(m *memMsg) {
	c.relMsgs--
	c.relBytes -= len(m.data)
}

// Send implements MessageConn. The reliable send queue holds every reliable
// message until it is delivered into the peer's receive queue.
func (c *MessageNetworkConn) Send(ch Channel, msg []byte) error {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	n.catchUpAt(now)
	if c.err != nil {
		return c.err
	}
	if !ch.Valid() {
		return ErrInvalidChannel
	}
	st := &c.stats[ch]
	limit := n.lim.MaxMessageSize
	if !ch.Reliable() {
		limit = n.lim.MaxUnreliableSize
	}
	if len(msg) > limit {
		st.DroppedOversize++
		return &SizeError{Channel: ch, Size: len(msg), Limit: limit}
	}
	if ch.Reliable() && (c.relMsgs+1 > n.lim.SendQueueMessages || c.relBytes+len(msg) > n.lim.SendQueueBytes) {
		st.DroppedSendQueue++
		return ErrQueueFull
	}
	st.Sent++
	st.SentBytes += uint64(len(msg))
	if ch.Reliable() {
		m := n.newMsg(c, ch, msg)
		if ch == ReliableOrdered {
			m.seq = c.sendSeq
			c.sendSeq++
		}
		c.relMsgs++
		c.relBytes += len(msg)
		n.attempt(m, now)
	} else {
		k, at, _ := c.out.decide(now, len(msg), false)
		for i := range k {
			if n.inFlight >= n.maxFlight {
				c.out.stats.DroppedQueue++
				continue
			}
			n.inFlight++
			n.schedule(memEvent{at: at[i], kind: evArrive, msg: n.newMsg(c, ch, msg)})
		}
	}
	n.catchUpAt(now)
	return nil
}

// Receive implements MessageConn.
func (c *MessageNetworkConn) Receive() (ch Channel, msg []byte, ok bool) {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if c.last != nil { // the caller's hold on it ends now
		n.bufs.put(c.last)
		c.last = nil
	}
	if c.discarded {
		return 0, nil, false
	}
	n.catchUp()
	it, ok := c.rx.Pop()
	c.last = it.Msg
	return Channel(it.Ch), it.Msg, ok
}

// WaitReceive implements MessageConn. Inside a testing/synctest bubble it
// wakes at the exact virtual arrival time.
func (c *MessageNetworkConn) WaitReceive(ctx context.Context) error {
	n := c.n
	return msgq.Wait(ctx, c.rx.Notify(), c.done, func() (bool, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if !c.discarded {
			n.catchUp()
		}
		return !c.discarded && c.rx.Len() > 0, c.err
	})
}

// LocalAddr implements MessageConn: the listener's address for a server
// conn, a 10.1.x.y:50000 address for a dialed conn.
func (c *MessageNetworkConn) LocalAddr() netip.AddrPort { return c.local }

// RemoteAddr implements MessageConn.
func (c *MessageNetworkConn) RemoteAddr() netip.AddrPort { return c.remote }

// Stats implements MessageConn. RTT is the sum of the two links' configured
// latencies; PacketsLost counts this side's transmission attempts lost to
// LinkConfig.Loss.
func (c *MessageNetworkConn) Stats() MessageStats {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	n.catchUp()
	return MessageStats{
		RTT:         c.out.cfg.Latency + c.peer.out.cfg.Latency,
		Channels:    c.stats,
		PacketsLost: c.out.stats.Lost,
	}
}

// MaxUnreliableSize implements MessageConn: MessageLimits.MaxUnreliableSize.
func (c *MessageNetworkConn) MaxUnreliableSize() int { return c.n.lim.MaxUnreliableSize }

// Close implements MessageConn.
func (c *MessageNetworkConn) Close() error { return c.CloseWithReason("") }

// CloseWithReason implements MessageConn.
func (c *MessageNetworkConn) CloseWithReason(reason string) error {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	n.catchUpAt(now)
	if c.err != nil { // closed by the peer or the network: drop what is left
		c.discarded = true
		c.rx.Clear()
		return nil
	}
	n.closeConn(c, &CloseError{Reason: TruncateReason(reason)}, true, true, now)
	n.catchUpAt(now)
	return nil
}

// Done implements MessageConn.
func (c *MessageNetworkConn) Done() <-chan struct{} { return c.done }

// Err implements MessageConn.
func (c *MessageNetworkConn) Err() error {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	n.catchUp()
	return c.err
}

// bufPool recycles message buffers in power-of-two size classes from 64 B to
// 64 KiB; larger buffers are left to the garbage collector.
type bufPool struct {
	free [bufClasses][][]byte
}

const (
	bufMinShift   = 6 // 64 B
	bufClasses    = 11
	bufMaxPooled  = 1 << (bufMinShift + bufClasses - 1)
	bufClassDepth = 256
)

func bufClass(n int) int {
	if n <= 1<<bufMinShift {
		return 0
	}
	return bits.Len(uint(n-1)) - bufMinShift
}

// get returns a buffer of length n.
func (p *bufPool) get(n int) []byte {
	if n > bufMaxPooled {
		return make([]byte, n)
	}
	k := bufClass(n)
	if f := p.free[k]; len(f) > 0 {
		b := f[len(f)-1]
		f[len(f)-1] = nil
		p.free[k] = f[:len(f)-1]
		return b[:n]
	}
	return make([]byte, n, 1<<(k+bufMinShift))
}

// put recycles b if it came from get.
func (p *bufPool) put(b []byte) {
	c := cap(b)
	if c < 1<<bufMinShift || c > bufMaxPooled || c&(c-1) != 0 {
		return
	}
	if k := bufClass(c); len(p.free[k]) < bufClassDepth {
		p.free[k] = append(p.free[k], b[:0])
	}
}
