package quic

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// Application error codes of CONNECTION_CLOSE frames: the cause of a close,
// so that the peer's CloseError reports it too.
const (
	codeClose    quicgo.ApplicationErrorCode = 0 // Close or CloseWithReason
	codeOverflow quicgo.ApplicationErrorCode = 1 // transport.ErrReceiveOverflow
	codeProtocol quicgo.ApplicationErrorCode = 2 // transport.ErrProtocol
	codeRefused  quicgo.ApplicationErrorCode = 3 // transport.ErrRefused
)

func codeFor(err error) quicgo.ApplicationErrorCode {
	switch {
	case err == nil:
		return codeClose
	case errors.Is(err, transport.ErrReceiveOverflow):
		return codeOverflow
	case errors.Is(err, transport.ErrProtocol):
		return codeProtocol
	case errors.Is(err, transport.ErrRefused):
		return codeRefused
	}
	return codeClose
}

func errFor(code quicgo.ApplicationErrorCode) error {
	switch code {
	case codeOverflow:
		return transport.ErrReceiveOverflow
	case codeProtocol:
		return transport.ErrProtocol
	case codeRefused:
		return transport.ErrRefused
	}
	return nil
}

// closeErrorFrom translates the error that ended a QUIC connection.
func closeErrorFrom(err error) *transport.CloseError {
	var (
		ae *quicgo.ApplicationError
		te *quicgo.TransportError
		it *quicgo.IdleTimeoutError
		ht *quicgo.HandshakeTimeoutError
	)
	switch {
	case errors.As(err, &ae):
		return &transport.CloseError{Remote: ae.Remote, Reason: transport.TruncateReason(ae.ErrorMessage), Err: errFor(ae.ErrorCode)}
	case errors.As(err, &it), errors.As(err, &ht):
		return &transport.CloseError{Reason: err.Error(), Err: transport.ErrTimeout}
	case errors.As(err, &te):
		return &transport.CloseError{Remote: te.Remote, Reason: transport.TruncateReason(te.Error()), Err: transport.ErrProtocol}
	case err == nil:
		return &transport.CloseError{}
	}
	return &transport.CloseError{Reason: transport.TruncateReason(err.Error())}
}

// probeSize is larger than any QUIC packet quic-go builds (1452 bytes at
// most), so a datagram of this size is always refused with a
// DatagramTooLargeError that tells the current limit.
const probeSize = 2048

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
	shared    *budget   // the listener's budget; nil for a dialed conn

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
	probedAt  time.Time // last probe of the path's datagram limit
	// dgramBytes are the bytes of the datagrams waiting in rx; charged is
	// what the conn draws on the shared budget (what it buffers beyond
	// connAllowance).
	dgramBytes int
	charged    int
}

