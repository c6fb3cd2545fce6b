package timeq

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type item struct {
	at  time.Duration
	idx int // push order
}

// TestOrder: values come out by due time, ties in push order, and only
// once due; checked against a sort over random pushes and pops.
func TestOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := New[item](func() {})
	var want []item
	var got []item
	pushed := 0
	now := time.Duration(0)
	for range 2000 {
		if r.IntN(3) > 0 {
			at := now + time.Duration(r.IntN(20))*time.Millisecond // many ties
			q.Push(at, item{at, pushed})
			want = append(want, item{at, pushed})
			pushed++
			continue
		}
		now += time.Duration(r.IntN(10)) * time.Millisecond
		for {
			v, at, ok := q.PopDue(now)
			if !ok {
				break
			}
			if at != v.at || at > now {
				t.Fatalf("popped %v due at %v at time %v", v, at, now)
			}
			got = append(got, v)
		}
	}
	for {
		v, _, ok := q.PopDue(1 << 62)
		if !ok {
			break
		}
		got = append(got, v)
	}
	// Every push is due no earlier than the pops before it, so the values
	// come out exactly in (time, push order).
	slices.SortStableFunc(want, func(a, b item) int { return int(a.at - b.at) })
	if !slices.Equal(got, want) || q.Len() != 0 {
		t.Fatalf("popped %d values in a different order than %d pushed (%d left)", len(got), len(want), q.Len())
	}
}

// TestPopDueWithoutInterleaving: pushed all at once, values come out in
// exactly the sorted (time, push order) sequence.
func TestPopDueWithoutInterleaving(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	q := New[item](func() {})
	var want []item
	for i := range 500 {
		at := time.Duration(r.IntN(50))
		q.Push(at, item{at, i})
		want = append(want, item{at, i})
	}
	slices.SortStableFunc(want, func(a, b item) int { return int(a.at - b.at) })
	if _, _, ok := q.PopDue(-1); ok {
		t.Fatal("a value due at 0 popped at -1")
	}
	for i, w := range want {
		v, _, ok := q.PopDue(1 << 62)
		if !ok || v != w {
			t.Fatalf("pop %d = %v, %v; want %v", i, v, ok, w)
		}
	}
}

// TestTimerFiresAtEarliest: the timer wakes the owner at the earliest due
// time in virtual time, re-arming earlier for an earlier push and not
// later for a later one; Stop drops everything and silences the timer.
func TestTimerFiresAtEarliest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var q Queue[int]
		var woke []time.Duration
		start := time.Now()
		q = New[int](func() {
			mu.Lock()
			defer mu.Unlock()
			q.Fired()
			woke = append(woke, time.Since(start))
			now := q.Now()
			for {
				if _, _, ok := q.PopDue(now); !ok {
					break
				}
			}
			q.Rearm(now)
		})
		mu.Lock()
		q.Push(50*time.Millisecond, 1)
		q.Rearm(q.Now())
		q.Push(80*time.Millisecond, 2) // later: the timer stays at 50
		q.Rearm(q.Now())
		q.Push(20*time.Millisecond, 3) // earlier: re-armed for 20
		q.Rearm(q.Now())
		mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		want := []time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 80 * time.Millisecond}
		if !slices.Equal(woke, want) || q.Len() != 0 {
			t.Errorf("woke at %v (%d left), want %v", woke, q.Len(), want)
		}
		q.Push(q.Now()+time.Millisecond, 4)
		q.Rearm(q.Now())
		q.Stop()
		mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(woke) != 3 || q.Len() != 0 {
			t.Errorf("after Stop: woke %v, %d waiting", woke, q.Len())
		}
	})
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	q := New[*int](func() {})
	v := new(int)
	for i := range 64 {
		q.Push(time.Duration(i), v)
	}
	for {
		if _, _, ok := q.PopDue(1 << 62); !ok {
			break
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range 64 {
			q.Push(time.Duration(64-i), v)
		}
		for {
			if _, _, ok := q.PopDue(1 << 62); !ok {
				break
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per 64 pushes and pops", allocs)
	}
}
