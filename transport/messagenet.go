package transport

// The MessageNetwork itself: its configuration, listening and dialing,
// link conditions, partitions and stats. Delivery is in
// messagenet_delivery.go, the listener and conn in messagenet_conn.go.

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/rewindgo/rewind/transport/internal/msgq"
	"github.com/rewindgo/rewind/transport/internal/timeq"
)

// MessageNetwork is a deterministic in-process network of MessageConns for
// tests and listen servers, with the link conditions of LinkConfig applied
// per message:
//
//   - Unreliable messages are conditioned like datagrams: latency, jitter,
//     loss, reordering, bandwidth, and duplication if LinkConfig.Duplicate
//     is set (QUIC never duplicates; use it to test tolerance).
//   - Reliable messages are never dropped or duplicated. Each transmission
//     attempt draws latency and jitter (plus ReorderDelay when Reorder
//     picks it), and each attempt lost to LinkConfig.Loss is retried one
//     retransmission timeout later: QUIC's probe timeout on the
//     connection's round trip (see MessageNetworkConfig.MinRTO).
//     ReliableOrdered messages are handed to the receiver in send order,
//     so a delayed one holds back those behind it; ReliableUnordered
//     messages are handed over as they arrive. Bandwidth caps delay
//     reliable messages without dropping them.
//   - While a connection's path is broken (Partition, LinkConfig.Down, or
//     Loss >= 1 in either direction), unreliable messages are dropped and
//     reliable ones wait at the sender; when the path is repaired (Heal,
//     SetLink) the waiting messages are sent at once, in order. If the path
//     stays broken for MessageNetworkConfig.IdleTimeout, both ends close with
//     ErrTimeout and the waiting messages are discarded.
//   - Close tells the peer after the link's latency (not subject to loss);
//     across a broken path the notice is lost and the peer times out.
//     Dial takes one round trip (the sum of both latencies); connection
//     set-up is not subject to loss or partitions.
//
// It uses the time package, so inside a testing/synctest bubble it runs on
// virtual time and a scenario replays exactly from its seed. Like PacketNetwork,
// it keeps no goroutine running: deliveries happen in whichever call notices
// they are due, or in the callback of a single time.AfterFunc timer, always
// in (time, scheduling order). Close stops the timer.
//
// All methods are safe for concurrent use.
type MessageNetwork struct {
	mu        sync.Mutex
	lim       MessageLimits
	idle      time.Duration // <= 0: never
	minRTO    time.Duration
	maxFlight int
	backlog   int
	log       *slog.Logger

	ev timeq.Queue[*memEvent] // by (time, scheduling order)

	links     linkTable
	listeners map[netip.AddrPort]*MessageNetworkListener
	lnList    []*MessageNetworkListener // open listeners, in creation order
	pairs     map[linkKey]*memPair
	pairList  []*memPair // connections with an open end, in creation order
	nextIP    uint32     // auto-assigned listen addresses: 10.0.x.y
	nextCli   uint32     // client addresses: 10.1.x.y
	inFlight  int        // unreliable messages in the heap
	closed    bool

	// Free lists, so that steady-state traffic allocates nothing.
	freeEv  freeList[memEvent]
	freeMsg freeList[memMsg]
	bufs    bufPool
}

// NewMessageNetwork returns an empty MessageNetwork.
func NewMessageNetwork(cfg MessageNetworkConfig) *MessageNetwork {
	n := &MessageNetwork{
		lim:       cfg.Limits.WithDefaults(),
		idle:      cfg.IdleTimeout,
		minRTO:    cfg.MinRTO,
		maxFlight: cfg.MaxInFlight,
		backlog:   cfg.AcceptBacklog,
		log:       cfg.Logger,
		links:     newLinkTable(cfg.Seed, cfg.Default),
		listeners: make(map[netip.AddrPort]*MessageNetworkListener),
		pairs:     make(map[linkKey]*memPair),
	}
	n.ev = timeq.New[*memEvent](n.onTimer)
	if n.idle == 0 {
		n.idle = DefaultIdleTimeout
	}
	if n.minRTO <= 0 {
		n.minRTO = DefaultMinRTO
	}
	if n.maxFlight <= 0 {
		n.maxFlight = DefaultMaxInFlight
	}
	if n.backlog <= 0 {
		n.backlog = DefaultAcceptBacklog
	}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	return n
}

// Listen opens a listener on addr. If addr is the zero netip.AddrPort, the
// network assigns the next free address of the form 10.0.x.y:7000; if only
// the port is zero, the next free port from 7000 on that IP. It returns
// ErrAddrInUse when another listener has addr, ErrInvalidAddr for an
// invalid IP and ErrClosed after Close.
func (n *MessageNetwork) Listen(addr netip.AddrPort) (*MessageNetworkListener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	addr, err := listenAddr(unmap(addr), &n.nextIP, func(a netip.AddrPort) bool { return n.listeners[a] != nil })
	if err != nil {
		return nil, err
	}
	l := &MessageNetworkListener{n: n, addr: addr, notify: msgq.NewSignal(), closedCh: make(chan struct{})}
	n.listeners[addr] = l
	n.lnList = append(n.lnList, l)
	n.log.Debug("transport: memnet listen", "addr", addr)
	return l, nil
}

// clientPort is the port of client addresses.
const clientPort = 50000

