package predict_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// Lightyear's prediction cases that need no inputs (reference section 6.3).

type Buff struct{ Level int32 }

// A component the simulation removed at tick 3 is back when a rollback
// restores tick 2, and the re-simulation removes it again.
func TestPredictedRemoveRestoredOnRollback(t *testing.T) {
	g := newGame(t, predict.Config{})
	buff, err := predict.Register[Buff](g.tl)
	if err != nil {
		t.Fatal(err)
	}
	e := g.spawn(10)
	g.must(buff.Insert(e, 0, Buff{1}))
	seen := false
	g.extra = func(tk tick.Tick) {
		if tk == 3 {
			if g.tl.InRollback() && buff.Store().Has(e) {
				seen = true
			}
			g.must(buff.Store().Remove(e))
		}
	}
	g.stepTo(5)
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if !seen {
		t.Fatal("Buff was not restored for the re-simulation of tick 3")
	}
	if _, ok := buff.At(e, 2); !ok || buff.Store().Has(e) {
		t.Fatalf("Buff at 2: %v, now: %v; want present, absent", ok, buff.Store().Has(e))
	}
}

// An entity the simulation despawned (marker) comes back for good when the
// re-simulation no longer kills it.
func TestPredictedDespawnRestoredOnRollback(t *testing.T) {
	g := newGame(t, predict.Config{})
	e := g.spawn(10)
	g.extra = func(tick.Tick) {
		if h, ok := g.hs.Get(e); ok && h <= 7 {
			g.must(g.tl.Despawn(e))
		}
	}
	g.stepTo(5)
	if g.hs.Has(e) || !g.tl.Despawned(e) {
		t.Fatal("the simulation's despawn did not take")
	}
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if !g.w.Alive(e) || g.tl.Despawned(e) || g.now(e) != 96 {
		t.Fatalf("alive %v marked %v health %d; want true false 96", g.w.Alive(e), g.tl.Despawned(e), g.now(e))
	}
	g.stepTo(30) // far past the window: the entity is not despawned later
	if !g.w.Alive(e) || g.now(e) != 72 {
		t.Fatalf("alive %v health %d at 30; want true 72", g.w.Alive(e), g.now(e))
	}
}

// A component the server inserted in the past appears on rollback.
func TestRemoteInsertAppliedOnRollback(t *testing.T) {
	g := newGame(t, predict.Config{})
	buff, _ := predict.Register[Buff](g.tl)
	e := g.spawn(10)
	g.stepTo(6)
	g.must(buff.Authoritative(e, 2, Buff{7}))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if v, ok := buff.At(e, 3); !ok || v.Level != 7 {
		t.Fatalf("Buff at 3 = %v %v, want {7} true", v, ok)
	}
	if v, ok := buff.Store().Get(e); !ok || v.Level != 7 {
		t.Fatalf("Buff now = %v %v, want {7} true", v, ok)
	}
}

// Several mismatches and requests in one receive phase: one rollback, from
// the earliest.
func TestEarliestMismatchWins(t *testing.T) {
	g := newGame(t, predict.Config{})
	a, b := g.spawn(10), g.spawn(20)
	g.stepTo(8)
	g.must(g.health.Authoritative(a, 6, 0))
	g.must(g.health.Authoritative(b, 3, 0))
	g.must(g.health.Authoritative(a, 5, 5)) // matches the prediction
	for _, tk := range []tick.Tick{6, 5, 3} {
		g.must(g.tl.Complete(tk))
	}
	g.tl.Request(7)
	g.tl.Step(g.sim)
	st := g.tl.Stats()
	if st.Rollbacks != 1 || st.TicksResimulated != 5 || st.Types[0].Mispredictions != 2 {
		t.Fatalf("rollbacks %d resimulated %d mispredictions %d; want 1, 5 (from 3 to 8), 2", st.Rollbacks, st.TicksResimulated, st.Types[0].Mispredictions)
	}
	if g.now(a) != -3 || g.now(b) != -6 {
		t.Fatalf("health now %d %d, want -3 -6", g.now(a), g.now(b))
	}
}

