package predict_test

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

type word1 struct{ V int32 }
type word2 struct{ X, Y float64 }
type word3 struct{ X, Y, Z float64 }
type word3f struct{ X, Y, Z float32 }
type word5 struct{ A, B, C, D, E uint64 }

// A rollback stamps exactly the values whose bytes the restore changes,
// for every word size the restore handles: a value written since the
// restored tick with other bytes (here a direct write, which a rollback
// does not replay) gets its bytes back and a new change tick; a value
// written with the same bytes keeps its change tick, whether the values
// around it changed or not; unwritten values keep theirs. 200 entities
// span several of the restore's blocks of values.
func TestRollbackStampsOnlyChangedBytes(t *testing.T) {
	t.Run("1 word", func(t *testing.T) {
		checkStamps(t, func(i int) word1 { return word1{int32(i)} }, func(v word1) word1 { v.V++; return v })
	})
	t.Run("2 words", func(t *testing.T) {
		checkStamps(t, func(i int) word2 { return word2{float64(i), 1} }, func(v word2) word2 { v.Y++; return v })
	})
	t.Run("3 words", func(t *testing.T) {
		checkStamps(t, func(i int) word3 { return word3{float64(i), 1, 2} }, func(v word3) word3 { v.Z++; return v })
	})
	t.Run("3 4-byte words", func(t *testing.T) {
		checkStamps(t, func(i int) word3f { return word3f{float32(i), 1, 2} }, func(v word3f) word3f { v.Y++; return v })
	})
	t.Run("5 words", func(t *testing.T) {
		checkStamps(t, func(i int) word5 { return word5{A: uint64(i)} }, func(v word5) word5 { v.E++; return v })
	})
}

func checkStamps[T comparable](t *testing.T, val func(int) T, other func(T) T) {
	t.Helper()
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	c, err := predict.Register[T](tl)
	if err != nil {
		t.Fatal(err)
	}
	ents := make([]ecs.Entity, 200)
	for i := range ents {
		ents[i] = w.Spawn()
		if err := c.Insert(ents[i], 0, val(i)); err != nil {
			t.Fatal(err)
		}
	}
	noop := func(tick.Tick) {}
	for range 6 {
		tl.Step(noop)
	}
	changedIdx, sameNear, sameFar := 70, 71, 150 // 71 shares 70's block of 64 values
	s := c.Store()
	_ = s.Set(ents[changedIdx], other(val(changedIdx)))
	_ = s.Set(ents[sameNear], val(sameNear))
	_ = s.Set(ents[sameFar], val(sameFar))
	w.AdvanceTick() // later stamps are distinguishable from these writes
	before := make([]ecs.Ticks, len(ents))
	for i, e := range ents {
		before[i], _ = s.Ticks(e)
	}
	tl.Request(3)
	tl.Step(noop)
	if tl.Stats().Rollbacks != 1 {
		t.Fatalf("%d rollbacks, want 1", tl.Stats().Rollbacks)
	}
	for i, e := range ents {
		v, _ := s.Get(e)
		k, _ := s.Ticks(e)
		if v != val(i) {
			t.Errorf("entity %d: %+v after the rollback, want %+v", i, v, val(i))
		}
		if i == changedIdx {
			if k.Changed <= before[i].Changed {
				t.Errorf("entity %d: the restore changed its bytes without stamping it (%d, was %d)", i, k.Changed, before[i].Changed)
			}
			continue
		}
		if k != before[i] {
			t.Errorf("entity %d: stamped %+v by the rollback, was %+v", i, k, before[i])
		}
	}
}

// After a rollback, the history of every re-simulated tick holds the
// re-simulated state, whether the re-simulation changed every value (a
// mispredicted wind moves all 2,000 entities) or one entity among many.
func TestResimulatedHistory(t *testing.T) {
	type wind struct{ V float64 }
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	pos, _ := predict.Register[word3](tl)
	wnd, _ := predict.Register[wind](tl)
	air := w.Spawn()
	_ = wnd.Insert(air, 0, wind{1})
	ents := make([]ecs.Entity, 2000) // 48,000 bytes of positions
	for i := range ents {
		ents[i] = w.Spawn()
		_ = pos.Insert(ents[i], 0, word3{X: float64(i)})
	}
	sim := func(tick.Tick) {
		v, _ := wnd.Store().Get(air)
		for _, p := range pos.Store().All() {
			p.X += v.V
		}
	}
	for range 12 {
		tl.Step(sim)
	}
	// x is the X of entity i at the end of tick t once the server's wind
	// of 2 from tick 5 on is known, plus bump from tick 10 for entity 1000
	// once its server position is known.
	bump := 0.0
	x := func(i int, t tick.Tick) float64 {
		v := float64(i) + float64(min(t, 5)) + 2*float64(max(t-5, 0))
		if i == 1000 && t >= 10 {
			v += bump
		}
		return v
	}
	check := func(from tick.Tick) {
		t.Helper()
		for tk := from; tk < tl.Now(); tk++ {
			for i, e := range ents {
				if v, ok := pos.At(e, tk); !ok || v.X != x(i, tk) {
					t.Fatalf("tick %d entity %d: history %v %v, want %v", tk, i, v.X, ok, x(i, tk))
				}
			}
		}
		for i, e := range ents {
			if v, _ := pos.Store().Get(e); v.X != x(i, tl.Now()) {
				t.Fatalf("now %d entity %d: %v, want %v", tl.Now(), i, v.X, x(i, tl.Now()))
			}
		}
	}
	_ = wnd.Authoritative(air, 5, wind{2})
	_ = tl.Complete(5)
	tl.Step(sim)
	check(5)
	bump = 100
	_ = pos.Authoritative(ents[1000], 10, word3{X: x(1000, 10)})
	_ = tl.Complete(10)
	tl.Step(sim)
	check(5)
	if st := tl.Stats(); st.Rollbacks != 2 {
		t.Fatalf("%d rollbacks, want 2", st.Rollbacks)
	}
}
