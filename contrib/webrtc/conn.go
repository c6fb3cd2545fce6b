package webrtc

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/signal"
)

// Config configures Dial. The zero value is usable.
type Config struct {
	// ICEServers are the STUN and TURN servers of every peer connection.
	// Default: none (host candidates only: one machine or one LAN).
	ICEServers []webrtc.ICEServer
	// Loopback gathers loopback and IPv4 host candidates only and turns
	// mDNS off (native builds; ignored in a browser). For tests and for
	// programs on one machine. Ignored when API is set.
	Loopback bool
	// API, when set, creates the peer connections: a game builds it with
	// its own webrtc.SettingEngine (network types, port range, NAT 1:1
	// addresses, ...). Default: webrtc.NewAPI with the Loopback settings.
	API *webrtc.API
	// ReceiveQueue caps the datagrams waiting to be received; more are
	// dropped and counted. Default transport.DefaultReceiveQueue.
	ReceiveQueue int
	// MaxBuffered is the number of bytes a data channel may hold unsent
	// before Send drops datagrams to it. Default 64 KiB.
	MaxBuffered int
	// Signal configures the signalling client.
	Signal signal.ClientConfig
	// Logger receives debug messages about the mesh's setup. Default:
	// silent.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.ReceiveQueue <= 0 {
		c.ReceiveQueue = transport.DefaultReceiveQueue
	}
	if c.MaxBuffered <= 0 {
		c.MaxBuffered = 64 << 10
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.API == nil {
		c.API = defaultAPI(c.Loopback)
	}
	return c
}

// Errors of Dial.
var (
	// ErrPeerLeft is returned by Dial when a peer of the room left, or its
	// peer connection failed, before the mesh was complete.
	ErrPeerLeft = errors.New("webrtc: a peer left before the mesh was complete")
	// ErrSignal is returned by Dial when a peer sent signalling data that
	// is not a valid session description or candidate.
	ErrSignal = errors.New("webrtc: invalid signalling data")
)

// PeerAddr returns the synthetic address of peer index of a room:
// 240.0.0.(index+1):(7000+index). See the package documentation.
func PeerAddr(index int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{240, 0, 0, byte(index + 1)}), uint16(7000+index))
}

// peerIndex is the inverse of PeerAddr: -1 for another address.
func peerIndex(a netip.AddrPort) int {
	if !a.Addr().Is4() {
		return -1
	}
	b := a.Addr().As4()
	i := int(b[3]) - 1
	if b[0] != 240 || b[1] != 0 || b[2] != 0 || i < 0 || i >= signal.MaxPeers || a != PeerAddr(i) {
		return -1
	}
	return i
}

// Conn is a transport.PacketConn over the data channels to the other
// peers of a room. Create it with Dial.
//
// A peer that leaves after Dial, or whose connection fails, is not
// replaced: nothing more arrives from it, sends to it fail with
// transport.ErrClosed once WebRTC notices (at once when the peer closes,
// after ICE timeouts when it vanished), and a rollback session sees a
// peer gone silent (its disconnect timeout).
type Conn struct {
	index, n int
	log      *slog.Logger
	maxBuf   uint64
	peers    []*remote // by index; nil for this peer

	closed   atomic.Bool
	closedCh chan struct{}
	once     sync.Once
	notify   chan struct{} // a token when a datagram is queued

	sent, sentBytes, sendErrs, oversize atomic.Uint64

	mu         sync.Mutex
	q          ring
	rxOversize uint64
}

var _ transport.PacketConn = (*Conn)(nil)

// remote is the link to one other peer.
type remote struct {
	index int
	pc    *webrtc.PeerConnection
	dc    *webrtc.DataChannel

	// Setup, guarded by the mesh's goroutine: candidates that arrived
	// before the remote description.
	haveRemote bool
	pending    []webrtc.ICECandidateInit
}

// Index is this peer's index in the room (its signalling index).
func (c *Conn) Index() int { return c.index }

// N is the number of peers of the room, this one included.
func (c *Conn) N() int { return c.n }

// LocalAddr implements transport.PacketConn: PeerAddr(c.Index()).
func (c *Conn) LocalAddr() netip.AddrPort { return PeerAddr(c.index) }

