package websocket

// The conn: its state, the send queues and the one writer, the reader,
// the pinger (keep-alive, RTT, idle timeout), Receive and the stats.
// Closing is in close.go, the framing in frame.go.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// Conn is a WebSocket connection carrying messages. It implements
// transport.MessageConn; see the package documentation for how the
// channels map onto one ordered stream.
type Conn struct {
	ws     *websocket.Conn
	log    *slog.Logger
	cfg    Config
	lim    transport.MessageLimits
	local  netip.AddrPort
	remote netip.AddrPort
	client bool      // this side dialed: its frames are masked
	ln     owner     // nil for a dialed conn
	epoch  time.Time // the clock of ping stamps

	ctx    context.Context // ends the pinger and the writer's waits
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}
	wake   chan struct{} // the writer's, capacity 1
	killer *time.Timer   // drops the TCP connection when a close lingers

	mu        sync.Mutex
	err       error // *transport.CloseError once closed
	discarded bool  // closed locally: the receive queue is gone
	closing   []byte
	rx        *msgq.Queue
	ctrl      msgq.FIFO[[]byte] // pings, pongs, the welcome
	rel       msgq.FIFO[entry]  // both reliable channels, in Send order
	unrel     msgq.FIFO[entry]
	seq       uint64
	relMsgs   int
	relBytes  int
	stats     [transport.NumChannels]transport.ChannelStats
	wire      wireStats
	rtt       time.Duration
	rttvar    time.Duration
	heard     time.Time
	// unrelBytes are the bytes of the unreliable messages waiting in rx;
	// draw is what the conn draws on its listener's shared budget.
	unrelBytes int
	draw       msgq.Draw
}

type entry struct {
	seq   uint64
	frame []byte // kind byte + message
}

type wireStats struct {
	packetsSent, bytesSent, packetsReceived, bytesReceived uint64
}

var _ transport.MessageConn = (*Conn)(nil)

// owner is the listener of an accepted conn, told when it closes.
type owner interface{ remove(*Conn) }

// maxCtrl bounds the control frames waiting to be written; a ping or pong
// beyond it is dropped (the next one will do).
const maxCtrl = 8

// newConn wraps an upgraded WebSocket. Nothing runs until start.
func newConn(ws *websocket.Conn, cfg Config, ln owner, shared *msgq.Budget, local, remote netip.AddrPort, client bool) *Conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		ws:     ws,
		log:    cfg.Logger,
		cfg:    cfg,
		lim:    cfg.Limits,
		local:  local,
		remote: remote,
		client: client,
		ln:     ln,
		epoch:  time.Now(),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		rx:     msgq.NewQueue(cfg.Limits.ReceiveQueueMessages, cfg.Limits.ReceiveQueueBytes, cfg.Limits.UnreliableQueue),
		heard:  time.Now(),
	}
	c.draw = msgq.NewDraw(shared, connAllowance)
	// The longest frame: a kind byte and a message; one byte more, so
	// that readPayload sees a message over its limit before the
	// WebSocket library does.
	ws.SetReadLimit(int64(max(cfg.Limits.MaxMessageSize, cfg.Limits.MaxUnreliableSize, maxControl) + 2))
	return c
}

// start runs the conn's goroutines, with first (if any) as the first
// frame written.
func (c *Conn) start(first []byte) {
	if first != nil {
		c.ctrl.Push(first)
	}
	c.wg.Add(3)
	go c.readLoop()
	go c.writeLoop()
	go c.pingLoop()
}