type Score struct{ Points int64 }

// Resources roll back: presence and value.
func TestResourceRollback(t *testing.T) {
	g := newGame(t, predict.Config{})
	score, err := predict.RegisterResource[Score](g.tl)
	if err != nil {
		t.Fatal(err)
	}
	g.must(score.Set(0, Score{0}))
	res := score.Resource()
	g.extra = func(tick.Tick) {
		if p := res.Ptr(); p != nil {
			p.Points += 10
		}
	}
	g.stepTo(6)
	if v, _ := res.Get(); v.Points != 60 {
		t.Fatalf("score at 6 = %d, want 60", v.Points)
	}
	g.must(score.Authoritative(2, Score{1000}))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if v, _ := res.Get(); v.Points != 1050 {
		t.Fatalf("score at 7 after the rollback = %d, want 1050", v.Points)
	}
	// The server had no score at 5: absent at 5, and the simulation cannot
	// add to an absent score, so it stays absent.
	g.must(score.AuthoritativeRemove(5))
	g.must(g.tl.Complete(5))
	g.tl.Step(g.sim)
	if res.Present() {
		t.Fatal("score present after an authoritative removal at 5")
	}
	if v, ok := score.At(4); !ok || v.Points != 1020 {
		t.Fatalf("score at 4 = %v %v, want 1020", v, ok)
	}
	// A removal from outside the simulation in the past is replayed.
	g.must(score.Set(g.tl.Now(), Score{5}))
	g.must(score.Remove(g.tl.Now() - 1))
	g.tl.Step(g.sim)
	if v, ok := res.Get(); !ok || v.Points != 15 {
		t.Fatalf("score = %v %v after a past removal and a set at Now, want 15", v, ok)
	}
	if g.tl.Stats().Types[2].Mispredictions != 2 {
		t.Fatalf("resource mispredictions = %d, want 2", g.tl.Stats().Types[2].Mispredictions)
	}
}

// Issue item 8: entities and components applied by replication (outside
// the predicted types) survive a prediction rollback, including entities
// spawned after the tick rolled back to and entities despawned since.
func TestReplicatedStructureSurvivesRollback(t *testing.T) {
	type Name struct{ ID int32 } // replicated, not predicted
	g := newGame(t, predict.Config{})
	names := ecs.Register[Name](g.w)
	e := g.spawn(10)
	g.stepTo(3)
	late := g.w.Spawn() // replication spawns an entity at 3
	g.must(names.Set(late, Name{7}))
	g.must(g.health.Insert(late, 3, 40))
	gone := g.spawn(30)
	g.stepTo(6)
	g.must(g.w.Despawn(gone)) // replication despawns one with history
	g.must(g.health.Authoritative(e, 2, 100))
	g.must(g.tl.Complete(2))
	n := g.w.Len()
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	if !g.w.Alive(late) || g.w.Alive(gone) || g.w.Len() != n {
		t.Fatalf("late alive %v, despawned alive %v, %d entities (want %d)", g.w.Alive(late), g.w.Alive(gone), g.w.Len(), n)
	}
	if v, ok := names.Get(late); !ok || v.ID != 7 {
		t.Fatalf("replicated component lost: %v %v", v, ok)
	}
	if g.now(late) != 36 || g.now(e) != 95 {
		t.Fatalf("health late %d e %d, want 36 95", g.now(late), g.now(e))
	}
}

