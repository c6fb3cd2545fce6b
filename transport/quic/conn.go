package quic

// The conn: its state, how it starts over an established QUIC connection
// (one goroutine per stream and direction), and its addresses and stats.
// The send path is in send.go, the receive path in receive.go, closing in
// close.go, the stream framing in frame.go.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// Conn is a QUIC connection carrying messages. It implements
// transport.MessageConn; see the package documentation for how channels
// map onto QUIC.
type Conn struct {
	qc        *quicgo.Conn
	log       *slog.Logger
	lim       transport.MessageLimits
	hsTimeout time.Duration
	local     netip.AddrPort
	remote    netip.AddrPort
	ln        *Listener // nil for a dialed conn

	ctx       context.Context // ends every goroutine of the conn
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	done      chan struct{}
	orderedCh chan *quicgo.Stream // server: the accepted ordered stream, for the writer
	wake      [transport.NumChannels]chan struct{}

	mu        sync.Mutex
	err       error
	discarded bool // closed locally: the receive queue is gone
	rx        *msgq.Queue
	sendQ     [transport.NumChannels]msgq.FIFO[[]byte]
	relMsgs   int // reliable messages queued and not yet written to QUIC
	relBytes  int
	stats     [transport.NumChannels]transport.ChannelStats
	maxDgram  int       // current unreliable limit
	pathDgram int       // the path's datagram payload limit (maxDgram + 1 or more)
	held      bool      // between Hold and Flush
	probedAt  time.Time // last probe of the path's datagram limit
	// dgramBytes are the bytes of the datagrams waiting in rx; draw is
	// what the conn draws on its listener's shared budget (what it buffers
	// beyond connAllowance).
	dgramBytes int
	draw       msgq.Draw
}

var (
	_ transport.MessageConn = (*Conn)(nil)
	_ transport.Batcher     = (*Conn)(nil)
)

// newConn wraps an established QUIC connection and starts its goroutines.
// ordered is the ordered stream for a dialed conn, nil on the server (the
// conn accepts it). On error the QUIC connection is closed.
func newConn(qc *quicgo.Conn, cfg Config, ln *Listener, ordered *quicgo.Stream) (*Conn, error) {
	if !qc.ConnectionState().SupportsDatagrams.Remote {
		qc.CloseWithError(codeProtocol, "datagrams (RFC 9221) not enabled")
		return nil, fmt.Errorf("%w: peer does not support QUIC datagrams", transport.ErrProtocol)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		qc:        qc,
		log:       cfg.Logger,
		lim:       cfg.Limits,
		hsTimeout: cfg.HandshakeTimeout,
		local:     addrPort(qc.LocalAddr()),
		remote:    addrPort(qc.RemoteAddr()),
		ln:        ln,
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		orderedCh: make(chan *quicgo.Stream, 1),
		rx:        msgq.NewQueue(cfg.Limits.ReceiveQueueMessages, cfg.Limits.ReceiveQueueBytes, cfg.Limits.UnreliableQueue),
		maxDgram:  cfg.Limits.MaxUnreliableSize,
		pathDgram: cfg.Limits.MaxUnreliableSize + 1,
	}
	if ln != nil {
		c.draw = msgq.NewDraw(ln.buf, connAllowance)
	}
	for i := range c.wake {
		c.wake[i] = make(chan struct{}, 1)
	}
	c.probeLocked(time.Now())
	c.wg.Add(7)
	go c.watch()
	go c.readOrdered(ordered)
	go c.writeOrdered(ordered)
	go c.acceptUni()
	go c.writeUnordered()
	go c.readDatagrams()
	go c.writeDatagrams()
	return c, nil
}

func addrPort(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// LocalAddr implements transport.MessageConn.
func (c *Conn) LocalAddr() netip.AddrPort { return c.local }

// RemoteAddr implements transport.MessageConn.
func (c *Conn) RemoteAddr() netip.AddrPort { return c.remote }

// Stats implements transport.MessageConn with QUIC's smoothed RTT and lost
// packet count.
func (c *Conn) Stats() transport.MessageStats {
	qs := c.qc.ConnectionStats()
	c.mu.Lock()
	defer c.mu.Unlock()
	return transport.MessageStats{RTT: qs.SmoothedRTT, Channels: c.stats, PacketsLost: qs.PacketsLost,
		WirePacketsSent: qs.PacketsSent, WireBytesSent: qs.BytesSent,
		WirePacketsReceived: qs.PacketsReceived, WireBytesReceived: qs.BytesReceived}
}
