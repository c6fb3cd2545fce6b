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

type resSame struct{ V int64 }
type resChanged struct{ V int64 }
type resRemoved struct{ V int64 }
type resAdded struct{ V int64 }

// A load brings every resource back to its saved presence and value and
// stamps exactly the ones whose value it changes: a resource written with
// the same bytes keeps its ticks, a changed one is reverted and marked as
// written, one removed since the save comes back marked as added, one added
// since is removed, and a clone-strategy resource written since the save is
// reverted and marked.
func TestLoadRestoresAndStampsResources(t *testing.T) {
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	must(t, snapshot.CopyResource[resSame](reg))
	must(t, snapshot.CopyResource[resChanged](reg))
	must(t, snapshot.CopyResource[resRemoved](reg))
	must(t, snapshot.CopyResource[resAdded](reg))
	must(t, snapshot.CloneResource[Log](reg))
	same, changed := ecs.ResourceOf[resSame](w), ecs.ResourceOf[resChanged](w)
	removed, added := ecs.ResourceOf[resRemoved](w), ecs.ResourceOf[resAdded](w)
	log := ecs.ResourceOf[Log](w)
	same.Set(resSame{1})
	changed.Set(resChanged{2})
	removed.Set(resRemoved{3})
	log.Set(Log{Lines: []string{"a"}})
	ring, _ := snapshot.NewRing(reg, 2)
	must(t, ring.Save(0))

	same.Set(resSame{1})
	changed.Set(resChanged{20})
	removed.Remove()
	added.Set(resAdded{4})
	log.Ptr().Lines[0] = "b" // written in place: the saved clone is untouched
	mark := w.Tick()
	w.AdvanceTick()
	must(t, ring.Load(0))

	if v, ok := same.Get(); !ok || v.V != 1 || same.Ticks().ChangedSince(mark) {
		t.Errorf("same-bytes resource: %v %v, changed since load mark %v; want {1} true false", v, ok, same.Ticks().ChangedSince(mark))
	}
	if v, ok := changed.Get(); !ok || v.V != 2 || !changed.Ticks().ChangedSince(mark) {
		t.Errorf("changed resource: %v %v, changed since load mark %v; want {2} true true", v, ok, changed.Ticks().ChangedSince(mark))
	}
	if v, ok := removed.Get(); !ok || v.V != 3 || !removed.Ticks().AddedSince(mark) || !removed.Ticks().ChangedSince(mark) {
		t.Errorf("removed resource: %v %v, ticks %+v; want {3} true, added and changed after %d", v, ok, removed.Ticks(), mark)
	}
	if added.Present() {
		t.Errorf("resource added after the save is present after the load")
	}
	if v, ok := log.Get(); !ok || !slices.Equal(v.Lines, []string{"a"}) || !log.Ticks().ChangedSince(mark) {
		t.Errorf("clone resource: %v %v, changed since load mark %v; want [a] true true", v, ok, log.Ticks().ChangedSince(mark))
	}
	// The restored clone does not share memory with the saved frame.
	log.Ptr().Lines[0] = "c"
	must(t, ring.Load(0))
	if v, _ := log.Get(); v.Lines[0] != "a" {
		t.Errorf("second load of the clone resource = %v, want [a]", v.Lines)
	}
}