// Values older than the window are range faults at the next Step (a
// newer value of the same entity and type would supersede them; see
// TestLateValueSuperseded): applied at the oldest tick held, which the
// Step rolls back to, so every tick held has them.
func TestRangeFault(t *testing.T) {
	g := newGame(t, predict.Config{Window: 4})
	e := g.spawn(10)
	g.stepTo(10)
	g.must(g.health.Authoritative(e, 5, 100))
	if st := g.tl.Stats(); st.RangeFaults != 0 || g.now(e) != 0 {
		t.Fatalf("before the Step: range faults %d, health %d; want 0, 0", st.RangeFaults, g.now(e))
	}
	g.tl.Step(g.sim) // 100 at 6 (the oldest tick held), re-simulates 7 .. 10, simulates 11
	st := g.tl.Stats()
	if st.RangeFaults != 1 || st.LastRangeFault != 5 || st.Superseded != 0 || st.Rollbacks != 1 || g.now(e) != 95 {
		t.Fatalf("range faults %d (last %v), superseded %d, rollbacks %d, health %d; want 1, 5, 0, 1, 95", st.RangeFaults, st.LastRangeFault, st.Superseded, st.Rollbacks, g.now(e))
	}
	if g.tl.Oldest() != 7 || g.at(e, 7) != 99 || g.at(e, 10) != 96 {
		t.Fatalf("oldest tick held %v, history at 7, 10: %d %d; want 7, 99 96", g.tl.Oldest(), g.at(e, 7), g.at(e, 10))
	}
	if err := g.health.Authoritative(e, 16, 1); !errors.Is(err, predict.ErrTooFarAhead) {
		t.Fatalf("value 5 ticks ahead with window 4: %v, want ErrTooFarAhead", err)
	}
	// A value for a tick not simulated yet applies when it is.
	g.must(g.health.Authoritative(e, 12, 50))
	g.must(g.tl.Complete(12))
	g.stepTo(12)
	if g.now(e) != 50 {
		t.Fatalf("health at 12 = %d, want 50", g.now(e))
	}
}

// Changes from outside the simulation made inside it are refused.
func TestExternalChangeInStep(t *testing.T) {
	g := newGame(t, predict.Config{})
	e := g.spawn(10)
	var err error
	g.extra = func(tk tick.Tick) { err = g.health.Insert(e, tk, 1) }
	g.tl.Step(g.sim)
	if !errors.Is(err, predict.ErrInStep) {
		t.Fatalf("Insert from the simulation: %v, want ErrInStep", err)
	}
}

// server is an authoritative simulation of the same game plus events the
// client cannot predict (random heals, shields and removals): the source
// of the authoritative values of the property tests.
type server struct {
	g   *game
	rnd *rand.Rand
}

func (s *server) step() {
	s.g.tl.Step(func(t tick.Tick) {
		s.g.sim(t)
		for _, e := range s.g.hs.Column().Entities {
			if s.rnd.IntN(8) == 0 {
				*s.g.hs.Ptr(e) += Health(s.rnd.IntN(5))
			}
		}
	})
	w := s.g.w
	for e := range w.Entities() {
		if s.rnd.IntN(20) == 0 {
			if s.g.shield.Store().Has(e) {
				_ = s.g.shield.Store().Remove(e)
			} else {
				_ = s.g.shield.Store().Set(e, Shield{1})
			}
		}
	}
}

