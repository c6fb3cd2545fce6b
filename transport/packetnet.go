package transport

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// PacketNetwork is a deterministic in-process simulated network of PacketNetworkConns, with
// per-link latency, jitter, loss, duplication, reordering, bandwidth caps and
// partitions. It uses the time package for delivery, so inside a
// testing/synctest bubble it runs on virtual time: a test of a 2-second
// scenario finishes at once, and repeats exactly.
//
// A PacketNetwork keeps no goroutine running. Deliveries happen in whichever call
// notices they are due (Receive, WaitReceive, Send, Stats, LinkStats) or in
// the callback of a single time.AfterFunc timer, always in (arrival time,
// send order), so the outcome does not depend on goroutine scheduling. Close
// stops the timer.
//
// All methods are safe for concurrent use.
type PacketNetwork struct {
	mu     sync.Mutex
	rxCap  int
	log    *slog.Logger
	s      sched
	conns  map[netip.AddrPort]*PacketNetworkConn
	links  linkTable
	nextIP uint32 // auto-assigned addresses: 10.0.x.y
	closed bool
}

type linkKey struct{ from, to netip.AddrPort }

// linkTable holds the one-way links of a simulated network (PacketNetwork,
// MessageNetwork), each created on first use with the default conditions
// and seeded from the network's seed and its two addresses. Addresses are
// unmapped. Its owner guards it.
type linkTable struct {
	seed uint64
	def  LinkConfig // normalized
	m    map[linkKey]*link
}

func newLinkTable(seed uint64, def LinkConfig) linkTable {
	return linkTable{seed: seed, def: def.normalized(), m: make(map[linkKey]*link)}
}

// get returns the link from -> to, creating it with the default conditions.
func (t *linkTable) get(from, to netip.AddrPort) *link {
	k := linkKey{from, to}
	l := t.m[k]
	if l == nil {
		l = newLink(t.seed, linkStream(from, to), t.def)
		t.m[k] = l
	}
	return l
}

// set gives the link from -> to its own conditions (SetLink).
func (t *linkTable) set(from, to netip.AddrPort, cfg LinkConfig) {
	l := t.get(from, to)
	l.cfg, l.custom = cfg.normalized(), true
}

// setDefault replaces the conditions of every link without its own.
func (t *linkTable) setDefault(cfg LinkConfig) {
	t.def = cfg.normalized()
	for _, l := range t.m { // the same value for each: the order does not matter
		if !l.custom {
			l.cfg = t.def
		}
	}
}

// partition cuts (down) or heals both directions between a and b.
func (t *linkTable) partition(a, b netip.AddrPort, down bool) {
	t.get(a, b).partitioned = down
	t.get(b, a).partitioned = down
}

// stats returns the counters of the link from -> to (zero if nothing was
// ever sent over it).
func (t *linkTable) stats(from, to netip.AddrPort) LinkStats {
	if l := t.m[linkKey{from, to}]; l != nil {
		return l.stats
	}
	return LinkStats{}
}

// NewPacketNetwork returns an empty PacketNetwork.
func NewPacketNetwork(cfg PacketNetworkConfig) *PacketNetwork {
	n := &PacketNetwork{
		rxCap: cfg.ReceiveQueue,
		log:   cfg.Logger,
		conns: make(map[netip.AddrPort]*PacketNetworkConn),
		links: newLinkTable(cfg.Seed, cfg.Default),
	}
	if n.rxCap <= 0 {
		n.rxCap = DefaultReceiveQueue
	}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	n.s = newSched(cfg.MaxInFlight, MaxPacketSize, n.onTimer)
	return n
}

// autoPort is the port of auto-assigned addresses, and the first port tried
// when Listen is given an address with port 0.
const autoPort = 7000

