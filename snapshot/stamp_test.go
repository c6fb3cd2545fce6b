package snapshot_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/snapshot"
)

type odd [3]byte                        // byte compare path
type quad struct{ A, B int16 }          // 4-byte words
type wide struct{ A, B, C, D, E int64 } // 5 words

// A load marks as written exactly the values whose bytes it changes, for
// every value size, across compare blocks.
func TestLoadStampsExactlyChangedValues(t *testing.T) {
	t.Run("odd", func(t *testing.T) { testExactStamps(t, func(i int) odd { return odd{byte(i), 1, 2} }) })
	t.Run("quad", func(t *testing.T) { testExactStamps(t, func(i int) quad { return quad{int16(i), 7} }) })
	t.Run("wide", func(t *testing.T) { testExactStamps(t, func(i int) wide { return wide{E: int64(i)} }) })
	t.Run("pos", func(t *testing.T) { testExactStamps(t, func(i int) Pos { return Pos{Z: float64(i)} }) })
}

func testExactStamps[T any](t *testing.T, val func(int) T) {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	must(t, snapshot.Copy[T](reg))
	s := ecs.StoreOf[T](w)
	var es []ecs.Entity
	for i := range 200 {
		e := w.Spawn()
		must(t, s.Set(e, val(i)))
		es = append(es, e)
	}
	ring, _ := snapshot.NewRing(reg, 2)
	must(t, ring.Save(0))
	// Touch many values but change only three; one of them in a later block.
	for i, e := range es {
		if i%5 == 0 {
			*s.Ptr(e) = val(i) // written, same bytes
		}
	}
	changedIdx := []int{3, 64, 199}
	for _, i := range changedIdx {
		*s.Ptr(es[i]) = val(1000 + i)
	}
	mark := w.Tick()
	w.AdvanceTick()
	must(t, ring.Load(0))
	var got []int
	for i, e := range es {
		if k, _ := s.Ticks(e); k.ChangedSince(mark) {
			got = append(got, i)
		}
		if v, _ := s.Get(e); fmt.Sprint(v) != fmt.Sprint(val(i)) {
			t.Fatalf("value %d not restored: %v", i, v)
		}
	}
	if !slices.Equal(got, changedIdx) {
		t.Fatalf("load stamped %v, want %v", got, changedIdx)
	}
}
