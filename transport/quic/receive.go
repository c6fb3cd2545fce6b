package quic

// The receive path: reading framed messages from the ordered and the
// unidirectional streams and datagrams into the receive queue, within the
// conn's limits and its listener's shared budget, and Receive.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// connAllowance is what each conn may buffer without drawing on its
// listener's shared budget (Config.MaxBufferedBytes): the few messages of an
// honest client never depend on what other conns hold.
const connAllowance = 64 << 10

// chargeLocked brings the conn's draw on the shared budget in line with
// what it buffers: the capacity of the reliable messages waiting or being
// read, and the waiting datagrams, beyond connAllowance. It reports false,
// changing nothing, when the budget cannot cover an increase.
func (c *Conn) chargeLocked() bool {
	_, rel := c.rx.Usage()
	return c.draw.Set(rel + c.dgramBytes)
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
		reason = fmt.Sprintf("the server's receive buffers are full (%d bytes)", c.draw.Limit())
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

// readDatagrams queues the messages of each datagram (bundle.go); a
// datagram that does not parse is dropped whole and counted.
func (c *Conn) readDatagrams() {
	defer c.wg.Done()
	var st *transport.ChannelStats
	queue := func(m []byte) {
		c.dgramBytes += len(m)
		switch {
		case c.discarded:
			c.dgramBytes -= len(m)
		case len(m) > c.lim.MaxUnreliableSize:
			c.dgramBytes -= len(m)
			st.DroppedOversize++
		case !c.chargeLocked() || !c.rx.PushUnreliable(uint8(transport.Unreliable), m):
			c.dgramBytes -= len(m)
			c.chargeLocked()
			st.DroppedReceiveQueue++
		default:
			st.Received++
			st.ReceivedBytes += uint64(len(m))
		}
	}
	for {
		b, err := c.qc.ReceiveDatagram(c.ctx)
		if err != nil {
			return
		}
		c.mu.Lock()
		st = &c.stats[transport.Unreliable]
		if !splitBundle(b, queue) {
			st.DroppedMalformed++
		}
		c.mu.Unlock()
	}
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