// Send implements transport.PacketConn. The datagram goes to the peer whose
// PeerAddr is to.
func (c *Conn) Send(to netip.AddrPort, payload []byte) error {
	i := peerIndex(to)
	switch {
	case len(payload) > transport.MaxPacketSize:
		c.oversize.Add(1)
		return transport.ErrTooLarge
	case c.closed.Load():
		c.sendErrs.Add(1)
		return transport.ErrClosed
	case i < 0 || i >= c.n || i == c.index:
		c.sendErrs.Add(1)
		return transport.ErrInvalidAddr
	}
	dc := c.peers[i].dc
	if dc.ReadyState() != webrtc.DataChannelStateOpen {
		c.sendErrs.Add(1)
		return transport.ErrClosed
	}
	if dc.BufferedAmount() > c.maxBuf {
		c.sendErrs.Add(1)
		return ErrBackpressure
	}
	if err := dc.Send(payload); err != nil {
		c.sendErrs.Add(1)
		return err
	}
	c.sent.Add(1)
	c.sentBytes.Add(uint64(len(payload)))
	return nil
}

// ErrBackpressure is returned by Send when the data channel to the peer
// already holds Config.MaxBuffered bytes unsent; the datagram is dropped.
var ErrBackpressure = errors.New("webrtc: send buffer full")

// Receive implements transport.PacketConn.
func (c *Conn) Receive() (from netip.AddrPort, payload []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return netip.AddrPort{}, nil, false
	}
	return c.q.pop()
}

// WaitReceive blocks until a datagram is waiting (it returns nil; read it
// with Receive), ctx is done (ctx.Err()) or the conn is closed
// (transport.ErrClosed).
func (c *Conn) WaitReceive(ctx context.Context) error {
	for {
		if c.closed.Load() {
			return transport.ErrClosed
		}
		c.mu.Lock()
		n := c.q.count
		c.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-c.notify:
		case <-c.closedCh:
			return transport.ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deliver queues a datagram received from peer i (pion's goroutine).
func (c *Conn) deliver(i int, b []byte) {
	if c.closed.Load() {
		return
	}
	c.mu.Lock()
	if len(b) > transport.MaxPacketSize {
		c.rxOversize++
	} else {
		c.q.push(PeerAddr(i), b)
	}
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// Stats implements transport.PacketConn.
func (c *Conn) Stats() transport.Stats {
	st := transport.Stats{
		PacketsSent:     c.sent.Load(),
		BytesSent:       c.sentBytes.Load(),
		SendErrors:      c.sendErrs.Load(),
		DroppedOversize: c.oversize.Load(),
	}
	c.mu.Lock()
	st.PacketsReceived, st.BytesReceived, st.DroppedQueueFull = c.q.received, c.q.receivedBytes, c.q.droppedFull
	st.DroppedOversize += c.rxOversize
	c.mu.Unlock()
	return st
}

// Close implements transport.PacketConn: it closes every peer connection.
func (c *Conn) Close() error {
	var err error
	c.once.Do(func() {
		c.closed.Store(true)
		close(c.closedCh)
		err = closePeers(c.peers)
		c.mu.Lock()
		c.q.clear()
		c.mu.Unlock()
	})
	return err
}

func closePeers(peers []*remote) error {
	var err error
	for _, p := range peers {
		if p != nil && p.pc != nil {
			err = errors.Join(err, p.pc.Close())
		}
	}
	return err
}

// ring is a bounded FIFO of datagrams in reusable buffers; one spare slot
// keeps the payload last returned by pop intact until the next pop. Its
// owner guards it.
type ring struct {
	slots       []slot
	head, count int
	cap         int

	received, receivedBytes, droppedFull uint64
}

type slot struct {
	from netip.AddrPort
	buf  []byte
}

func newRing(capacity int) ring { return ring{slots: make([]slot, capacity+1), cap: capacity} }

func (q *ring) push(from netip.AddrPort, p []byte) {
	if q.count >= q.cap {
		q.droppedFull++
		return
	}
	s := &q.slots[(q.head+q.count)%len(q.slots)]
	if s.buf == nil {
		s.buf = make([]byte, transport.MaxPacketSize)
	}
	s.from = from
	s.buf = s.buf[:copy(s.buf[:cap(s.buf)], p)]
	q.count++
	q.received++
	q.receivedBytes += uint64(len(p))
}

func (q *ring) pop() (netip.AddrPort, []byte, bool) {
	if q.count == 0 {
		return netip.AddrPort{}, nil, false
	}
	s := &q.slots[q.head]
	q.head = (q.head + 1) % len(q.slots)
	q.count--
	return s.from, s.buf, true
}

func (q *ring) clear() { q.head, q.count = 0, 0 }

// setupTimeout bounds one signalling write during the mesh's setup.
const setupTimeout = 10 * time.Second
