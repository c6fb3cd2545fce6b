package msgq

import (
	"bytes"
	"testing"
)

func TestFIFOGrowsAndKeepsOrder(t *testing.T) {
	var f FIFO[int]
	next, want := 0, 0
	// Interleave pushes and pops so that the ring wraps while it grows.
	for round := range 6 {
		for range 3 + round*7 {
			f.Push(next)
			next++
		}
		for f.Len() > round {
			v, ok := f.Pop()
			if !ok || v != want {
				t.Fatalf("Pop = %d, %v; want %d", v, ok, want)
			}
			want++
		}
	}
	for f.Len() > 0 {
		if v, _ := f.Pop(); v != want {
			t.Fatalf("Pop = %d; want %d", v, want)
		}
		want++
	}
	if _, ok := f.Pop(); ok || want != next {
		t.Fatalf("after draining: Pop ok = %v, popped %d of %d", ok, want, next)
	}
}

func TestQueueCaps(t *testing.T) {
	q := NewQueue(2, 10, 1)
	if !q.PushReliable(0, []byte("abcd")) || !q.PushUnreliable(2, []byte("u")) {
		t.Fatal("first pushes refused")
	}
	if q.PushUnreliable(2, []byte("v")) {
		t.Fatal("unreliable cap 1 exceeded")
	}
	if q.PushReliable(1, []byte("0123456")) {
		t.Fatal("reliable byte cap 10 exceeded")
	}
	if !q.Reserve(6) {
		t.Fatal("Reserve(6) refused with 4 of 10 bytes used")
	}
	if q.Reserve(0) {
		t.Fatal("reliable message cap 2 exceeded")
	}
	q.PushReserved(1, []byte("012345"))
	if m, b := q.Usage(); m != 2 || b != 10 {
		t.Fatalf("Usage = %d, %d; want 2, 10", m, b)
	}
	want := []Item{{0, true, []byte("abcd")}, {2, false, []byte("u")}, {1, true, []byte("012345")}}
	for _, w := range want {
		it, ok := q.Pop()
		if !ok || it.Ch != w.Ch || it.Reliable != w.Reliable || !bytes.Equal(it.Msg, w.Msg) {
			t.Fatalf("Pop = %+v, %v; want %+v", it, ok, w)
		}
	}
	if m, b := q.Usage(); m != 0 || b != 0 || q.Len() != 0 {
		t.Fatalf("after draining: usage %d, %d, len %d", m, b, q.Len())
	}
	select {
	case <-q.Notify():
	default:
		t.Fatal("no notification after pushes")
	}
	q.PushUnreliable(2, nil)
	q.Clear()
	if q.Len() != 0 || !q.PushUnreliable(2, nil) {
		t.Fatal("Clear did not free the unreliable slot")
	}
}

func TestQueueGrow(t *testing.T) {
	q := NewQueue(4, 100, 1)
	if !q.Reserve(0) || !q.Grow(60) || q.Grow(41) || !q.Grow(40) {
		t.Fatal("Grow within the byte cap refused, or beyond it accepted")
	}
	q.PushReserved(0, make([]byte, 100))
	if m, b := q.Usage(); m != 1 || b != 100 {
		t.Fatalf("Usage = %d, %d; want 1, 100", m, b)
	}
	q.Pop()
	if m, b := q.Usage(); m != 0 || b != 0 {
		t.Fatalf("after Pop: usage %d, %d", m, b)
	}
}

// TestDraw: a conn's draw takes what it buffers beyond its allowance from
// the shared budget, refuses an increase the budget cannot cover (changing
// nothing), and gives everything back at Set(0); a draw on no budget never
// refuses.
func TestDraw(t *testing.T) {
	b := NewBudget(100)
	d1, d2 := NewDraw(b, 50), NewDraw(b, 50)
	if !d1.Set(40) || b.Used() != 0 {
		t.Fatalf("within the allowance: used %d", b.Used())
	}
	if !d1.Set(120) || b.Used() != 70 {
		t.Fatalf("70 beyond the allowance: used %d", b.Used())
	}
	if d2.Set(90) || b.Used() != 70 {
		t.Fatalf("40 more than the 30 left was taken: used %d", b.Used())
	}
	if !d2.Set(80) || b.Used() != 100 {
		t.Fatalf("the last 30: used %d", b.Used())
	}
	if !d1.Set(0) || !d2.Set(0) || b.Used() != 0 {
		t.Fatalf("after both gave back: used %d", b.Used())
	}
	var none Draw
	if !none.Set(1<<30) || none.Limit() != 0 {
		t.Fatal("a draw on no budget refused")
	}
}