// nextAddr returns the next address 10.sub.x.y:port, x.y counting up in
// *next and skipping .0 and .255, that taken does not report.
func nextAddr(next *uint32, sub byte, port uint16, taken func(netip.AddrPort) bool) netip.AddrPort {
	for {
		*next++
		if byte(*next) == 0 || byte(*next) == 255 {
			continue
		}
		a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, sub, byte(*next >> 8), byte(*next)}), port)
		if !taken(a) {
			return a
		}
	}
}

// listenAddr returns the address a Listen on (unmapped) addr gets: for the
// zero netip.AddrPort the next free 10.0.x.y:7000 (counted in *next), for
// port 0 the first free port from 7000 on addr's IP, else addr. It returns
// ErrInvalidAddr for an invalid IP and ErrAddrInUse when taken reports
// addr, or every port, in use.
func listenAddr(addr netip.AddrPort, next *uint32, taken func(netip.AddrPort) bool) (netip.AddrPort, error) {
	switch {
	case addr == netip.AddrPort{}:
		return nextAddr(next, 0, autoPort, taken), nil
	case !addr.Addr().IsValid():
		return netip.AddrPort{}, ErrInvalidAddr
	case addr.Port() == 0:
		for p := uint32(autoPort); p <= 65535; p++ {
			if a := netip.AddrPortFrom(addr.Addr(), uint16(p)); !taken(a) {
				return a, nil
			}
		}
		return netip.AddrPort{}, ErrAddrInUse
	case taken(addr):
		return netip.AddrPort{}, ErrAddrInUse
	}
	return addr, nil
}

// Listen opens a PacketNetworkConn on addr. If addr is the zero netip.AddrPort, the
// network assigns the next free address of the form 10.0.x.y:7000; if only
// the port is zero, it assigns the next free port from 7000 on that IP. It
// returns ErrAddrInUse when addr is taken and ErrClosed after Close.
func (n *PacketNetwork) Listen(addr netip.AddrPort) (*PacketNetworkConn, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	addr, err := listenAddr(unmap(addr), &n.nextIP, func(a netip.AddrPort) bool { return n.conns[a] != nil })
	if err != nil {
		return nil, err
	}
	c := &PacketNetworkConn{
		n:        n,
		local:    addr,
		q:        newRxQueue(n.rxCap),
		closedCh: make(chan struct{}),
	}
	n.conns[addr] = c
	n.log.Debug("transport: simnet listen", "addr", addr)
	return c, nil
}

// SetLink sets the conditions of the one-way link from one address to
// another. It applies to datagrams sent from now on; datagrams in flight keep
// their arrival times.
func (n *PacketNetwork) SetLink(from, to netip.AddrPort, cfg LinkConfig) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.links.set(unmap(from), unmap(to), cfg)
}

// SetDefaultLink replaces the conditions of every link not configured with
// SetLink.
func (n *PacketNetwork) SetDefaultLink(cfg LinkConfig) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.links.setDefault(cfg)
}

// Partition cuts both directions between a and b: datagrams sent between
// them are dropped (LinkStats.DroppedDown) until Heal. Datagrams already in
// flight are still delivered. Partitions are independent of LinkConfig.Down
// and survive SetLink.
func (n *PacketNetwork) Partition(a, b netip.AddrPort) { n.setPartition(a, b, true) }

// Heal undoes Partition(a, b).
func (n *PacketNetwork) Heal(a, b netip.AddrPort) { n.setPartition(a, b, false) }

func (n *PacketNetwork) setPartition(a, b netip.AddrPort, down bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.links.partition(unmap(a), unmap(b), down)
}

// LinkStats returns the counters of the one-way link from one address to
// another (zero if nothing was ever sent over it).
func (n *PacketNetwork) LinkStats(from, to netip.AddrPort) LinkStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.catchUp()
	return n.links.stats(unmap(from), unmap(to))
}

// Close closes every PacketNetworkConn, drops the datagrams in flight and stops the
// delivery timer. Later Listen calls return ErrClosed. Close is idempotent.
func (n *PacketNetwork) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	n.s.stop()
	for addr, c := range n.conns {
		c.closeLocked()
		delete(n.conns, addr)
	}
	return nil
}

