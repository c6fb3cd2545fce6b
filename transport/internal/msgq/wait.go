package msgq

import "context"

// Signal is a wake-up channel of capacity 1. Wake never blocks; wakes that
// come before a waiter looks collapse into one token, so a waiter checks
// its condition again after every wake-up (Wait does).
type Signal chan struct{}

// NewSignal returns a Signal with no token.
func NewSignal() Signal { return make(Signal, 1) }

// Wake leaves a token, unless one is waiting already.
func (s Signal) Wake() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// Wait is the blocking loop of every WaitReceive of the conns and of
// MemoryListener.Accept: it
// calls poll, which reports whether what the caller waits for is ready or
// why it never will be (poll takes and releases the owner's lock), and
// returns nil when it is ready, poll's error when it has one (ready wins
// over an error), or ctx.Err() when ctx is done first. Between polls it
// sleeps until a token on wake or the close of done (a conn's or a
// listener's end), never polling in a busy loop while neither comes.
func Wait(ctx context.Context, wake <-chan struct{}, done <-chan struct{}, poll func() (ready bool, err error)) error {
	for {
		ready, err := poll()
		switch {
		case ready:
			return nil
		case err != nil:
			return err
		}
		select {
		case <-wake:
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
