package websocket

// Closing a conn: the one path every close takes (closeWith), the
// translation of a WebSocket's end into transport.CloseError, and the
// closing handshake.

import (
	"context"
	"errors"
	"time"

	"github.com/coder/websocket"

	"github.com/rewindgo/rewind/transport"
)

// errStopped tells a reader that the conn is closing on its account.
var errStopped = errors.New("websocket: conn closed by reader")

// closeFrame encodes the close frame of cause err with reason.
func closeFrame(err error, reason string) []byte {
	return appendControl(nil, control{kind: kindClose, cause: causeOf(err), text: reason})
}

// closeWith closes the conn with cause cerr (unless it is closed already).
// frame, when not nil, is the close frame the writer sends before the
// WebSocket closing handshake (a local close); nil means the peer closed
// or the socket is gone. With discard, the receive queue is dropped.
func (c *Conn) closeWith(cerr *transport.CloseError, discard bool, frame []byte) {
	c.mu.Lock()
	if discard {
		c.discarded = true
		c.rx.Clear()
		c.unrelBytes = 0
		c.chargeLocked()
	}
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = cerr
	c.closing = frame
	c.ctrl.Clear()
	c.rel.Clear()
	c.unrel.Clear()
	c.relMsgs, c.relBytes = 0, 0
	// Whatever happens to the handshake, the socket is gone by then; it
	// also ends a write blocked on a socket that does not drain.
	c.killer = time.AfterFunc(c.cfg.CloseTimeout, func() { _ = c.ws.CloseNow() })
	c.mu.Unlock()

	c.cancel()
	c.signal()
	close(c.done)
	if c.ln != nil {
		c.ln.remove(c)
	}
	c.log.Debug("websocket: conn closed", "local", c.local, "remote", c.remote, "err", cerr)
}

// fail closes the conn because of something the peer did (or did not
// do), and tells the peer why.
func (c *Conn) fail(err error, reason string) {
	reason = transport.TruncateReason(reason)
	c.log.Debug("websocket: closing conn", "remote", c.remote, "err", err, "reason", reason)
	c.closeWith(&transport.CloseError{Reason: reason, Err: err}, false, closeFrame(err, reason))
}

// wsFailed handles the end of the WebSocket itself: the peer closed it
// without a close frame of ours (a browser tab closed: "going away"), or
// the TCP connection broke.
func (c *Conn) wsFailed(err error) {
	cerr := &transport.CloseError{Reason: transport.TruncateReason(err.Error())}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		cerr = &transport.CloseError{Remote: true, Reason: transport.TruncateReason(ce.Reason)}
		if cerr.Reason == "" {
			cerr.Reason = ce.Code.String()
		}
		if ce.Code == websocket.StatusMessageTooBig || ce.Code == websocket.StatusProtocolError {
			cerr.Err = transport.ErrProtocol
		}
	}
	c.closeWith(cerr, false, nil)
	_ = c.ws.CloseNow()
}

// finishClose, on the writer, sends a local close's frame and runs the
// WebSocket closing handshake (both bounded by Config.CloseTimeout).
func (c *Conn) finishClose(frame []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.CloseTimeout)
	err := c.ws.Write(ctx, websocket.MessageBinary, frame)
	cancel()
	if err == nil {
		_ = c.ws.Close(websocket.StatusNormalClosure, "")
	}
	_ = c.ws.CloseNow()
}

// Close implements transport.MessageConn. It returns once the conn's
// goroutines have ended: at most Config.CloseTimeout.
func (c *Conn) Close() error { return c.CloseWithReason("") }

// CloseWithReason implements transport.MessageConn: the reason travels
// in a close frame of this package ahead of the WebSocket close (whose
// own reason is limited to 123 bytes). It returns once the conn's
// goroutines have ended: at most Config.CloseTimeout.
func (c *Conn) CloseWithReason(reason string) error {
	reason = transport.TruncateReason(reason)
	c.closeWith(&transport.CloseError{Reason: reason}, true, closeFrame(nil, reason))
	c.wg.Wait()
	c.mu.Lock()
	if c.killer != nil {
		c.killer.Stop()
	}
	c.mu.Unlock()
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
