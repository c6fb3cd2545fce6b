package quic

// Closing a conn: the application error codes of CONNECTION_CLOSE, the
// translation of what ended a QUIC connection into transport.CloseError,
// and the one path every close takes (closeWith).

import (
	"context"
	"errors"
	"net"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
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