func (c *Conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Send implements transport.MessageConn. Messages of all channels wait in
// bounded queues for the one writer, which writes them in Send order; an
// Unreliable message that finds UnreliableBacklog of them waiting pushes
// the oldest out (dropped and counted). A socket that does not drain (a
// slow path, a peer that does not read) fills the reliable queue and Send
// fails with transport.ErrQueueFull.
func (c *Conn) Send(ch transport.Channel, msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if !ch.Valid() {
		return transport.ErrInvalidChannel
	}
	st := &c.stats[ch]
	limit := c.lim.MaxMessageSize
	if ch == transport.Unreliable {
		limit = c.lim.MaxUnreliableSize
	}
	if len(msg) > limit {
		st.DroppedOversize++
		return &transport.SizeError{Channel: ch, Size: len(msg), Limit: limit}
	}
	if ch.Reliable() {
		if c.relMsgs+1 > c.lim.SendQueueMessages || c.relBytes+len(msg) > c.lim.SendQueueBytes {
			st.DroppedSendQueue++
			return transport.ErrQueueFull
		}
		c.relMsgs++
		c.relBytes += len(msg)
	}
	st.Sent++
	st.SentBytes += uint64(len(msg))
	frame := make([]byte, 1+len(msg))
	frame[0] = byte(ch)
	copy(frame[1:], msg)
	c.seq++
	e := entry{seq: c.seq, frame: frame}
	if ch.Reliable() {
		c.rel.Push(e)
	} else {
		if c.unrel.Len() >= c.cfg.UnreliableBacklog {
			c.unrel.Pop() // the newest state wins
			st.DroppedSendQueue++
		}
		c.unrel.Push(e)
	}
	c.signal()
	return nil
}

// nextLocked pops the next frame to write: control frames first, then
// the oldest of both queues. reliable is the message length to release
// from the reliable send queue once written (-1 for other frames).
func (c *Conn) nextLocked() (frame []byte, reliable int, ok bool) {
	if f, ok := c.ctrl.Pop(); ok {
		return f, -1, true
	}
	r, rok := c.rel.Peek()
	u, uok := c.unrel.Peek()
	if rok && (!uok || r.seq < u.seq) {
		c.rel.Pop()
		return r.frame, len(r.frame) - 1, true
	}
	if uok {
		c.unrel.Pop()
		return u.frame, -1, true
	}
	return nil, 0, false
}

func (c *Conn) writeLoop() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if c.closing != nil {
			frame := c.closing
			c.mu.Unlock()
			c.finishClose(frame)
			return
		}
		if c.err != nil {
			c.mu.Unlock()
			return
		}
		frame, rel, ok := c.nextLocked()
		c.mu.Unlock()
		if !ok {
			select {
			case <-c.wake:
			case <-c.ctx.Done():
				// a close: loop to write its frame, or end
				select {
				case <-c.wake:
				default:
				}
			}
			continue
		}
		// Not c.ctx: cancelling a write's context closes the WebSocket at
		// once, and a close must write its frame first. A write blocked on
		// a full socket is ended by the close's timer (CloseNow).
		err := c.ws.Write(context.Background(), websocket.MessageBinary, frame)
		c.mu.Lock()
		if rel >= 0 && c.err == nil {
			c.relMsgs--
			c.relBytes -= rel
		}
		if err == nil {
			c.wire.packetsSent++
			c.wire.bytesSent += uint64(len(frame) + wsHeaderLen(len(frame), c.client))
		}
		c.mu.Unlock()
		if err != nil {
			c.wsFailed(err)
			return
		}
	}
}

// queueControl queues a control frame unless maxCtrl are waiting.
func (c *Conn) queueControl(ctl control) {
	c.mu.Lock()
	if c.err == nil && c.ctrl.Len() < maxCtrl {
		c.ctrl.Push(appendControl(nil, ctl))
		c.signal()
	}
	c.mu.Unlock()
}

func (c *Conn) pingLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case now := <-t.C:
			c.mu.Lock()
			silent := now.Sub(c.heard)
			c.mu.Unlock()
			if silent >= c.cfg.IdleTimeout {
				c.fail(transport.ErrTimeout, fmt.Sprintf("nothing heard from the peer for %v", silent.Round(time.Millisecond)))
				return
			}
			c.queueControl(control{kind: kindPing, stamp: uint64(time.Since(c.epoch))})
		}
	}
}

// connAllowance is what each conn may buffer without drawing on its
// listener's shared budget (Config.MaxBufferedBytes).
const connAllowance = 64 << 10

// chargeLocked brings the conn's draw on the shared budget in line with
// what it buffers beyond connAllowance. It reports false, changing
// nothing, when the budget cannot cover an increase.
func (c *Conn) chargeLocked() bool {
	_, rel := c.rx.Usage()
	return c.draw.Set(rel + c.unrelBytes)
}