// onTimer is the delivery timer's callback.
func (n *PacketNetwork) onTimer() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.s.Fired()
	n.catchUp()
}

// catchUp delivers every datagram due by now, in (arrival, send) order, and
// re-arms the timer. Called with n.mu held.
func (n *PacketNetwork) catchUp() {
	if n.s.Len() > 0 { // reading the clock costs more than the rest
		n.catchUpAt(n.s.Now())
	}
}

func (n *PacketNetwork) catchUpAt(now time.Duration) {
	if n.closed {
		return
	}
	for d := n.s.popDue(now); d != nil; d = n.s.popDue(now) {
		if c := n.conns[d.to]; c != nil {
			d.link.stats.Delivered++
			c.q.push(d.from, d.buf)
		} else {
			d.link.stats.Unreachable++
		}
		n.s.release(d)
	}
	n.s.Rearm(now)
}

// PacketNetworkConn is one endpoint of a simulated PacketNetwork. It implements PacketConn.
type PacketNetworkConn struct {
	n        *PacketNetwork
	local    netip.AddrPort
	closedCh chan struct{}

	// Guarded by n.mu.
	q      rxQueue
	closed bool
	stats  Stats
}

var _ PacketConn = (*PacketNetworkConn)(nil)

// Send implements PacketConn. The link from this conn to the address decides
// what becomes of the datagram.
func (c *PacketNetworkConn) Send(to netip.AddrPort, payload []byte) error {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case len(payload) > MaxPacketSize:
		c.stats.DroppedOversize++
		return ErrTooLarge
	case c.closed:
		c.stats.SendErrors++
		return ErrClosed
	case !to.IsValid():
		c.stats.SendErrors++
		return ErrInvalidAddr
	}
	c.stats.PacketsSent++
	c.stats.BytesSent += uint64(len(payload))
	to = unmap(to)
	l := n.links.get(c.local, to)
	now := n.s.Now()
	k, at := l.plan(now, len(payload))
	for i := range k {
		if !n.s.schedule(at[i], c.local, to, l, payload) {
			l.stats.DroppedQueue++
		}
	}
	if k > 0 {
		n.catchUpAt(now)
	}
	return nil
}

// Receive implements PacketConn.
func (c *PacketNetworkConn) Receive() (from netip.AddrPort, payload []byte, ok bool) {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if c.closed {
		return netip.AddrPort{}, nil, false
	}
	n.catchUp()
	return c.q.pop()
}

// WaitReceive blocks until a datagram is waiting in the receive queue (it
// returns nil; the datagram is then read with Receive), the context is done
// (it returns ctx.Err()) or the conn is closed (it returns ErrClosed). Inside
// a testing/synctest bubble it wakes at the exact virtual arrival time.
func (c *PacketNetworkConn) WaitReceive(ctx context.Context) error {
	n := c.n
	return msgq.Wait(ctx, c.q.notify, c.closedCh, func() (bool, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if c.closed {
			return false, ErrClosed
		}
		n.catchUp()
		return c.q.len() > 0, nil
	})
}

// LocalAddr implements PacketConn.
func (c *PacketNetworkConn) LocalAddr() netip.AddrPort { return c.local }

// Stats implements PacketConn.
func (c *PacketNetworkConn) Stats() Stats {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	n.catchUp()
	st := c.stats
	c.q.addStats(&st)
	return st
}

// Close implements PacketConn. The address becomes free for a new Listen;
// datagrams arriving for it afterwards count as LinkStats.Unreachable.
func (c *PacketNetworkConn) Close() error {
	n := c.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closeLocked()
	if n.conns[c.local] == c {
		delete(n.conns, c.local)
	}
	return nil
}

func (c *PacketNetworkConn) closeLocked() {
	c.closed = true
	c.q.clear()
	close(c.closedCh)
}
