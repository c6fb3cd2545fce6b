package transport

import (
	"net/netip"
	"sync"
)

// ConditionedConn is a PacketConn that puts the datagrams it sends through
// the same link conditioner as the simulated PacketNetwork and the Proxy, then
// sends them on the conn it wraps. Received datagrams pass through
// unchanged. When every peer of a game wraps its conn, both directions of
// every link are conditioned, with no proxy in between: this is how a game
// lets players feel latency and loss on one machine or a LAN.
//
// Delays are kept by one timer (time.AfterFunc) that sends each datagram
// when it is due; a ConditionedConn is safe for concurrent use like the
// conn it wraps.
type ConditionedConn struct {
	inner PacketConn

	mu     sync.Mutex
	s      sched
	l      *link
	closed bool
}

// Condition wraps conn so that what it sends goes through cfg's link
// conditions. Closing the ConditionedConn closes conn.
func Condition(conn PacketConn, cfg ConditionConfig) *ConditionedConn {
	c := &ConditionedConn{inner: conn, l: newLink(cfg.Seed, 3, cfg.Link)}
	c.s = newSched(cfg.MaxInFlight, MaxPacketSize, c.onTimer)
	return c
}

// Send implements PacketConn: the datagram is copied and sent when the link
// delivers it (possibly never, possibly twice). Errors of the wrapped conn
// at that later time are counted in LinkStats.Unreachable.
func (c *ConditionedConn) Send(to netip.AddrPort, payload []byte) error {
	switch {
	case len(payload) > MaxPacketSize:
		return c.inner.Send(to, payload) // counts and returns ErrTooLarge
	case !to.IsValid():
		return c.inner.Send(to, payload) // ErrInvalidAddr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	now := c.s.Now()
	k, at := c.l.plan(now, len(payload))
	for i := range k {
		if !c.s.schedule(at[i], netip.AddrPort{}, to, c.l, payload) {
			c.l.stats.DroppedQueue++
		}
	}
	c.catchUp()
	return nil
}

// Receive implements PacketConn.
func (c *ConditionedConn) Receive() (netip.AddrPort, []byte, bool) { return c.inner.Receive() }

// LocalAddr implements PacketConn.
func (c *ConditionedConn) LocalAddr() netip.AddrPort { return c.inner.LocalAddr() }

// Stats implements PacketConn: the wrapped conn's counters (datagrams
// counted as sent when the link delivers them).
func (c *ConditionedConn) Stats() Stats { return c.inner.Stats() }

// LinkStats returns what the link did with the datagrams sent.
func (c *ConditionedConn) LinkStats() LinkStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.l.stats
}

// SetLink replaces the link conditions for datagrams sent from now on.
func (c *ConditionedConn) SetLink(cfg LinkConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.l.cfg = cfg.normalized()
}

// Close drops the datagrams held back and closes the wrapped conn.
func (c *ConditionedConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.s.stop()
	c.mu.Unlock()
	return c.inner.Close()
}

func (c *ConditionedConn) onTimer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.s.Fired()
	c.catchUp()
}

// catchUp sends every datagram that is due. Called with c.mu held.
func (c *ConditionedConn) catchUp() {
	now := c.s.Now()
	for d := c.s.popDue(now); d != nil; d = c.s.popDue(now) {
		if err := c.inner.Send(d.to, d.buf); err != nil {
			c.l.stats.Unreachable++
		} else {
			c.l.stats.Delivered++
		}
		c.s.release(d)
	}
	c.s.Rearm(now)
}