// runProperty plays a client against the server for 150 ticks: the
// server's values of each tick arrive 2 to 6 ticks later, and one tick in
// six is lost (never complete). After every Step, the client's history at
// every complete tick it holds must equal the server's state at that tick.
// It returns the client's final health and its stats.
func runProperty(t *testing.T, seed uint64, forced bool) ([]Health, predict.Stats) {
	t.Helper()
	const window = 16
	rnd := rand.New(rand.NewPCG(seed, 1))
	srv := &server{g: newGame(t, predict.Config{Window: window}), rnd: rand.New(rand.NewPCG(seed, 2))}
	cli := newGame(t, predict.Config{Window: window, Forced: forced})
	type state struct {
		health []Health
		shield []bool
	}
	var ents []ecs.Entity
	for i := range 6 {
		se, ce := srv.g.spawn(Health(50+i)), cli.spawn(Health(50+i))
		if se != ce {
			t.Fatal("entity identities differ")
		}
		ents = append(ents, se)
	}
	sent := map[tick.Tick]state{}
	complete := map[tick.Tick]bool{}
	for range 150 {
		srv.step()
		now := srv.g.tl.Now()
		var st state
		for _, e := range ents {
			h, _ := srv.g.hs.Get(e)
			st.health = append(st.health, h)
			st.shield = append(st.shield, srv.g.shield.Store().Has(e))
		}
		sent[now] = st
		lost := rnd.IntN(6) == 0
		if at := now - tick.Tick(2+rnd.IntN(5)); !lost && at.After(0) && cli.tl.Now().Sub(at) < window {
			m := sent[at]
			for i, e := range ents {
				cli.must(cli.health.Authoritative(e, at, m.health[i]))
				if m.shield[i] {
					cli.must(cli.shield.Authoritative(e, at, Shield{1}))
				} else {
					cli.must(cli.shield.AuthoritativeRemove(e, at))
				}
			}
			cli.must(cli.tl.Complete(at))
			complete[at] = true
		}
		cli.tl.Step(cli.sim)
		for at := cli.tl.Now() - window; at != cli.tl.Now(); at++ {
			if !complete[at] {
				continue
			}
			m := sent[at]
			for i, e := range ents {
				h, _ := cli.health.At(e, at)
				_, sh := cli.shield.At(e, at)
				if h != m.health[i] || sh != m.shield[i] {
					t.Fatalf("seed %d forced %v: tick %v entity %v: client %d/%v, server %d/%v", seed, forced, at, e, h, sh, m.health[i], m.shield[i])
				}
			}
		}
	}
	var out []Health
	for _, e := range ents {
		out = append(out, cli.now(e))
	}
	return out, cli.tl.Stats()
}

// The client's state at every complete tick equals the server's, under
// loss and late delivery; forced mode gives the same outcome with more
// rollbacks.
func TestCompleteTicksMatchServer(t *testing.T) {
	for seed := range uint64(20) {
		normal, ns := runProperty(t, seed, false)
		forced, fs := runProperty(t, seed, true)
		for i := range normal {
			if normal[i] != forced[i] {
				t.Fatalf("seed %d: forced mode ended with %v, normal with %v", seed, forced, normal)
			}
		}
		if ns.Rollbacks == 0 || fs.Rollbacks <= ns.Rollbacks {
			t.Fatalf("seed %d: rollbacks normal %d forced %d; want 0 < normal < forced", seed, ns.Rollbacks, fs.Rollbacks)
		}
	}
}

// Decay does not depend on the frame rate: two 50 ms frames shrink an
// offset as much as one 100 ms frame; the zero Decay halves in 200 ms.
func TestDecayFramerateIndependent(t *testing.T) {
	d := predict.Decay{Period: 100 * time.Millisecond, Ratio: 0.25}
	one := d.Apply(8, 100*time.Millisecond)
	two := d.Apply(d.Apply(8, 50*time.Millisecond), 50*time.Millisecond)
	if math.Abs(one-2) > 1e-12 || math.Abs(two-2) > 1e-12 {
		t.Fatalf("one frame %v, two frames %v; want 2", one, two)
	}
	if got := (predict.Decay{}).Factor(200 * time.Millisecond); math.Abs(got-0.5) > 1e-12 {
		t.Fatalf("default factor after 200ms = %v, want 0.5", got)
	}
	if got := d.Apply(1e-10, time.Millisecond); got != 0 {
		t.Fatalf("tiny offset = %v, want 0", got)
	}
}

// A value older than the window is a change at the oldest tick held: a
// later rollback to a tick after it restores it rather than losing it.
func TestRangeFaultSurvivesLaterRollback(t *testing.T) {
	g := newGame(t, predict.Config{Window: 4})
	a, b := g.spawn(10), g.spawn(20)
	g.stepTo(10)
	g.must(g.health.Authoritative(a, 2, 100)) // 100 at 6
	g.stepTo(12)
	g.must(g.health.Authoritative(b, 9, 0))
	g.must(g.tl.Complete(9))
	g.tl.Step(g.sim) // rolls back to 9, re-simulates 10..12
	g.wantRollbacks(2)
	if g.now(a) != 93 || g.now(b) != -4 {
		t.Fatalf("health %d %d, want 93 -4", g.now(a), g.now(b))
	}
}

