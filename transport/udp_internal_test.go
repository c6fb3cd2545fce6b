package transport

import (
	"context"
	"testing"
	"time"
)

// readerStopped reports whether c's reader goroutine exits within a bound.
func readerStopped(c *UDPConn) bool {
	select {
	case <-c.done:
		return true
	case <-time.After(10 * time.Second): // failure bound only
		return false
	}
}

func TestUDPCloseStopsReader(t *testing.T) {
	c, err := ListenUDP(t.Context(), "127.0.0.1:0", UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
		t.Fatal("reader goroutine exited before Close")
	default:
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waits for the reader, so it must already be gone.
	select {
	case <-c.done:
	default:
		t.Fatal("reader goroutine still running after Close returned")
	}
}

func TestUDPContextCancelStopsReader(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	c, err := ListenUDP(ctx, "127.0.0.1:0", UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if !readerStopped(c) {
		t.Fatal("reader goroutine still running 10s after the context was cancelled")
	}
	if err := c.Send(c.LocalAddr(), []byte("x")); err != ErrClosed {
		t.Fatalf("Send after cancel = %v, want ErrClosed", err)
	}
}
