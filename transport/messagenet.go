package transport

import (
	"context"
	"fmt"
	"log/slog"
	"math/bits"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/rewindgo/rewind/transport/internal/msgq"
	"github.com/rewindgo/rewind/transport/internal/timeq"
)

// Defaults of MessageNetworkConfig.
const (
	// DefaultMinRTO is the default MessageNetworkConfig.MinRTO.
	DefaultMinRTO = 200 * time.Millisecond
	// DefaultAcceptBacklog is the default number of connections a listener
	// holds for Accept.
	DefaultAcceptBacklog = 128
)

// MessageNetworkConfig configures a MessageNetwork. The zero value is a usable
// configuration: seed 0, perfect links, default limits, no logging.
type MessageNetworkConfig struct {
	// Seed seeds the random decisions (loss, jitter, duplication,
	// reordering). With the same seed and the same calls at the same
	// (virtual) times, a MessageNetwork delivers the same messages in the
	// same order at the same times. Each link direction draws from its own
	// generator derived from Seed and its two addresses.
	Seed uint64
	// Default is the LinkConfig of every link not configured with SetLink.
	Default LinkConfig
	// Limits bounds each conn's queues and messages.
	Limits MessageLimits
	// IdleTimeout is how long a connection survives a broken path (its two
	// ends partitioned, a direction Down or with Loss >= 1) before both
	// ends close with ErrTimeout. Zero means DefaultIdleTimeout; negative
	// means never.
	IdleTimeout time.Duration
	// MinRTO is the smallest retransmission timeout of reliable messages.
	// A transmission attempt lost to LinkConfig.Loss is retried after
	// max(MinRTO, 3*Latency + 4*Jitter) of its link. Zero means
	// DefaultMinRTO.
	MinRTO time.Duration
	// MaxInFlight bounds the unreliable messages travelling through the
	// network at once; more are dropped and counted in
	// LinkStats.DroppedQueue. (Reliable messages are bounded by each
	// conn's send queue.) Zero means DefaultMaxInFlight.
	MaxInFlight int
	// AcceptBacklog bounds the connections each listener holds for Accept;
	// a dial that finds the backlog full is refused. Zero means
	// DefaultAcceptBacklog.
	AcceptBacklog int
	// Logger receives diagnostic messages. Nil means silent.
	Logger *slog.Logger
}

// MessageNetwork is a deterministic in-process network of MessageConns for
// tests and listen servers, with the link conditions of LinkConfig applied
// per message:
//
//   - Unreliable messages are conditioned like datagrams: latency, jitter,
//     loss, reordering, bandwidth, and duplication if LinkConfig.Duplicate
//     is set (QUIC never duplicates; use it to test tolerance).
//   - Reliable messages are never dropped or duplicated. Each transmission
//     attempt draws latency and jitter (plus ReorderDelay when Reorder
//     picks it), and each attempt lost to LinkConfig.Loss adds one
//     retransmission timeout (see MessageNetworkConfig.MinRTO) before the next.
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

// rto is the retransmission timeout of a reliable message on l.
func (n *MessageNetwork) rto(l *link) time.Duration {
	return max(n.minRTO, 3*l.cfg.Latency+4*l.cfg.Jitter)
}

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
		n.schedule(memEvent{at: now + n.rto(l), kind: evRetry, msg: m})
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