// Ticks wrap around 2^32: the rings stay consecutive across the wrap.
func TestRollbackAcrossTickWrap(t *testing.T) {
	w := ecs.New()
	start := tick.Tick(1<<32 - 3)
	tl := predict.New(w, start, predict.Config{Window: 6})
	hp, _ := predict.Register[Health](tl)
	q := ecs.NewQuery1(hp.Store().Write())
	sim := func(tick.Tick) {
		for _, h := range q.All() {
			*h--
		}
	}
	e := w.Spawn()
	if err := hp.Insert(e, start, 10); err != nil {
		t.Fatal(err)
	}
	for range 6 { // ticks 2^32-2 .. 3
		tl.Step(sim)
	}
	at := start + 2 // 2^32-1
	if v, ok := hp.At(e, at); !ok || v != 8 {
		t.Fatalf("history at %v = %v %v, want 8", at, v, ok)
	}
	_ = hp.Authoritative(e, at, 100)
	_ = tl.Complete(at)
	tl.Step(sim) // rolls back across the wrap: 100 at 2^32-1, 96 at 4
	if v, _ := hp.Store().Get(e); v != 95 || tl.Now() != 4 || tl.Stats().Rollbacks != 1 {
		t.Fatalf("health %d at %v after %d rollbacks, want 95 at 4 after 1", v, tl.Now(), tl.Stats().Rollbacks)
	}
	if v, ok := hp.At(e, 0); !ok || v != 99 {
		t.Fatalf("history at 0 = %v %v, want 99", v, ok)
	}
}

type Pos struct{ X float64 }

// A compare function with a tolerance decides what is a misprediction.
func TestCompareTolerance(t *testing.T) {
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	pos, err := predict.Register[Pos](tl, predict.Compare(func(a, b Pos) bool { return math.Abs(a.X-b.X) < 0.01 }))
	if err != nil {
		t.Fatal(err)
	}
	e := w.Spawn()
	_ = pos.Insert(e, 0, Pos{1})
	sim := func(tick.Tick) {}
	tl.Step(sim)
	tl.Step(sim)
	_ = pos.Authoritative(e, 1, Pos{1.001}) // within tolerance
	_ = tl.Complete(1)
	tl.Step(sim)
	if tl.Stats().Rollbacks != 0 {
		t.Fatal("a value within tolerance rolled back")
	}
	_ = pos.Authoritative(e, 2, Pos{1.5})
	_ = tl.Complete(2)
	tl.Step(sim)
	if v, _ := pos.Store().Get(e); tl.Stats().Rollbacks != 1 || v.X != 1.5 {
		t.Fatalf("%d rollbacks, x = %v; want 1, 1.5", tl.Stats().Rollbacks, v.X)
	}
}

// Registration refuses what it cannot keep a history of, and misuse.
func TestRegisterErrors(t *testing.T) {
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	type withSlice struct{ S []int }
	if _, err := predict.Register[withSlice](tl); err == nil {
		t.Fatal("a type holding a slice was accepted")
	}
	if _, err := predict.Register[Pos](tl, predict.Compare(func(a, b Health) bool { return a == b })); !errors.Is(err, predict.ErrCompareType) {
		t.Fatalf("compare of another type: %v", err)
	}
	if _, err := predict.Register[Pos](tl); err != nil {
		t.Fatal(err)
	}
	if _, err := predict.Register[Pos](tl); !errors.Is(err, predict.ErrRegistered) {
		t.Fatalf("second registration: %v", err)
	}
	tl.Step(func(tick.Tick) {})
	if _, err := predict.RegisterResource[Score](tl); !errors.Is(err, predict.ErrStarted) {
		t.Fatalf("registration after Step: %v", err)
	}
	if tl.Window() != predict.DefaultWindow {
		t.Fatalf("default window %d, want %d", tl.Window(), predict.DefaultWindow)
	}
}

