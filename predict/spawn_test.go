package predict_test

import (
	"errors"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// Predicted spawns on the Timeline alone (the wiring with replicate is in
// spawn_wire_test.go). The game of timewarp_test.go: every entity with
// Health loses 1 per tick; a bullet is spawned with health 100.

func bulletKey(f tick.Tick) predict.SpawnKey {
	return predict.SpawnKey{Client: 7, Tick: f, Kind: 1, Index: 0}
}

// fireAt makes the simulation spawn a bullet at tick f when gate (read in
// the predicted state) allows it; every entity Spawn returns is appended
// to got, with whether it was returned during a rollback.
type spawned struct {
	e  ecs.Entity
	rb bool
}

func fireAt(g *rig, f tick.Tick, gate func() bool, got *[]spawned) {
	g.extra = func(tk tick.Tick) {
		if tk != f || !gate() {
			return
		}
		e, err := g.tl.Spawn(bulletKey(f))
		g.must(err)
		g.must(g.hs.Set(e, 100))
		*got = append(*got, spawned{e, g.tl.InRollback()})
	}
}

// A predicted spawn no server spawn claims lives until its tick leaves the
// window (W = 10: the bullet of tick 3 is despawned by the Step that makes
// tick 14 Now), then it is despawned and counted as dropped.
func TestSpawnUnconfirmedDropped(t *testing.T) {
	g := newRig(t, predict.Config{})
	var got []spawned
	fireAt(g, 3, func() bool { return true }, &got)
	g.stepTo(13)
	if len(got) != 1 {
		t.Fatalf("spawns %v, want one", got)
	}
	b := got[0].e
	if e, ok := g.tl.PredictedSpawn(bulletKey(3)); !ok || e != b || g.now(b) != 90 {
		t.Fatalf("at 13: predicted spawn %v %v health %d; want %v true 90", e, ok, g.now(b), b)
	}
	if k, _ := ecs.StoreOf[predict.SpawnKey](g.w).Get(b); k != bulletKey(3) {
		t.Fatalf("bullet tagged %+v, want its key", k)
	}
	if st := g.tl.Stats(); st.PredictedSpawns != 1 || st.PredictedSpawnsDropped != 0 {
		t.Fatalf("at 13: %+v", st)
	}
	g.stepTo(14)
	if g.w.Alive(b) {
		t.Fatal("the unconfirmed bullet outlived the window")
	}
	if _, ok := g.tl.PredictedSpawn(bulletKey(3)); ok {
		t.Fatal("the key is still known after the window")
	}
	st := g.tl.Stats()
	if st.PredictedSpawns != 1 || st.PredictedSpawnsDropped != 1 || st.PredictedSpawnsMatched != 0 || st.PredictedSpawnsUndone != 0 {
		t.Fatalf("stats %+v, want 1 spawned, 1 dropped", st)
	}
}

// A rollback to a tick before an unmatched predicted spawn: when the
// re-simulation spawns the key again, it gets the same entity back (no
// new entity, no flicker), without its predicted values before the
// spawn tick; when a correction makes the re-simulation no longer spawn
// it, the entity is despawned as soon as its tick is re-simulated and
// counted as undone and dropped.
func TestSpawnRollbackBeforeSpawnTick(t *testing.T) {
	g := newRig(t, predict.Config{})
	gun := g.spawn(60) // fires at 5 while its health is at least 50
	var got []spawned
	fireAt(g, 5, func() bool { h, _ := g.hs.Get(gun); return h >= 50 }, &got)
	g.stepTo(8)
	if len(got) != 1 || got[0].rb {
		t.Fatalf("spawns %v, want one outside rollbacks", got)
	}
	b := got[0].e
	entities := g.w.Len()

	// The server's gun had health 0 at tick 2: the rollback to 2
	// re-simulates 3 .. 8, and the gun no longer fires at 5.
	g.must(g.health.Authoritative(gun, 2, 0))
	g.must(g.tl.Complete(2))
	g.tl.Step(g.sim)
	if g.tl.Stats().Rollbacks != 1 || len(got) != 1 {
		t.Fatalf("rollbacks %d spawns %v; want 1 and the re-simulation not firing", g.tl.Stats().Rollbacks, got)
	}
	if g.w.Alive(b) || g.w.Len() != entities-1 {
		t.Fatalf("bullet alive %v, %d entities; want despawned, %d", g.w.Alive(b), g.w.Len(), entities-1)
	}
	st := g.tl.Stats()
	if st.PredictedSpawnsUndone != 1 || st.PredictedSpawnsDropped != 1 || st.PredictedSpawns != 1 {
		t.Fatalf("stats %+v, want 1 spawned, undone and dropped", st)
	}
}

// The same rollback when the re-simulation still fires: the bullet keeps
// its entity, is absent from the history before tick 5, and its values
// from 5 on are the re-simulation's.
func TestSpawnRespawnKeepsEntity(t *testing.T) {
	g := newRig(t, predict.Config{})
	gun := g.spawn(60)
	var got []spawned
	fireAt(g, 5, func() bool { h, _ := g.hs.Get(gun); return h >= 50 }, &got)
	g.stepTo(8)
	b := got[0].e
	entities := g.w.Len()
	g.tl.Step(g.sim)
	g.tl.Request(3) // a change in the past: roll back to 3 at the next Step
	g.tl.Step(g.sim)
	if g.tl.Stats().Rollbacks != 1 || len(got) != 2 || got[1] != (spawned{b, true}) {
		t.Fatalf("rollbacks %d spawns %v; want 1 and the same entity %v again in the rollback", g.tl.Stats().Rollbacks, got, b)
	}
	if !g.w.Alive(b) || g.w.Len() != entities || g.now(b) != 100-(10-5) {
		t.Fatalf("bullet alive %v health %d, %d entities; want alive, 95, %d", g.w.Alive(b), g.now(b), g.w.Len(), entities)
	}
	if g.at(b, 4) != -1 || g.at(b, 5) != 100 || g.at(b, 8) != 97 {
		t.Fatalf("bullet history at 4, 5, 8: %d %d %d; want -1 100 97", g.at(b, 4), g.at(b, 5), g.at(b, 8))
	}
	if st := g.tl.Stats(); st.PredictedSpawns != 1 || st.PredictedSpawnsDropped != 0 {
		t.Fatalf("stats %+v, want 1 spawned, none dropped", st)
	}
}

// Spawn is for the simulation, once per key and tick, with a key of the
// tick being simulated.
func TestSpawnErrors(t *testing.T) {
	g := newRig(t, predict.Config{})
	if _, err := g.tl.Spawn(bulletKey(0)); !errors.Is(err, predict.ErrSpawnKey) {
		t.Fatalf("Spawn outside Step: %v, want ErrSpawnKey", err)
	}
	var errs []error
	g.extra = func(tk tick.Tick) {
		if tk != 2 {
			return
		}
		_, err := g.tl.Spawn(bulletKey(3)) // another tick
		errs = append(errs, err)
		_, err = g.tl.Spawn(bulletKey(2))
		errs = append(errs, err)
		_, err = g.tl.Spawn(bulletKey(2)) // twice
		errs = append(errs, err)
	}
	g.stepTo(3)
	if len(errs) != 3 || !errors.Is(errs[0], predict.ErrSpawnKey) || errs[1] != nil || !errors.Is(errs[2], predict.ErrSpawnKey) {
		t.Fatalf("errors %v, want ErrSpawnKey, nil, ErrSpawnKey", errs)
	}
	if st := g.tl.Stats(); st.PredictedSpawns != 1 {
		t.Fatalf("%d predicted spawns, want 1", st.PredictedSpawns)
	}
}

// AdoptSpawn, replicate's adopt hook: a predicted key adopts its entity
// once; the same key spawned again by the server (the entity shown again
// after being hidden, a resync) gets a new entity, which the key names
// from then on; an unknown key in the window gets a new entity too, a key
// older than the window none (replicate spawns it).
func TestAdoptSpawn(t *testing.T) {
	g := newRig(t, predict.Config{})
	var got []spawned
	fireAt(g, 3, func() bool { return true }, &got)
	g.stepTo(5)
	b := got[0].e
	if e, ok := g.tl.AdoptSpawn(3, bulletKey(3)); !ok || e != b {
		t.Fatalf("adopt: %v %v, want the predicted %v", e, ok, b)
	}
	again, ok := g.tl.AdoptSpawn(8, bulletKey(3))
	if !ok || again == b || !g.w.Alive(again) {
		t.Fatalf("adopt again: %v %v, want a new entity", again, ok)
	}
	if e, _ := g.tl.PredictedSpawn(bulletKey(3)); e != again {
		t.Fatalf("the key names %v, want %v", e, again)
	}
	other := predict.SpawnKey{Client: 8, Tick: 4, Kind: 1}
	if e, ok := g.tl.AdoptSpawn(4, other); !ok || !g.w.Alive(e) || e == b || e == again {
		t.Fatalf("unknown key: %v %v, want a new entity", e, ok)
	}
	g.stepTo(20)
	if e, ok := g.tl.AdoptSpawn(4, predict.SpawnKey{Client: 8, Tick: 4, Kind: 2}); ok {
		t.Fatalf("key older than the window adopted %v", e)
	}
	st := g.tl.Stats()
	if st.PredictedSpawnsMatched != 1 || st.ServerSpawnsUnpredicted != 1 || st.PredictedSpawnsDropped != 0 {
		t.Fatalf("stats %+v, want 1 matched, 1 unpredicted, none dropped", st)
	}
}

// fireOrRefuse is fireAt for a spawn the server may refuse: a refused
// Spawn (ErrSpawnRefused) fires nothing and is appended to refused with
// whether it was in a rollback.
func fireOrRefuse(g *rig, f tick.Tick, got *[]spawned, refused *[]bool) {
	g.extra = func(tk tick.Tick) {
		if tk != f {
			return
		}
		e, err := g.tl.Spawn(bulletKey(f))
		if errors.Is(err, predict.ErrSpawnRefused) {
			*refused = append(*refused, g.tl.InRollback())
			return
		}
		g.must(err)
		g.must(g.hs.Set(e, 100))
		*got = append(*got, spawned{e, g.tl.InRollback()})
	}
}

// A predicted spawn whose tick completes without the server's spawn is
// refused at the next Step, long before its tick leaves the window: the
// bullet of tick 5 vanishes in the Step that makes 9 Now, right after
// Complete(5) (or Complete of a later tick: the server's spawns of 5
// would have come before it), which rolls back to 4 and re-simulates
// 5 .. 8 with Spawn refused. The key stays refused while tick 5 is in the
// window (a later rollback before 5 does not fire again) and is counted
// once.
func TestSpawnRefusedAtCompletion(t *testing.T) {
	for _, done := range []tick.Tick{5, 7} {
		g := newRig(t, predict.Config{})
		var got []spawned
		var refused []bool
		fireOrRefuse(g, 5, &got, &refused)
		g.stepTo(8)
		b := got[0].e
		g.must(g.tl.Complete(done))
		if !g.w.Alive(b) {
			t.Fatalf("complete %v: the bullet vanished before the Step", done)
		}
		g.tl.Step(g.sim) // Now 9
		st := g.tl.Stats()
		if g.w.Alive(b) || len(got) != 1 || len(refused) != 1 || !refused[0] {
			t.Fatalf("complete %v: bullet alive %v, spawns %v, refusals %v; want gone, the first spawn only, one refusal in the rollback", done, g.w.Alive(b), got, refused)
		}
		if st.Rollbacks != 1 || st.TicksResimulated != 4 {
			t.Fatalf("complete %v: %d rollbacks, %d resimulated; want 1 to tick 4, 4", done, st.Rollbacks, st.TicksResimulated)
		}
		if g.at(b, 5) != -1 || g.at(b, 8) != -1 {
			t.Fatalf("complete %v: history of the bullet at 5, 8: %d %d; want none", done, g.at(b, 5), g.at(b, 8))
		}
		if st.PredictedSpawns != 1 || st.PredictedSpawnsDropped != 1 || st.PredictedSpawnsRefused != 1 || st.PredictedSpawnsUndone != 0 {
			t.Fatalf("complete %v: stats %+v; want 1 spawned, dropped and refused", done, st)
		}
		g.tl.Request(3) // a later rollback before the spawn tick
		g.stepTo(20)    // tick 5 leaves the window at Now 16
		st = g.tl.Stats()
		if len(got) != 1 || len(refused) != 2 || !refused[1] || st.Rollbacks != 2 || st.PredictedSpawnsDropped != 1 || st.PredictedSpawnsRefused != 1 {
			t.Fatalf("complete %v: spawns %v, refusals %v, stats %+v; want the replay refused too, counted once", done, got, refused, st)
		}
	}
}

// A client behind the server: tick 9 is complete before the client
// simulates it, without the server's spawn of 9, so the simulation's
// Spawn of 9 is refused at once and makes no entity.
func TestSpawnRefusedBehind(t *testing.T) {
	g := newRig(t, predict.Config{})
	var got []spawned
	var refused []bool
	fireOrRefuse(g, 9, &got, &refused)
	g.stepTo(6)
	g.must(g.tl.Complete(9))
	entities := g.w.Len()
	g.stepTo(10)
	st := g.tl.Stats()
	if len(got) != 0 || len(refused) != 1 || refused[0] || g.w.Len() != entities {
		t.Fatalf("spawns %v, refusals %v, %d entities; want none, one outside rollbacks, %d", got, refused, g.w.Len(), entities)
	}
	if st.PredictedSpawns != 0 || st.PredictedSpawnsRefused != 1 || st.PredictedSpawnsDropped != 0 || st.Rollbacks != 0 {
		t.Fatalf("stats %+v; want 1 refused, nothing spawned or dropped, no rollback", st)
	}
	// The server's spawn of a refused key (only a game reporting
	// completeness too early can see one) is spawned normally.
	e, ok := g.tl.AdoptSpawn(9, bulletKey(9))
	if !ok || !g.w.Alive(e) {
		t.Fatalf("adopt of the refused key: %v %v, want a new entity", e, ok)
	}
	if k, ok := g.tl.PredictedSpawn(bulletKey(9)); !ok || k != e || g.tl.Stats().ServerSpawnsUnpredicted != 1 {
		t.Fatalf("the key names %v %v, unpredicted %d; want %v, 1", k, ok, g.tl.Stats().ServerSpawnsUnpredicted, e)
	}
}
