package transport

import (
	"bytes"
	"net/netip"
	"testing"
)

// TestRxQueueBoundAndReuse: the receive queue holds at most its capacity
// (drops counted), hands datagrams out in order, keeps the payload pop
// returned intact while later datagrams are pushed, and recycles buffers:
// no more than capacity+1 of them over its life, none in steady state.
func TestRxQueueBoundAndReuse(t *testing.T) {
	const capacity = 4
	q := newRxQueue(capacity)
	from := netip.MustParseAddrPort("10.0.0.1:1")
	pkt := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 1+i%7) }

	for i := range capacity + 2 {
		ok := q.push(from, pkt(i))
		if ok != (i < capacity) {
			t.Fatalf("push %d = %v with %d queued", i, ok, q.len())
		}
	}
	var st Stats
	q.addStats(&st)
	if st.DroppedQueueFull != 2 || st.PacketsReceived != capacity {
		t.Fatalf("stats %+v, want 2 dropped, %d received", st, capacity)
	}

	bufs := map[*byte]bool{}
	next := 0 // next datagram expected from pop
	sent := capacity
	for round := range 50 {
		_, p, ok := q.pop()
		if !ok || !bytes.Equal(p, pkt(next)) {
			t.Fatalf("round %d: pop = %v, %x; want %x", round, ok, p, pkt(next))
		}
		bufs[&p[:1][0]] = true
		// Refill while p is held: p must not change.
		for q.len() < capacity {
			q.push(from, pkt(sent))
			sent++
		}
		if !bytes.Equal(p, pkt(next)) {
			t.Fatalf("round %d: the payload pop returned changed to %x", round, p)
		}
		next++
	}
	if len(bufs) > capacity+1 {
		t.Fatalf("%d buffers used, want at most %d", len(bufs), capacity+1)
	}
	one := pkt(1)
	allocs := testing.AllocsPerRun(100, func() {
		q.pop()
		q.push(from, one)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per pop and push in steady state", allocs)
	}

	q.clear()
	if _, _, ok := q.pop(); ok || q.len() != 0 {
		t.Fatal("datagrams left after clear")
	}
}
