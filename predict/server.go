package predict

// ServerFrame: the server's frame of package doc's "The frame", composed
// from replicate.Server's two phases and an input.Buffer.

import (
	"fmt"

	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// ServerFrame runs an authoritative server's frame with the clients'
// inputs: the receive phase (replicate.Server.Receive and
// input.Buffer.ReceiveAt(F)), the simulation of tick F with each client's
// buffered input for F, then the forwarding of the inputs to the other
// clients, the input reports (input.Buffer.SendReports: how early each
// client's inputs arrive, which its tick sync steers by) and the send
// phase (Server.SendTick(F)). A ServerFrame is not
// safe for concurrent use.
type ServerFrame[T any] struct {
	srv *replicate.Server
	buf *input.Buffer[T]
	t   tick.Tick
	in  func(id replicate.ClientID) T
}

// NewServerFrame returns the frame of srv with the inputs of in.
func NewServerFrame[T any](srv *replicate.Server, in *input.Type[T]) *ServerFrame[T] {
	f := &ServerFrame[T]{srv: srv, buf: in.NewBuffer()}
	f.in = func(id replicate.ClientID) T {
		v, _ := f.buf.Input(id, f.t)
		return v
	}
	return f
}

// Frame runs the server frame of tick t (after the previous one). sim
// simulates t; input(id) is client id's input for t: the one received,
// or its last input repeated when t's is missing (input.Buffer.Input,
// which counts it). The game reads its other messages from the server's
// inboxes inside sim, and calls Buffer().Remove for a client that left.
// A tick not after the last one sent gives replicate.ErrTick and runs
// nothing. Otherwise the error is SendTick's, or Forward's when SendTick
// succeeded.
func (f *ServerFrame[T]) Frame(t tick.Tick, sim func(t tick.Tick, input func(id replicate.ClientID) T)) error {
	if last := f.srv.Tick(); !t.After(last) {
		return fmt.Errorf("%w: tick %v, last sent %v", replicate.ErrTick, t, last)
	}
	f.srv.Receive()
	f.buf.ReceiveAt(f.srv, t)
	f.t = t
	sim(t, f.in)
	ferr := f.buf.Forward(f.srv)
	if err := f.buf.SendReports(f.srv); ferr == nil {
		ferr = err
	}
	if err := f.srv.SendTick(t); err != nil {
		return err
	}
	return ferr
}

// Buffer returns the input buffer (its Stats per client).
func (f *ServerFrame[T]) Buffer() *input.Buffer[T] { return f.buf }