var _ transport.MessageConn = (*Conn)(nil)

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
	}
	if ln != nil {
		c.shared = ln.buf
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

// probeLocked asks quic-go for the largest datagram payload the path
// carries now.
func (c *Conn) probeLocked(now time.Time) {
	c.probedAt = now
	err := c.qc.SendDatagram(make([]byte, probeSize))
	var tl *quicgo.DatagramTooLargeError
	if errors.As(err, &tl) {
		c.maxDgram = min(c.lim.MaxUnreliableSize, int(max(tl.MaxDatagramPayloadSize, 0)))
	}
}

// closeWith closes the conn with cause cerr (unless it is closed already)
// and sends the cause to the peer unless cerr is the peer's. With discard,
// the receive queue is dropped. It does not wait for the goroutines, so the
// goroutines call it too.
func (c *Conn) closeWith(cerr *transport.CloseError, discard bool) {
	c.mu.Lock()
	if discard {
		c.discarded = true
		c.rx.Clear()
		c.dgramBytes = 0
		c.chargeLocked()
	}
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = cerr
	for i := range c.sendQ {
		c.sendQ[i].Clear()
	}
	c.relMsgs, c.relBytes = 0, 0
	c.mu.Unlock()

	c.cancel()
	if !cerr.Remote {
		// Blocks until quic-go has sent CONNECTION_CLOSE and stopped; a
		// no-op if the connection already ended.
		c.qc.CloseWithError(codeFor(cerr.Err), cerr.Reason)
	}
	close(c.done)
	if c.ln != nil {
		c.ln.remove(c)
	}
	c.log.Debug("quic: conn closed", "local", c.local, "remote", c.remote, "err", cerr)
}

// fail closes the conn because of something the peer did, unless the conn
// is already ending (then err is a consequence of that).
func (c *Conn) fail(err error, reason string) {
	if c.ending() {
		return
	}
	c.log.Debug("quic: closing conn", "remote", c.remote, "err", err, "reason", reason)
	c.closeWith(&transport.CloseError{Reason: transport.TruncateReason(reason), Err: err}, false)
}

// ending reports whether the conn is closing or closed.
func (c *Conn) ending() bool {
	return c.ctx.Err() != nil || c.qc.Context().Err() != nil
}

// streamFailed handles an error from a stream: quietly when the conn is
// ending (the watcher reports why), as a protocol violation otherwise.
func (c *Conn) streamFailed(what string, err error) {
	if err == errStopped || c.ending() || errors.Is(err, net.ErrClosed) {
		return
	}
	var pe interface{ detail() string }
	detail := err.Error()
	if errors.As(err, &pe) {
		detail = pe.detail()
	}
	c.fail(transport.ErrProtocol, what+": "+detail)
}

// errStopped tells a reader that the conn was closed on its account.
var errStopped = errors.New("quic: conn closed by reader")

// watch waits for the QUIC connection to end and records why.
func (c *Conn) watch() {
	defer c.wg.Done()
	select {
	case <-c.qc.Context().Done():
		c.closeWith(closeErrorFrom(context.Cause(c.qc.Context())), false)
	case <-c.ctx.Done():
	}
}

// connAllowance is what each conn may buffer without drawing on its
// listener's shared budget (Config.MaxBufferedBytes): the few messages of an
// honest client never depend on what other conns hold.
const connAllowance = 64 << 10

// chargeLocked brings the conn's draw on the shared budget in line with
// what it buffers: the capacity of the reliable messages waiting or being
// read, and the waiting datagrams, beyond connAllowance. It reports false,
// changing nothing, when the budget cannot cover an increase.
func (c *Conn) chargeLocked() bool {
	if c.shared == nil {
		return true
	}
	_, rel := c.rx.Usage()
	want := max(0, rel+c.dgramBytes-connAllowance)
	switch d := want - c.charged; {
	case d > 0 && !c.shared.take(d):
		return false
	case d < 0:
		c.shared.give(-d)
	}
	c.charged = want
	return true
}

// reserve makes room for n more bytes of a reliable message being read,
// within the conn's receive queue and the listener's shared budget. When
// there is none it closes the conn with transport.ErrReceiveOverflow.
func (c *Conn) reserve(n int) error {
	c.mu.Lock()
	if c.discarded {
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
		reason = fmt.Sprintf("the server's receive buffers are full (%d bytes)", c.shared.limit)
	}
	c.mu.Unlock()
	if !ok {
		c.fail(transport.ErrReceiveOverflow, reason)
		return errStopped
	}
	return nil
}

// readMessage reads one frame from r into the receive queue. Its buffer
// grows with the bytes that arrive (readBody), each growth reserved first.
func (c *Conn) readMessage(r *bufio.Reader, ch transport.Channel) error {
	n, err := readFrameHeader(r, c.lim.MaxMessageSize)
	if err != nil {
		return err
	}
	c.mu.Lock()
	ok := c.rx.Reserve(0)
	msgs, bytes := c.rx.Usage()
	c.mu.Unlock()
	if !ok {
		c.fail(transport.ErrReceiveOverflow, fmt.Sprintf("%d reliable messages (%d bytes) received and not yet read", msgs, bytes))
		return errStopped
	}
	msg, err := readBody(r, n, c.reserve)
	c.mu.Lock()
	if err != nil || c.discarded {
		c.rx.Unreserve(cap(msg))
		c.chargeLocked()
	} else {
		c.rx.PushReserved(uint8(ch), msg)
		c.stats[ch].Received++
		c.stats[ch].ReceivedBytes += uint64(n)
	}
	c.mu.Unlock()
	return err
}

func (c *Conn) readOrdered(st *quicgo.Stream) {
	defer c.wg.Done()
	server := st == nil
	if server { // wait for the client's stream and its preface
		ctx, cancel := context.WithTimeout(c.ctx, c.hsTimeout)
		s, err := c.qc.AcceptStream(ctx)
		cancel()
		if err != nil {
			if !c.ending() {
				c.fail(transport.ErrProtocol, "no ordered stream from the client")
			}
			return
		}
		st = s
		c.orderedCh <- st
	}
	r := bufio.NewReaderSize(st, 4096)
	if server {
		b, err := r.ReadByte()
		if err == nil && b != preface {
			err = fmt.Errorf("unknown preface %#x", b)
		}
		if err != nil {
			c.streamFailed("ordered stream preface", err)
			return
		}
	}
	for {
		if err := c.readMessage(r, transport.ReliableOrdered); err != nil {
			if err == io.EOF {
				err = errors.New("closed by the peer")
			}
			c.streamFailed("ordered stream", err)
			return
		}
	}
}

func (c *Conn) acceptUni() {
	defer c.wg.Done()
	for {
		s, err := c.qc.AcceptUniStream(c.ctx)
		if err != nil {
			return
		}
		c.wg.Add(1)
		go c.readUni(s)
	}
}

// readUni reads the one message of a unidirectional stream.
func (c *Conn) readUni(s *quicgo.ReceiveStream) {
	defer c.wg.Done()
	r := bufio.NewReaderSize(s, 64)
	err := c.readMessage(r, transport.ReliableUnordered)
	if err == nil {
		if _, err = r.ReadByte(); err == nil {
			err = errors.New("more than one message on a unidirectional stream")
		} else if err == io.EOF {
			return
		}
	}
	var se *quicgo.StreamError
	if errors.As(err, &se) && se.Remote {
		return // the peer gave up on this message
	}
	s.CancelRead(0)
	c.streamFailed("unordered stream", err)
}

func (c *Conn) readDatagrams() {
	defer c.wg.Done()
	for {
		b, err := c.qc.ReceiveDatagram(c.ctx)
		if err != nil {
			return
		}
		c.mu.Lock()
		st := &c.stats[transport.Unreliable]
		c.dgramBytes += len(b)
		switch {
		case c.discarded:
			c.dgramBytes -= len(b)
		case len(b) > c.lim.MaxUnreliableSize:
			c.dgramBytes -= len(b)
			st.DroppedOversize++
		case !c.chargeLocked() || !c.rx.PushUnreliable(uint8(transport.Unreliable), b):
			c.dgramBytes -= len(b)
			c.chargeLocked()
			st.DroppedReceiveQueue++
		default:
			st.Received++
			st.ReceivedBytes += uint64(len(b))
		}
		c.mu.Unlock()
	}
}

// next pops the next message queued on ch, waiting for one. It reports
// false when the conn is ending.
func (c *Conn) next(ch transport.Channel) ([]byte, bool) {
	for {
		c.mu.Lock()
		msg, ok := c.sendQ[ch].Pop()
		c.mu.Unlock()
		if ok {
			return msg, true
		}
		select {
		case <-c.wake[ch]:
		case <-c.ctx.Done():
			return nil, false
		}
	}
}

// sent releases the send-queue room of a reliable message handed to QUIC.
func (c *Conn) sent(n int) {
	c.mu.Lock()
	if c.err == nil {
		c.relMsgs--
		c.relBytes -= n
	}
	c.mu.Unlock()
}

// batchSize is how many bytes of small ordered messages are coalesced into
// one stream write.
const batchSize = 32 << 10

func (c *Conn) writeOrdered(st *quicgo.Stream) {
	defer c.wg.Done()
	if st == nil {
		select {
		case st = <-c.orderedCh:
		case <-c.ctx.Done():
			return
		}
	} else if _, err := st.Write([]byte{preface}); err != nil {
		c.streamFailed("ordered stream", err)
		return
	}
	var buf []byte
	for {
		msg, ok := c.next(transport.ReliableOrdered)
		if !ok {
			return
		}
		// Coalesce what is queued into one write, up to batchSize; a large
		// message goes on its own after its header.
		for {
			buf = appendFrameHeader(buf, len(msg))
			if len(msg) > batchSize {
				if _, err := st.Write(buf); err != nil {
					c.streamFailed("ordered stream", err)
					return
				}
				buf = buf[:0]
				if _, err := st.Write(msg); err != nil {
					c.streamFailed("ordered stream", err)
					return
				}
			} else {
				buf = append(buf, msg...)
			}
			c.sent(len(msg))
			if len(buf) >= batchSize {
				break
			}
			c.mu.Lock()
			msg, ok = c.sendQ[transport.ReliableOrdered].Pop()
			c.mu.Unlock()
			if !ok {
				break
			}
		}
		if len(buf) > 0 {
			if _, err := st.Write(buf); err != nil {
				c.streamFailed("ordered stream", err)
				return
			}
		}
		if cap(buf) > 2*batchSize {
			buf = nil
		}
		buf = buf[:0]
	}
}

func (c *Conn) writeUnordered() {
	defer c.wg.Done()
	var hdr []byte
	for {
		msg, ok := c.next(transport.ReliableUnordered)
		if !ok {
			return
		}
		s, err := c.qc.OpenUniStreamSync(c.ctx)
		if err != nil {
			c.streamFailed("open unordered stream", err)
			return
		}
		hdr = appendFrameHeader(hdr[:0], len(msg))
		_, err = s.Write(hdr)
		if err == nil {
			_, err = s.Write(msg)
		}
		if err == nil {
			err = s.Close()
		}
		if err != nil {
			c.streamFailed("unordered stream", err)
			return
		}
		c.sent(len(msg))
	}
}

func (c *Conn) writeDatagrams() {
	defer c.wg.Done()
	for {
		msg, ok := c.next(transport.Unreliable)
		if !ok {
			return
		}
		err := c.qc.SendDatagram(msg)
		var tl *quicgo.DatagramTooLargeError
		switch {
		case errors.As(err, &tl):
			// The path shrank since Send checked the size.
			c.mu.Lock()
			c.stats[transport.Unreliable].DroppedOversize++
			c.maxDgram = min(c.lim.MaxUnreliableSize, int(max(tl.MaxDatagramPayloadSize, 0)))
			c.mu.Unlock()
		case err != nil:
			return // the conn is ending
		}
	}
}

// Send implements transport.MessageConn. Reliable messages wait in the send
// queue until their writer hands them to QUIC; QUIC flow and congestion
// control decide when that happens, so a slow path or a peer that does not
// read fills the queue and Send fails with transport.ErrQueueFull.
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
		limit = c.maxDgram
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
	if ch == transport.Unreliable && c.sendQ[ch].Len() >= c.lim.UnreliableQueue {
		st.DroppedSendQueue++
		return nil
	}
	c.sendQ[ch].Push(append([]byte(nil), msg...))
	select {
	case c.wake[ch] <- struct{}{}:
	default:
	}
	return nil
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
			c.dgramBytes -= len(it.Msg)
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
	return transport.MessageStats{RTT: qs.SmoothedRTT, Channels: c.stats, PacketsLost: qs.PacketsLost}
}

// MaxUnreliableSize implements transport.MessageConn: the smaller of
// MessageLimits.MaxUnreliableSize and the largest datagram payload the
// path carries. The default limit fits every path QUIC works on, so it
// stays put; a larger configured limit may be reached once QUIC has
// discovered a larger path MTU (re-checked at most once a second).
func (c *Conn) MaxUnreliableSize() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.err == nil && c.maxDgram < c.lim.MaxUnreliableSize && now.Sub(c.probedAt) >= time.Second {
		c.probeLocked(now)
	}
	return c.maxDgram
}

// Close implements transport.MessageConn. It returns once the conn's
// goroutines have ended.
func (c *Conn) Close() error { return c.CloseWithReason("") }

// CloseWithReason implements transport.MessageConn. It returns once the
// conn's goroutines have ended.
func (c *Conn) CloseWithReason(reason string) error {
	c.closeWith(&transport.CloseError{Reason: transport.TruncateReason(reason)}, true)
	c.wg.Wait()
	<-c.done // closed by whichever call closed the conn first
	return nil
}

// Done implements transport.MessageConn.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err implements transport.MessageConn.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
