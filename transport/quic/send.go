package quic

// The send path: Send and its queues, the writers that hand each
// channel's messages to QUIC, and the path's datagram size limit.

import (
	"errors"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
)

// probeSize is larger than any QUIC packet quic-go builds (1452 bytes at
// most), so a datagram of this size is always refused with a
// DatagramTooLargeError that tells the current limit.
const probeSize = 2048

// probeLocked asks quic-go for the largest datagram payload the path
// carries now: a message may take all of it but the count byte of the
// datagram's framing (bundle.go).
func (c *Conn) probeLocked(now time.Time) {
	c.probedAt = now
	err := c.qc.SendDatagram(make([]byte, probeSize))
	var tl *quicgo.DatagramTooLargeError
	if errors.As(err, &tl) {
		c.setPathLocked(int(tl.MaxDatagramPayloadSize))
	}
}

// setPathLocked records the path's datagram payload limit.
func (c *Conn) setPathLocked(path int) {
	c.pathDgram = max(path, 0)
	c.maxDgram = min(c.lim.MaxUnreliableSize, max(c.pathDgram-1, 0))
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

// writeDatagrams hands the unreliable messages to QUIC, packing those
// queued together into as few datagrams as the path carries.
func (c *Conn) writeDatagrams() {
	defer c.wg.Done()
	var msgs [][]byte
	var buf []byte
	for {
		msg, ok := c.next(transport.Unreliable)
		if !ok {
			return
		}
		c.mu.Lock()
		msgs = append(msgs[:0], msg)
		for len(msgs) < 4*maxBundle {
			m, ok := c.sendQ[transport.Unreliable].Pop()
			if !ok {
				break
			}
			msgs = append(msgs, m)
		}
		path := c.pathDgram
		c.mu.Unlock()
		for rest := msgs; len(rest) > 0; {
			// The longest run of messages that fits one datagram (a
			// message alone always does: Send checked it): the count
			// byte, and a length prefix for all but the run's last.
			n, size := 1, 1+len(rest[0])
			for n < min(len(rest), maxBundle) {
				grown := size + uvarintLen(len(rest[n-1])) + len(rest[n])
				if grown > path {
					break
				}
				n, size = n+1, grown
			}
			buf = appendBundle(buf[:0], rest[:n])
			err := c.qc.SendDatagram(buf)
			var tl *quicgo.DatagramTooLargeError
			switch {
			case errors.As(err, &tl):
				// The path shrank since Send checked the size.
				c.mu.Lock()
				c.stats[transport.Unreliable].DroppedOversize += uint64(n)
				c.setPathLocked(int(tl.MaxDatagramPayloadSize))
				path = c.pathDgram
				c.mu.Unlock()
			case err != nil:
				return // the conn is ending
			}
			rest = rest[n:]
		}
		clear(msgs) // the sent messages' buffers are garbage
	}
}

// Hold implements transport.Batcher: until Flush, Send queues without
// waking the writers.
func (c *Conn) Hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// Flush implements transport.Batcher: the writers take what Send queued,
// the unreliable messages packed together into as few datagrams as fit.
func (c *Conn) Flush() {
	c.mu.Lock()
	c.held = false
	c.mu.Unlock()
	for ch := range c.wake {
		select {
		case c.wake[ch] <- struct{}{}:
		default:
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
	if !c.held {
		select {
		case c.wake[ch] <- struct{}{}:
		default:
		}
	}
	return nil
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
