package msgq

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestWaitWakesOnSignal: a waiter sleeps until a token arrives, polls once
// per wake-up (never in a busy loop) and returns when poll is ready.
func TestWaitWakesOnSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		queued, polls := 0, 0
		wake, done := NewSignal(), make(chan struct{})
		result := make(chan error, 1)
		go func() {
			result <- Wait(t.Context(), wake, done, func() (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				polls++
				return queued > 0, nil
			})
		}()
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		if polls != 1 {
			t.Fatalf("%d polls before any wake-up, want 1", polls)
		}
		mu.Unlock()

		wake.Wake() // a spurious wake: nothing queued
		synctest.Wait()
		mu.Lock()
		queued = 1
		mu.Unlock()
		wake.Wake()
		wake.Wake() // collapses into the pending token
		if err := <-result; err != nil {
			t.Fatalf("Wait = %v, want nil", err)
		}
		if polls != 3 {
			t.Fatalf("%d polls, want 3 (start, spurious wake, real wake)", polls)
		}
	})
}

// TestWaitEnds: Wait returns poll's error (after done is closed, the
// owner's poll reports it), prefers ready over an error, and returns
// ctx.Err() when the context ends first.
func TestWaitEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errClosed := errors.New("closed")
		var mu sync.Mutex
		closed := false
		wake, done := NewSignal(), make(chan struct{})
		result := make(chan error, 1)
		go func() {
			result <- Wait(t.Context(), wake, done, func() (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				if closed {
					return false, errClosed
				}
				return false, nil
			})
		}()
		synctest.Wait()
		mu.Lock()
		closed = true
		mu.Unlock()
		close(done)
		if err := <-result; err != errClosed {
			t.Fatalf("Wait after done = %v, want the poll's error", err)
		}

		if err := Wait(t.Context(), wake, nil, func() (bool, error) { return true, errClosed }); err != nil {
			t.Fatalf("Wait with ready and an error = %v, want nil", err)
		}

		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := Wait(ctx, wake, nil, func() (bool, error) { return false, nil })
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 50*time.Millisecond {
			t.Fatalf("Wait = %v after %v, want the deadline after 50ms", err, time.Since(start))
		}
	})
}