// Dial connects to the listener at addr. The new conn gets a fresh address
// of the form 10.1.x.y:50000 (see LocalAddr), so SetLink and Partition can
// single it out. Dial returns after one round trip of virtual time; ctx
// bounds that wait only, not the conn's life. It fails with ErrRefused
// (matched with errors.Is) when nothing listens at addr or the listener's
// backlog is full, and with ErrClosed after Close.
func (n *MessageNetwork) Dial(ctx context.Context, addr netip.AddrPort) (*MessageNetworkConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	addr = unmap(addr)
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, ErrClosed
	}
	now := n.now()
	n.catchUpAt(now)
	l := n.listeners[addr]
	if l == nil {
		n.mu.Unlock()
		return nil, fmt.Errorf("transport: dial %v: %w", addr, ErrRefused)
	}
	local := nextAddr(&n.nextCli, 1, clientPort, func(a netip.AddrPort) bool {
		return n.listeners[a] != nil || n.pairs[linkKey{a, addr}] != nil
	})
	p := &memPair{}
	c := n.newConn(p, local, addr)
	s := n.newConn(p, addr, local)
	c.peer, s.peer = s, c
	p.client, p.server = c, s
	n.pairs[linkKey{local, addr}] = p
	n.pairList = append(n.pairList, p)
	n.updatePair(p, now)
	n.schedule(memEvent{at: now + c.out.cfg.Latency, kind: evConnect, conn: s, ln: l})
	rtt := c.out.cfg.Latency + s.out.cfg.Latency
	n.catchUpAt(now)
	n.mu.Unlock()
	n.log.Debug("transport: memnet dial", "local", local, "remote", addr)

	if rtt > 0 {
		t := time.NewTimer(rtt)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.done:
		case <-ctx.Done():
			c.CloseWithReason("dial canceled")
			return nil, ctx.Err()
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.catchUp()
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

func (n *MessageNetwork) newConn(p *memPair, local, remote netip.AddrPort) *MessageNetworkConn {
	return &MessageNetworkConn{
		n:      n,
		pair:   p,
		local:  local,
		remote: remote,
		out:    n.links.get(local, remote),
		done:   make(chan struct{}),
		rx:     msgq.NewQueue(n.lim.ReceiveQueueMessages, n.lim.ReceiveQueueBytes, n.lim.UnreliableQueue),
	}
}

// SetLink sets the conditions of the one-way link from one address to
// another (a conn's LocalAddr and RemoteAddr). It applies to transmissions
// from now on: messages in flight keep their arrival times, reliable
// messages waiting for a retransmission use the new conditions for it.
func (n *MessageNetwork) SetLink(from, to netip.AddrPort, cfg LinkConfig) {
	from, to = unmap(from), unmap(to)
	n.change(func(now time.Duration) {
		n.links.set(from, to, cfg)
		n.updatePairOf(from, to, now)
	})
}

// SetDefaultLink replaces the conditions of every link not configured with
// SetLink.
func (n *MessageNetwork) SetDefaultLink(cfg LinkConfig) {
	n.change(func(now time.Duration) {
		n.links.setDefault(cfg)
		for _, p := range slices.Clone(n.pairList) {
			n.updatePair(p, now)
		}
	})
}

// Partition cuts both directions between a and b (typically a client conn's
// LocalAddr and the listener's address) until Heal; see MessageNetwork for
// what happens to messages. Partitions survive SetLink.
func (n *MessageNetwork) Partition(a, b netip.AddrPort) { n.setPartition(a, b, true) }

// Heal undoes Partition(a, b). Reliable messages held back by the partition
// are sent at once.
func (n *MessageNetwork) Heal(a, b netip.AddrPort) { n.setPartition(a, b, false) }

func (n *MessageNetwork) setPartition(a, b netip.AddrPort, down bool) {
	a, b = unmap(a), unmap(b)
	n.change(func(now time.Duration) {
		n.links.partition(a, b, down)
		n.updatePairOf(a, b, now)
	})
}

// change makes a change to the network at the current time now, under the
// lock: first it handles the events due by now (the change must not act on
// the past), then f, then the events f made due at once.
func (n *MessageNetwork) change(f func(now time.Duration)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	n.catchUpAt(now)
	f(now)
	n.catchUpAt(now)
}

// LinkStats returns the counters of the one-way link from one address to
// another. On a MessageNetwork they count transmission attempts: a reliable
// message retransmitted twice counts three times in Sent.
func (n *MessageNetwork) LinkStats(from, to netip.AddrPort) LinkStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.catchUp()
	return n.links.stats(unmap(from), unmap(to))
}

// Close closes every listener and conn (their Err reports "network
// closed"), drops the messages in flight and stops the timer. Later Listen
// and Dial calls return ErrClosed. Close is idempotent.
func (n *MessageNetwork) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	now := n.now()
	for _, l := range slices.Clone(n.lnList) {
		n.closeListener(l, now)
	}
	for _, p := range slices.Clone(n.pairList) {
		for _, c := range [2]*MessageNetworkConn{p.client, p.server} {
			n.closeConn(c, &CloseError{Reason: "network closed"}, false, true, now)
		}
	}
	n.closed = true
	n.ev.Stop()
	return nil
}

func (n *MessageNetwork) now() time.Duration { return n.ev.Now() }

// rto is the retransmission timeout of a reliable message sent by from:
// QUIC's probe timeout (RFC 9002, section 6.2.1) on the connection's
// current conditions, smoothed_rtt + 4*rttvar, with smoothed_rtt the sum
// of both directions' latencies and rttvar half the sum of their jitters
// (the mean deviation of a delay drawn uniformly within ±Jitter), and at
// least MinRTO. See MessageNetworkConfig.MinRTO.
func (n *MessageNetwork) rto(from *MessageNetworkConn) time.Duration {
	out, back := from.out.cfg, from.peer.out.cfg
	srtt := out.Latency + back.Latency
	rttvar := (out.Jitter + back.Jitter) / 2
	return max(n.minRTO, srtt+4*rttvar)
}