// reserve makes room for n more bytes of a reliable message being read;
// when there is none it closes the conn with transport.ErrReceiveOverflow.
func (c *Conn) reserve(n int) error {
	c.mu.Lock()
	if c.discarded || c.err != nil {
		c.mu.Unlock()
		return errStopped
	}
	ok := c.rx.Grow(n)
	var reason string
	if !ok {
		msgs, bytes := c.rx.Usage()
		reason = fmt.Sprintf("%d reliable messages (%d bytes) received and not yet read, %d more bytes arriving", msgs, bytes, n)
	} else if !c.chargeLocked() {
		c.rx.Grow(-n)
		ok = false
		reason = fmt.Sprintf("the server's receive buffers are full (%d bytes)", c.draw.Limit())
	}
	c.mu.Unlock()
	if !ok {
		c.fail(transport.ErrReceiveOverflow, reason)
		return errStopped
	}
	return nil
}

func (c *Conn) readLoop() {
	defer c.wg.Done()
	defer func() {
		c.mu.Lock()
		writerCloses := c.closing != nil
		c.mu.Unlock()
		if !writerCloses { // the peer closed: answer its closing handshake
			_ = c.ws.Close(websocket.StatusNormalClosure, "")
		}
	}()
	for {
		// Not c.ctx: see writeLoop. The read ends when the WebSocket
		// closes.
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			c.wsFailed(err)
			return
		}
		if err := c.readFrame(typ, r); err != nil {
			if err != errStopped {
				c.fail(transport.ErrProtocol, err.Error())
			}
			return
		}
	}
}

// readFrame reads and handles one WebSocket message. An error is a
// protocol violation (or errStopped: the conn is closing).
func (c *Conn) readFrame(typ websocket.MessageType, r io.Reader) error {
	c.mu.Lock()
	c.heard = time.Now()
	c.mu.Unlock()
	if typ != websocket.MessageBinary {
		return protocolf("text message")
	}
	var k [1]byte
	if n, _ := io.ReadFull(r, k[:]); n == 0 {
		return protocolf("empty message")
	}
	kind := k[0]
	if !transport.Channel(kind).Valid() {
		body, err := readPayload(r, maxControl-1, func(int) error { return nil })
		if err == errTooLong {
			return protocolf("control frame over %d bytes", maxControl)
		} else if err != nil {
			return c.readFailed(err)
		}
		c.countReceived(1 + len(body))
		ctl, err := parseControl(append([]byte{kind}, body...))
		if err != nil {
			return err
		}
		return c.handleControl(ctl)
	}
	ch := transport.Channel(kind)
	if ch == transport.Unreliable {
		return c.readUnreliable(r)
	}
	c.mu.Lock()
	ok := c.rx.Reserve(0)
	msgs, bytes := c.rx.Usage()
	c.mu.Unlock()
	if !ok {
		c.fail(transport.ErrReceiveOverflow, fmt.Sprintf("%d reliable messages (%d bytes) received and not yet read", msgs, bytes))
		return errStopped
	}
	msg, err := readPayload(r, c.lim.MaxMessageSize, c.reserve)
	c.mu.Lock()
	if err != nil || c.discarded {
		c.rx.Unreserve(cap(msg))
		c.chargeLocked()
	} else {
		c.rx.PushReserved(uint8(ch), msg)
		c.stats[ch].Received++
		c.stats[ch].ReceivedBytes += uint64(len(msg))
	}
	c.mu.Unlock()
	switch {
	case err == errTooLong:
		return protocolf("%v message over the %d-byte limit", ch, c.lim.MaxMessageSize)
	case err != nil:
		return c.readFailed(err)
	}
	c.countReceived(1 + len(msg))
	return nil
}

// readFailed turns an error of the WebSocket reader into the conn's end.
func (c *Conn) readFailed(err error) error {
	if err != errStopped {
		c.wsFailed(err)
	}
	return errStopped
}

