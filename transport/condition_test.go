package transport_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/transport"
)

// TestConditionedConn: datagrams sent through a ConditionedConn arrive after
// the link's latency (never before), the lost ones never, and the link's
// counters add up; Close drops what is still held back.
func TestConditionedConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := simPair(t, transport.PacketNetworkConfig{Seed: 1}) // a perfect network underneath
		c := transport.Condition(a, transport.ConditionConfig{Seed: 9,
			Link: transport.LinkConfig{Latency: 50 * time.Millisecond, Loss: 0.3}})
		const n = 200
		for i := range n {
			mustSend(t, c, addrB, seqPayload(i))
			time.Sleep(time.Millisecond)
			if i < 49 {
				if got := drain(b); len(got) != 0 {
					t.Fatalf("after %d ms: received %v before the 50 ms latency", i+1, got)
				}
			}
		}
		time.Sleep(60 * time.Millisecond)
		got := drain(b)
		st := c.LinkStats()
		t.Logf("received %d of %d, %+v", len(got), n, st)
		if st.Sent != n || st.Lost+st.Delivered != n || uint64(len(got)) != st.Delivered {
			t.Fatalf("received %d, stats %+v", len(got), st)
		}
		if st.Lost < n/5 || st.Lost > n*2/5 {
			t.Fatalf("%d of %d lost with loss 0.3", st.Lost, n)
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("reordered without jitter: %v", got)
			}
		}
		if _, _, ok := c.Receive(); ok {
			t.Fatal("a's conn received something")
		}

		// Held back when closed: dropped; Send then fails.
		mustSend(t, c, addrB, seqPayload(1000))
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if got := drain(b); len(got) != 0 {
			t.Fatalf("received %v sent before Close", got)
		}
		if err := c.Send(addrB, seqPayload(1)); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Send after Close: %v", err)
		}
		if err := c.Send(addrB, make([]byte, transport.MaxPacketSize+1)); !errors.Is(err, transport.ErrTooLarge) {
			t.Fatalf("oversize Send: %v", err)
		}
	})
}