// A rollback restores the entities without authoritative values too (the
// word-compare path for 8-byte-word types and the generic one), and an
// entity whose restored value is unchanged is not stamped by the restore.
func TestRollbackRestoresEveryEntity(t *testing.T) {
	type Wide struct{ X, Y float64 }
	type Odd struct {
		A int8
		B int32
	} // padding: generic path
	w := ecs.New()
	tl := predict.New(w, 0, predict.Config{})
	wide, _ := predict.Register[Wide](tl)
	odd, _ := predict.Register[Odd](tl)
	frozen := w.Spawn()
	var moving [3]ecs.Entity
	for i := range moving {
		moving[i] = w.Spawn()
		_ = wide.Insert(moving[i], 0, Wide{X: float64(i)})
		_ = odd.Insert(moving[i], 0, Odd{A: int8(i)})
	}
	_ = wide.Insert(frozen, 0, Wide{X: 42})
	sim := func(tick.Tick) {
		for _, e := range moving {
			wide.Store().Ptr(e).X += 1.5
			odd.Store().Ptr(e).B += 2
		}
	}
	for range 6 {
		tl.Step(sim)
	}
	stamp, _ := wide.Store().Ticks(frozen)
	_ = wide.Authoritative(moving[0], 2, Wide{X: 100})
	_ = tl.Complete(2)
	tl.Step(sim)
	for i, e := range moving {
		wantX := float64(i) + 7*1.5
		if i == 0 {
			wantX = 100 + 5*1.5
		}
		if v, _ := wide.Store().Get(e); v.X != wantX {
			t.Errorf("entity %d: x = %v, want %v", i, v.X, wantX)
		}
		if v, _ := odd.Store().Get(e); v.B != 14 || v.A != int8(i) {
			t.Errorf("entity %d: odd = %+v, want {%d 14}", i, v, i)
		}
	}
	if st, _ := wide.Store().Ticks(frozen); st != stamp {
		t.Errorf("unchanged entity stamped by the rollback: %+v, was %+v", st, stamp)
	}
}

// ReceiveHook takes every value for the Timeline (never the World) and
// counts those it refuses.
func TestReceiveHook(t *testing.T) {
	g := newGame(t, predict.Config{Window: 4})
	e := g.spawn(10)
	g.stepTo(3)
	hook := g.health.ReceiveHook()
	if !hook(e, 2, 100) || !hook(e, 20, 5) {
		t.Fatal("hook returned false: replicate would write the value into the World")
	}
	if g.now(e) != 7 || g.tl.Stats().Refused != 1 {
		t.Fatalf("health %d, refused %d; want 7 (untouched), 1", g.now(e), g.tl.Stats().Refused)
	}
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if g.now(e) != 98 {
		t.Fatalf("health after the rollback = %d, want 98", g.now(e))
	}
}

// A complete tick equal to Now (a client not ahead of the server) is
// checked against the World: a mismatch snaps it without re-simulating, a
// match changes nothing and stamps nothing.
func TestValueForNow(t *testing.T) {
	g := newGame(t, predict.Config{}, predict.LogCorrections())
	e := g.spawn(10)
	g.stepTo(4)
	g.must(g.health.Authoritative(e, 4, 6)) // matches
	g.must(g.tl.Complete(4))
	g.tl.Step(g.sim)
	g.wantRollbacks(0)
	if g.now(e) != 5 {
		t.Fatalf("health %d, want 5", g.now(e))
	}
	g.must(g.health.Authoritative(e, 5, 50))
	g.must(g.tl.Complete(5))
	g.tl.Step(g.sim)
	g.wantRollbacks(1)
	st := g.tl.Stats()
	if st.TicksResimulated != 0 || g.at(e, 5) != 50 || g.now(e) != 49 {
		t.Fatalf("resimulated %d, health %d at 5, %d now; want 0, 50, 49", st.TicksResimulated, g.at(e, 5), g.now(e))
	}
	if c := g.health.Corrections(); len(c) != 1 || c[0].Before != 5 || c[0].After != 50 {
		t.Fatalf("corrections %+v, want one from 5 to 50", c)
	}
}