func (c *Conn) readUnreliable(r io.Reader) error {
	msg, err := readPayload(r, c.lim.MaxUnreliableSize, func(int) error { return nil })
	n := len(msg)
	if err == errTooLong {
		k, err := io.Copy(io.Discard, r) // bounded by the WebSocket read limit
		if err != nil {
			return c.readFailed(err)
		}
		c.mu.Lock()
		c.stats[transport.Unreliable].DroppedOversize++
		c.mu.Unlock()
		c.countReceived(1 + n + int(k))
		return nil
	}
	if err != nil {
		return c.readFailed(err)
	}
	c.countReceived(1 + n)
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &c.stats[transport.Unreliable]
	c.unrelBytes += n
	switch {
	case c.discarded:
		c.unrelBytes -= n
	case !c.chargeLocked() || !c.rx.PushUnreliable(uint8(transport.Unreliable), msg):
		c.unrelBytes -= n
		c.chargeLocked()
		st.DroppedReceiveQueue++
	default:
		st.Received++
		st.ReceivedBytes += uint64(n)
	}
	return nil
}

func (c *Conn) countReceived(n int) {
	c.mu.Lock()
	c.wire.packetsReceived++
	c.wire.bytesReceived += uint64(n + wsHeaderLen(n, !c.client))
	c.mu.Unlock()
}

func (c *Conn) handleControl(ctl control) error {
	switch ctl.kind {
	case kindPing:
		c.queueControl(control{kind: kindPong, stamp: ctl.stamp})
	case kindPong:
		sent := time.Duration(ctl.stamp)
		now := time.Since(c.epoch)
		if sent > now || sent < 0 {
			return protocolf("pong of a ping not sent")
		}
		c.sampleRTT(now - sent)
	case kindClose:
		c.closeWith(&transport.CloseError{Remote: true, Reason: ctl.text, Err: errOfCause(ctl.cause)}, false, nil)
		return errStopped
	default:
		return protocolf("frame kind %d after the handshake", ctl.kind)
	}
	return nil
}

// sampleRTT folds one round trip into the smoothed RTT as QUIC does
// (RFC 9002, section 5.3).
func (c *Conn) sampleRTT(s time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rtt == 0 {
		c.rtt, c.rttvar = s, s/2
		return
	}
	d := c.rtt - s
	if d < 0 {
		d = -d
	}
	c.rttvar = (3*c.rttvar + d) / 4
	c.rtt = (7*c.rtt + s) / 8
}

// Receive implements transport.MessageConn.
func (c *Conn) Receive() (ch transport.Channel, msg []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discarded {
		return 0, nil, false
	}
	it, ok := c.rx.Pop()
	if ok {
		if !it.Reliable {
			c.unrelBytes -= len(it.Msg)
		}
		c.chargeLocked()
	}
	return transport.Channel(it.Ch), it.Msg, ok
}

// WaitReceive implements transport.MessageConn.
func (c *Conn) WaitReceive(ctx context.Context) error {
	return msgq.Wait(ctx, c.rx.Notify(), c.done, func() (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.discarded && c.rx.Len() > 0, c.err
	})
}

// LocalAddr implements transport.MessageConn: the TCP address of this
// end, or the zero AddrPort when it is unknown (in a browser, or when
// Dial used Config.HTTPClient).
func (c *Conn) LocalAddr() netip.AddrPort { return c.local }

// RemoteAddr implements transport.MessageConn: the TCP address of the
// peer (for a listener behind a reverse proxy, the proxy's), or the zero
// AddrPort when it is unknown.
func (c *Conn) RemoteAddr() netip.AddrPort { return c.remote }

// MaxUnreliableSize implements transport.MessageConn:
// MessageLimits.MaxUnreliableSize (a stream has no datagram size).
func (c *Conn) MaxUnreliableSize() int { return c.lim.MaxUnreliableSize }

// Stats implements transport.MessageConn. RTT is measured by the conn's
// own pings (every Config.PingInterval). The wire counters count
// WebSocket frames: this package's frame plus the WebSocket header (2 to
// 14 bytes); TCP/IP headers, TCP acknowledgements and retransmissions
// are the kernel's and are not counted. PacketsLost is always 0: TCP
// hides losses (they show as delay).
func (c *Conn) Stats() transport.MessageStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return transport.MessageStats{RTT: c.rtt, Channels: c.stats,
		WirePacketsSent: c.wire.packetsSent, WireBytesSent: c.wire.bytesSent,
		WirePacketsReceived: c.wire.packetsReceived, WireBytesReceived: c.wire.bytesReceived}
}
