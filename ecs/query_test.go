package ecs_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
)

type qa struct{ V int64 }
type qb struct{ V int32 }
type qc struct{ V [3]float64 }
type qd struct{ V uint8 }

// reference lists, in the order a query must visit them, the entities that
// have every store of ss (the first store among the smallest drives) and pass
// the filters.
func reference(ss []ecs.Storage, with, without []ecs.Storage, ents func(ecs.Storage) []ecs.Entity) []ecs.Entity {
	drv := ss[0]
	for _, s := range ss[1:] {
		if s.Len() < drv.Len() {
			drv = s
		}
	}
	var out []ecs.Entity
next:
	for _, e := range ents(drv) {
		for _, s := range append(slices.Clone(ss), with...) {
			if !s.Has(e) {
				continue next
			}
		}
		for _, s := range without {
			if s.Has(e) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// entitiesOf returns a function listing the entities of s in dense order.
func entitiesOf[T any](s *ecs.Store[T]) func() []ecs.Entity {
	return func() []ecs.Entity {
		var out []ecs.Entity
		for e := range s.Values() {
			out = append(out, e)
		}
		return out
	}
}

// toggle sets e's T to v when set, else removes it.
func toggle[T any](s *ecs.Store[T], e ecs.Entity, set bool, v T) {
	if set {
		_ = s.Set(e, v)
	} else {
		_ = s.Remove(e)
	}
}

// Queries of every arity, with write and read access and with filters, visit
// exactly the matching entities in the documented order and hand out their
// values, through random structural changes that make the stores' layouts
// line up and diverge (the queries are reused, so remembered alignment is
// exercised), and Batches and Count agree with All; in both modes.
func TestQueriesMatchReference(t *testing.T) {
	bothModes(t, func(t *testing.T, w *ecs.World) {
		r := rand.New(rand.NewPCG(7, 8))
		sa, sb, sc, sd := ecs.Register[qa](w), ecs.Register[qb](w), ecs.Register[qc](w), ecs.Register[qd](w)
		byStore := map[ecs.Storage]func() []ecs.Entity{
			sa: entitiesOf(sa), sb: entitiesOf(sb), sc: entitiesOf(sc), sd: entitiesOf(sd),
		}
		ents := func(s ecs.Storage) []ecs.Entity { return byStore[s]() }
		q1 := ecs.NewQuery1(sa.Write())
		q2 := ecs.NewQuery2(sa.Write(), sb.Read())
		q2f := ecs.NewQuery2(sb.Read(), sa.Read()).With(sc).Without(sd)
		q3 := ecs.NewQuery3(sa.Read(), sb.Write(), sc.Write())
		q4 := ecs.NewQuery4(sa.Write(), sb.Read(), sc.Write(), sd.Read())
		var live []ecs.Entity
		for round := range 300 {
			// Random changes; every few rounds all stores get the same entities
			// in the same order, so the stores line up.
			if round%25 == 0 {
				for _, e := range live {
					_ = w.Despawn(e)
				}
				live = live[:0]
				for range r.IntN(40) {
					e := w.Spawn()
					live = append(live, e)
					_ = sa.Set(e, qa{int64(e)})
					_ = sb.Set(e, qb{int32(e)})
					_ = sc.Set(e, qc{[3]float64{float64(e)}})
					_ = sd.Set(e, qd{uint8(e)})
				}
			} else {
				for range r.IntN(4) {
					switch op := r.IntN(10); {
					case op < 3 || len(live) == 0:
						live = append(live, w.Spawn())
					case op < 4:
						i := r.IntN(len(live))
						_ = w.Despawn(live[i])
						live = slices.Delete(live, i, i+1)
					default:
						e := live[r.IntN(len(live))]
						set := r.IntN(2) == 0
						switch r.IntN(4) {
						case 0:
							toggle(sa, e, set, qa{int64(e)})
						case 1:
							toggle(sb, e, set, qb{int32(e)})
						case 2:
							toggle(sc, e, set, qc{[3]float64{float64(e)}})
						case 3:
							toggle(sd, e, set, qd{uint8(e)})
						}
					}
				}
			}
			check := func(name string, want, got, batches []ecs.Entity, count int) {
				t.Helper()
				if !slices.Equal(got, want) || !slices.Equal(batches, want) || count != len(want) {
					t.Fatalf("round %d %s: All %v, Batches %v, Count %d; want %v", round, name, got, batches, count, want)
				}
			}
			value := func(name string, e ecs.Entity, ok bool) {
				t.Helper()
				if !ok {
					t.Fatalf("round %d %s: wrong value for %v", round, name, e)
				}
			}
			var got, bat []ecs.Entity
			for e, a := range q1.All() {
				value("q1", e, a.V == int64(e))
				got = append(got, e)
			}
			for bt := range q1.Batches() {
				bat = append(bat, bt.Entities...)
			}
			check("q1", reference([]ecs.Storage{sa}, nil, nil, ents), got, bat, q1.Count())

			got, bat = nil, nil
			for e, row := range q2.All() {
				value("q2", e, row.A.V == int64(e) && row.B.V == int32(e))
				got = append(got, e)
			}
			for bt := range q2.Batches() {
				bat = append(bat, bt.Entities...)
			}
			check("q2", reference([]ecs.Storage{sa, sb}, nil, nil, ents), got, bat, q2.Count())

			got, bat = nil, nil
			for e, row := range q2f.All() {
				value("q2f", e, row.A.V == int32(e) && row.B.V == int64(e))
				got = append(got, e)
			}
			for bt := range q2f.Batches() {
				bat = append(bat, bt.Entities...)
			}
			check("q2f", reference([]ecs.Storage{sb, sa}, []ecs.Storage{sc}, []ecs.Storage{sd}, ents), got, bat, q2f.Count())

			got, bat = nil, nil
			for e, row := range q3.All() {
				value("q3", e, row.A.V == int64(e) && row.B.V == int32(e) && row.C.V[0] == float64(e))
				got = append(got, e)
			}
			for bt := range q3.Batches() {
				bat = append(bat, bt.Entities...)
			}
			check("q3", reference([]ecs.Storage{sa, sb, sc}, nil, nil, ents), got, bat, q3.Count())

			got, bat = nil, nil
			for e, row := range q4.All() {
				value("q4", e, row.A.V == int64(e) && row.B.V == int32(e) && row.C.V[0] == float64(e) && row.D.V == uint8(e))
				got = append(got, e)
			}
			for bt := range q4.Batches() {
				bat = append(bat, bt.Entities...)
				for i, e := range bt.Entities {
					value("q4 batch", e, bt.A[i].V == int64(e) && bt.B[i].V == int32(e) && bt.C[i].V[0] == float64(e) && bt.D[i].V == uint8(e))
				}
			}
			check("q4", reference([]ecs.Storage{sa, sb, sc, sd}, nil, nil, ents), got, bat, q4.Count())
		}
	})
}

// Write access stamps exactly the values handed out, also when the loop
// stops early; read access stamps nothing.
func TestQueryStampsVisitedValues(t *testing.T) {
	w := ecs.New()
	sa, sb := ecs.Register[qa](w), ecs.Register[qb](w)
	var es []ecs.Entity
	for i := range 10 {
		e := w.Spawn()
		es = append(es, e)
		_ = sa.Set(e, qa{int64(i)})
		_ = sb.Set(e, qb{int32(i)})
	}
	q := ecs.NewQuery2(sa.Write(), sb.Read())
	mark := w.Tick()
	w.AdvanceTick()
	n := 0
	for range q.All() {
		if n++; n == 4 {
			break
		}
	}
	for i, e := range es {
		ka, _ := sa.Ticks(e)
		kb, _ := sb.Ticks(e)
		if ka.ChangedSince(mark) != (i < 4) || kb.ChangedSince(mark) {
			t.Fatalf("entity %d: a changed %v, b changed %v", i, ka.ChangedSince(mark), kb.ChangedSince(mark))
		}
	}
	// The stores are unlocked after the break.
	if err := sa.Set(w.Spawn(), qa{}); err != nil {
		t.Fatal(err)
	}
}

// A query iterated inside its own loop (pairs) visits every pair and keeps
// its stores locked until the outer loop ends.
func TestNestedQuery(t *testing.T) {
	w := ecs.New()
	sa := ecs.Register[qa](w)
	for i := range 5 {
		_ = sa.Set(w.Spawn(), qa{int64(i)})
	}
	q := ecs.NewQuery1(sa.Read())
	pairs := 0
	for range q.All() {
		for range q.All() {
			pairs++
		}
		if err := sa.Set(w.Spawn(), qa{}); err == nil {
			t.Fatal("insert allowed while the outer loop runs")
		}
	}
	if pairs != 25 {
		t.Fatalf("%d pairs", pairs)
	}
	if err := sa.Set(w.Spawn(), qa{}); err != nil {
		t.Fatal(err)
	}
}

// Two stores of the same length whose first entities sit at the same
// positions but whose orders then differ: each row holds the entity's own
// values (an earlier scan took the second store for the driver and paired
// entities with other entities' values).
func TestQuerySameLengthDifferentOrder(t *testing.T) {
	w := ecs.New()
	sa, sb := ecs.Register[qa](w), ecs.Register[qb](w)
	e0, e1, e2 := w.Spawn(), w.Spawn(), w.Spawn()
	for _, e := range []ecs.Entity{e0, e1, e2} {
		_ = sa.Set(e, qa{int64(e.Index())})
	}
	for _, e := range []ecs.Entity{e0, e2, e1} {
		_ = sb.Set(e, qb{int32(e.Index())})
	}
	n := 0
	for e, row := range ecs.NewQuery2(sa.Read(), sb.Read()).All() {
		n++
		if row.A.V != int64(e.Index()) || row.B.V != int32(e.Index()) {
			t.Fatalf("%v: row %d %d", e, row.A.V, row.B.V)
		}
	}
	if n != 3 {
		t.Fatalf("visited %d", n)
	}
}

// Nested loops over one query with read access, over more entities than a
// checked loop copies at a time, in both modes: each loop reads its own
// entity's values (every running checked loop has its own copy buffer), and
// reading marks nothing.
func TestNestedReadQueryAcrossChunks(t *testing.T) {
	bothModes(t, func(t *testing.T, w *ecs.World) {
		sa, sb := ecs.Register[qa](w), ecs.Register[qb](w)
		const n = 700
		var es []ecs.Entity
		for i := range n {
			e := w.Spawn()
			es = append(es, e)
			_ = sa.Set(e, qa{int64(i)})
			_ = sb.Set(e, qb{int32(-i)})
		}
		q := ecs.NewQuery2(sa.Read(), sb.Read())
		mark := w.Tick()
		w.AdvanceTick()
		outer, inner := 0, 0
		for e, r := range q.All() {
			if r.A.V != int64(outer) || r.B.V != int32(-outer) {
				t.Fatalf("outer entity %v (#%d) reads %d, %d", e, outer, r.A.V, r.B.V)
			}
			if outer%97 == 0 {
				k := 0
				for _, ri := range q.All() {
					if ri.A.V != int64(k) || ri.B.V != int32(-k) {
						t.Fatalf("inner #%d reads %d, %d", k, ri.A.V, ri.B.V)
					}
					k++
					inner++
				}
			}
			outer++
		}
		if outer != n || inner != n*((n+96)/97) {
			t.Fatalf("visited %d outer, %d inner", outer, inner)
		}
		for i, e := range es {
			ka, _ := sa.Ticks(e)
			kb, _ := sb.Ticks(e)
			if ka.ChangedSince(mark) || kb.ChangedSince(mark) {
				t.Fatalf("entity %d: changed %v %v after reading", i, ka.ChangedSince(mark), kb.ChangedSince(mark))
			}
		}
	})
}

// bothModes runs f on a fresh World with checked mode off and on.
func bothModes(t *testing.T, f func(t *testing.T, w *ecs.World)) {
	for _, checks := range []bool{false, true} {
		t.Run(fmt.Sprintf("checks=%v", checks), func(t *testing.T) {
			w := ecs.New()
			w.SetChecks(checks)
			f(t, w)
		})
	}
}

// A loop that breaks marks exactly the values it visited, for each write
// access, whether it breaks early or after many chunks, at an odd or an even
// position (loops with one write access go two entities at a time), in
// queries with one write access and with two.
func TestQueryBreakMarksVisitedAcrossChunks(t *testing.T) {
	for _, stop := range []int{1, 2, 3, 613, 614, 1000} {
		for _, twoWrites := range []bool{false, true} {
			w := ecs.New()
			sa, sb, sc := ecs.Register[qa](w), ecs.Register[qb](w), ecs.Register[qc](w)
			const n = 1000
			var es []ecs.Entity
			for i := range n {
				e := w.Spawn()
				es = append(es, e)
				_ = sa.Set(e, qa{int64(i)})
				_ = sb.Set(e, qb{int32(i)})
				_ = sc.Set(e, qc{[3]float64{float64(i)}})
			}
			mark := w.Tick()
			w.AdvanceTick()
			k := 0
			if twoWrites {
				for _, r := range ecs.NewQuery3(sa.Read(), sb.Write(), sc.Write()).All() {
					r.B.V++
					if k++; k == stop {
						break
					}
				}
			} else {
				for _, r := range ecs.NewQuery3(sa.Read(), sb.Write(), sc.Read()).All() {
					r.B.V++
					if k++; k == stop {
						break
					}
				}
			}
			for i, e := range es {
				ka, _ := sa.Ticks(e)
				kb, _ := sb.Ticks(e)
				kc, _ := sc.Ticks(e)
				b, _ := sb.Get(e)
				visited := i < stop
				if ka.ChangedSince(mark) || kb.ChangedSince(mark) != visited || kc.ChangedSince(mark) != (visited && twoWrites) || (b.V == int32(i+1)) != visited {
					t.Fatalf("stop %d, two writes %v, entity %d: a %v b %v c %v value %d", stop, twoWrites, i, ka.ChangedSince(mark), kb.ChangedSince(mark), kc.ChangedSince(mark), b.V)
				}
			}
		}
	}
}

// Batches and All over one query, one after the other and nested, with
// runs of every length: each sees its own entities' values.
func TestBatchesThenAllReadCopies(t *testing.T) {
	bothModes(t, func(t *testing.T, w *ecs.World) {
		sa := ecs.Register[qa](w)
		const n = 1500
		for i := range n {
			_ = sa.Set(w.Spawn(), qa{int64(i)})
		}
		q := ecs.NewQuery1(sa.Read())
		for range 2 {
			k := 0
			for bt := range q.Batches() {
				for _, v := range bt.A {
					if v.V != int64(k) {
						t.Fatalf("batch value %d at %d", v.V, k)
					}
					k++
				}
				j := 0
				for _, r := range q.All() {
					if r.V != int64(j) {
						t.Fatalf("nested all value %d at %d", r.V, j)
					}
					j++
				}
			}
			j := 0
			for _, r := range q.All() {
				if r.V != int64(j) {
					t.Fatalf("all value %d at %d", r.V, j)
				}
				j++
			}
			if k != n || j != n {
				t.Fatalf("visited %d, %d", k, j)
			}
		}
	})
}

// Two queries built from one read Access, nested: each loop copies into a
// buffer of its own.
func TestQueriesSharingAReadAccess(t *testing.T) {
	bothModes(t, func(t *testing.T, w *ecs.World) {
		sa, sb := ecs.Register[qa](w), ecs.Register[qb](w)
		const n = 600
		for i := range n {
			e := w.Spawn()
			_ = sa.Set(e, qa{int64(i)})
			_ = sb.Set(e, qb{int32(i)})
		}
		ra := sa.Read()
		q1, q2 := ecs.NewQuery1(ra), ecs.NewQuery2(ra, sb.Read())
		k := 0
		for _, a := range q1.All() {
			if a.V != int64(k) {
				t.Fatalf("outer reads %d at %d", a.V, k)
			}
			if k%200 == 0 {
				j := 0
				for _, r := range q2.All() {
					if r.A.V != int64(j) || r.B.V != int32(j) {
						t.Fatalf("inner reads %d, %d at %d", r.A.V, r.B.V, j)
					}
					j++
				}
			}
			k++
		}
		if k != n {
			t.Fatalf("visited %d", k)
		}
	})
}

// writeThroughRead runs loop on a World in checked mode and returns what it
// panicked with.
func writeThroughRead(t *testing.T, loop func()) error {
	t.Helper()
	var got any
	func() {
		defer func() { got = recover() }()
		loop()
	}()
	err, ok := got.(error)
	if !ok || !errors.Is(err, ecs.ErrWriteThroughRead) {
		t.Fatalf("loop panicked with %v, want ErrWriteThroughRead", got)
	}
	return err
}

// In checked mode a write through a Read pointer or a Read batch slice
// panics with ErrWriteThroughRead naming the type and the entity when the
// loop ends or breaks (after unlocking the stores), whether the write was
// found in a later chunk or at the end, and the write does not reach the
// World; writes the game is allowed to make while a loop reads
// (Set of an existing value, another query's write access) are not reported.
func TestChecksCatchWriteThroughRead(t *testing.T) {
	w := ecs.New()
	w.SetChecks(true)
	sa, sb := ecs.Register[qa](w), ecs.Register[qb](w)
	const n = 700
	var es []ecs.Entity
	for i := range n {
		e := w.Spawn()
		es = append(es, e)
		_ = sa.Set(e, qa{int64(i)})
		_ = sb.Set(e, qb{int32(i)})
	}
	q := ecs.NewQuery2(sa.Write(), sb.Read())
	unchanged := func() {
		t.Helper()
		for i, e := range es {
			if v, _ := sb.Get(e); v.V != int32(i) {
				t.Fatalf("entity %d: the write through Read reached the World (%d)", i, v.V)
			}
		}
	}
	check := func(name string, victim int, loop func()) {
		t.Helper()
		err := writeThroughRead(t, loop)
		msg := err.Error()
		if !strings.Contains(msg, "qb") || !strings.Contains(msg, es[victim].String()) {
			t.Fatalf("%s: %q does not name qb and %v", name, msg, es[victim])
		}
		unchanged()
	}

	check("next chunk", 300, func() {
		k := 0
		for _, r := range q.All() {
			if k == 300 {
				r.B.V = -1
			}
			k++
		}
	})
	check("end of loop", n-1, func() {
		for e, r := range q.All() {
			if e == es[n-1] {
				r.B.V++
			}
		}
	})
	check("break", 5, func() {
		for e, r := range q.All() {
			if e == es[5] {
				r.B.V = 7
				break
			}
		}
	})
	// Loops unlock their stores before they panic.
	if err := sb.Set(w.Spawn(), qb{}); err != nil {
		t.Fatalf("store still locked after a checked loop ended: %v", err)
	}
	_ = sb.Remove(es[0]) // keep the entity set as it was
	_ = sb.Set(es[0], qb{0})
	check("batches", 400, func() {
		for bt := range ecs.NewQuery1(sb.Read()).Batches() {
			for j, e := range bt.Entities {
				if e == es[400] {
					bt.A[j].V = 1
				}
			}
		}
	})

	// Allowed writes while a checked loop reads: none is reported.
	other := ecs.NewQuery1(sb.Write())
	k := 0
	for e, r := range q.All() {
		if r.B.V != int32(k) {
			t.Fatalf("entity %v reads %d, want %d", e, r.B.V, k)
		}
		_ = sb.Set(es[(k+1)%n], qb{int32((k + 1) % n)}) // an existing value: allowed while locked
		if k == 10 {
			for _, v := range other.All() {
				v.V += 0
			}
		}
		k++
	}
	if r, ok := q.Get(es[3]); !ok || r.B.V != 3 {
		t.Fatal("Get")
	} else {
		r.B.V = 100 // a copy in checked mode
	}
	unchanged()
}
