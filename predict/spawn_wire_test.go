package predict_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Predicted spawns through predict.Attach with a real replicate.Server and
// Client on the in-memory network, in virtual time. Both sides run the
// same simulation: bullets (RPos, RVel) move by their velocity; a bullet
// fired at tick f starts at 1000+f with velocity 2. The client fires from
// its gun (a local entity with a predicted Ammo), one round per shot.

// TestPredictedSpawnMatched: the client fires at tick 12, 4 ticks ahead of
// the server, and sees its bullet at once; the server fires at 12 from the
// same input; its spawn, 2 ticks of latency later, adopts the client's
// bullet. The client ends with exactly one bullet entity, the one it
// predicted, mapped to the server's, with the server's values, and
// counts one match and no mispredicted value.
func TestPredictedSpawnMatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSpawnRig(t, 30*time.Millisecond, 4)
		defer r.close()
		r.clientFires[12], r.serverFires[12] = true, true
		r.stepTo(8) // the client simulated tick 12
		if len(r.spawned) != 1 || len(r.bulletsOnClient()) != 1 || r.client.Entities() != 0 {
			t.Fatalf("after firing: spawns %v, %d bullets, %d replicated; want 1, 1, 0", r.spawned, len(r.bulletsOnClient()), r.client.Entities())
		}
		r.stepTo(40)
		pb := r.spawned[0].e
		if b := r.bulletsOnClient(); len(b) != 1 || b[0] != pb || r.cw.Len() != 2 {
			t.Fatalf("client bullets %v (%d entities), want only the predicted %v and the gun", b, r.cw.Len(), pb)
		}
		r.checkBullet(r.bullets[12], pb, 12)
		st := r.tl.Stats()
		if st.PredictedSpawns != 1 || st.PredictedSpawnsMatched != 1 || st.PredictedSpawnsDropped != 0 || st.ServerSpawnsUnpredicted != 0 {
			t.Fatalf("spawn stats %+v, want 1 spawned and matched", st)
		}
		if st.Types[0].Mispredictions != 0 || st.Types[1].Mispredictions != 0 || r.client.Stats().Adopted != 1 {
			t.Fatalf("mispredictions %d %d, adopted %d; want 0 0 1", st.Types[0].Mispredictions, st.Types[1].Mispredictions, r.client.Stats().Adopted)
		}
		// The server's values of the spawn tick are what the history holds:
		// the match costs no rollback.
		if st.Rollbacks != 0 {
			t.Fatalf("%d rollbacks, want 0", st.Rollbacks)
		}
	})
}

// TestPredictedSpawnNeverConfirmed: the client fires at 12, the server
// never does (it missed the input). The bullet lives until tick 12 is
// complete on the client: frame 14 (Now 17 before its Step; 30 ms of
// latency). That frame's Step refuses the spawn: the bullet is despawned,
// the Step rolls back to 11 and re-simulates 12 .. 17 (6 ticks), where
// Spawn of the key fails with ErrSpawnRefused, so the client does not
// fire and keeps its round. The bullet is counted as dropped and refused
// once, not again when tick 12 leaves the window.
func TestPredictedSpawnNeverConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSpawnRig(t, 30*time.Millisecond, 4)
		defer r.close()
		r.clientFires[12] = true
		r.stepTo(13)
		pb := r.spawned[0].e
		st := r.tl.Stats()
		if r.tl.Now() != 17 || !r.cw.Alive(pb) || r.client.TickComplete(12) || st.PredictedSpawnsDropped != 0 || st.Rollbacks != 0 {
			t.Fatalf("at %v: bullet alive %v, tick 12 complete %v, stats %+v; want 17, alive, incomplete, nothing dropped", r.tl.Now(), r.cw.Alive(pb), r.client.TickComplete(12), st)
		}
		if a, _ := r.ammo.Store().Get(r.gun); a.N != 0 {
			t.Fatalf("ammo %d after firing, want 0", a.N)
		}
		r.step() // frame 14: tick 12 completes
		st = r.tl.Stats()
		if !r.client.TickComplete(12) || r.cw.Alive(pb) || len(r.bulletsOnClient()) != 0 || r.cw.Len() != 1 {
			t.Fatalf("frame 14: tick 12 complete %v, bullet alive %v, bullets %v, %d entities; want complete, gone, none, the gun",
				r.client.TickComplete(12), r.cw.Alive(pb), r.bulletsOnClient(), r.cw.Len())
		}
		if st.Rollbacks != 1 || st.TicksResimulated != 6 || len(r.refused) != 1 || r.refused[0] != (refusal{f: 12, frame: 14, rb: true}) {
			t.Fatalf("frame 14: %d rollbacks, %d resimulated, refusals %v; want 1, 6, tick 12 refused in the rollback of frame 14", st.Rollbacks, st.TicksResimulated, r.refused)
		}
		if a, _ := r.ammo.Store().Get(r.gun); a.N != 1 {
			t.Fatalf("ammo %d after the refusal, want the round back", a.N)
		}
		for tk := tick.Tick(12); tk <= 17; tk++ {
			if a, _ := r.ammo.At(r.gun, tk); a.N != 1 {
				t.Fatalf("ammo at %v: %d, want 1", tk, a.N)
			}
		}
		if _, ok := r.tl.PredictedSpawn(r.key(12)); ok {
			t.Fatal("a refused key still names an entity")
		}
		if st.PredictedSpawns != 1 || st.PredictedSpawnsDropped != 1 || st.PredictedSpawnsRefused != 1 || st.PredictedSpawnsUndone != 0 || st.PredictedSpawnsMatched != 0 {
			t.Fatalf("frame 14: stats %+v; want 1 spawned, dropped and refused", st)
		}
		r.stepTo(50) // tick 12 left the window at Now 43
		st = r.tl.Stats()
		if st.Rollbacks != 1 || len(r.refused) != 1 || st.PredictedSpawnsDropped != 1 || st.PredictedSpawnsRefused != 1 || r.client.Entities() != 0 || r.cw.Len() != 1 {
			t.Fatalf("at %v: %d rollbacks, refusals %v, stats %+v, %d replicated, %d entities; want nothing more",
				r.tl.Now(), st.Rollbacks, r.refused, st, r.client.Entities(), r.cw.Len())
		}
	})
}

// TestServerSpawnWithoutPrediction: the server fires at 12 with the
// client's key, the client did not predict it (its gun was empty), and
// a bullet of another client is spawned at 14: both are spawned normally
// on the client, once, with the server's values. A later correction
// giving the client a round at 11 makes its re-simulation fire at 12:
// the Spawn returns the server's bullet, no duplicate.
func TestServerSpawnWithoutPrediction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSpawnRig(t, 30*time.Millisecond, 4)
		defer r.close()
		_ = r.ammo.Store().Set(r.gun, Ammo{N: 0})
		r.clientFires[12], r.serverFires[12] = true, true
		var other ecs.Entity
		r.stepTo(13)
		r.step() // frame 14: a bullet of client 99
		other = predict.ServerSpawn(r.sw, predict.SpawnKey{Client: 99, Tick: 14, Kind: 1})
		_ = ecs.StoreOf[RPos](r.sw).Set(other, RPos{5})
		_ = ecs.StoreOf[RVel](r.sw).Set(other, RVel{2})
		r.stepTo(30)
		if len(r.spawned) != 0 {
			t.Fatalf("the client fired without a round: %v", r.spawned)
		}
		sb := r.bullets[12]
		cb, ok := r.client.ClientEntity(sb)
		if !ok || len(r.bulletsOnClient()) != 2 {
			t.Fatalf("client bullets %v, want the server's two", r.bulletsOnClient())
		}
		r.checkBullet(sb, cb, 12)
		co, _ := r.client.ClientEntity(other)
		r.checkBullet(other, co, 15)
		st := r.tl.Stats()
		if st.PredictedSpawns != 0 || st.PredictedSpawnsMatched != 0 || st.ServerSpawnsUnpredicted != 2 {
			t.Fatalf("spawn stats %+v, want 2 unpredicted server spawns", st)
		}
		// The server says the gun had a round at 11 after all.
		if err := r.ammo.Insert(r.gun, 11, Ammo{N: 1}); err != nil {
			t.Fatal(err)
		}
		r.stepTo(32)
		if len(r.spawned) != 1 || r.spawned[0] != (spawned{cb, true}) {
			t.Fatalf("re-simulation spawns %v, want the server's bullet %v in the rollback", r.spawned, cb)
		}
		if len(r.bulletsOnClient()) != 2 || r.cw.Len() != 3 {
			t.Fatalf("client bullets %v (%d entities), want 2 and the gun", r.bulletsOnClient(), r.cw.Len())
		}
		r.checkBullet(sb, cb, 12)
	})
}

// TestMatchedPrespawnRollbackBeforeSpawnTick is lightyear's
// test_matched_prespawn_despawned_on_rollback_before_spawn_tick: a
// predicted bullet of tick 12, matched with the server's, then a rollback
// to tick 10, before its spawn. Lightyear despawns the predicted entity
// and lets the replay spawn one replacement. Here the matched entity is
// the server's (replicate maps the server entity to it), so the rollback
// keeps its identity: it has no predicted values before 12 in the
// re-simulation, the replay's Spawn of the same key returns it (exactly
// one bullet, never a second), and when the replay no longer fires (the
// gun lost its round at 10) the entity still stays, restored at 12 by the
// server's values of its spawn tick. Either way the client ends with one
// bullet, mapped to the server's, with the server's values.
func TestMatchedPrespawnRollbackBeforeSpawnTick(t *testing.T) {
	for _, refire := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			r := newSpawnRig(t, 30*time.Millisecond, 4)
			defer r.close()
			r.clientFires[12], r.serverFires[12] = true, true
			r.stepTo(14) // matched by now (Now 18)
			pb, sb := r.spawned[0].e, r.bullets[12]
			if ce, _ := r.client.ClientEntity(sb); ce != pb || r.tl.Stats().PredictedSpawnsMatched != 1 {
				t.Fatalf("server bullet mapped to %v, want the predicted %v", ce, pb)
			}
			r.stepTo(20)
			rollbacks := r.tl.Stats().Rollbacks
			n := int32(1)
			if !refire {
				n = 0
			}
			if err := r.ammo.Insert(r.gun, 10, Ammo{N: n}); err != nil { // a change before the spawn tick
				t.Fatal(err)
			}
			r.step()
			if r.tl.Stats().Rollbacks != rollbacks+1 {
				t.Fatalf("rollbacks %d, want %d", r.tl.Stats().Rollbacks, rollbacks+1)
			}
			want := []spawned{{pb, false}}
			if refire {
				want = append(want, spawned{pb, true})
			}
			if len(r.spawned) != len(want) || r.spawned[len(r.spawned)-1] != want[len(want)-1] {
				t.Fatalf("refire %v: spawns %v, want %v", refire, r.spawned, want)
			}
			r.stepTo(40)
			if b := r.bulletsOnClient(); len(b) != 1 || b[0] != pb || r.cw.Len() != 2 {
				t.Fatalf("refire %v: client bullets %v (%d entities), want only %v", refire, b, r.cw.Len(), pb)
			}
			r.checkBullet(sb, pb, 12)
			if st := r.tl.Stats(); st.PredictedSpawnsDropped != 0 || st.PredictedSpawnsUndone != 0 {
				t.Fatalf("refire %v: stats %+v, want nothing dropped", refire, st)
			}
		})
	}
}

// TestPredictedSpawnDespawnedBeforeMatch is lightyear's
// test_prespawn_local_despawn_match: the bullet of tick 12 hits a wall at
// tick 14 on both sides; the client predicted the hit (Timeline.Despawn)
// before the server's spawn reached it. The spawn still adopts the
// despawned bullet (its identity lives on for the window), the
// server's despawn agrees with the prediction, nothing is mispredicted,
// duplicated or dropped, and the entity leaves the client's World when
// tick 14 leaves the window.
func TestPredictedSpawnDespawnedBeforeMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSpawnRig(t, 30*time.Millisecond, 4)
		defer r.close()
		r.clientFires[12], r.serverFires[12] = true, true
		r.serverExtra = func(f tick.Tick) {
			if f == 14 {
				_ = r.sw.Despawn(r.bullets[12])
			}
		}
		r.clientExtra = func(f tick.Tick) {
			if e, ok := r.tl.PredictedSpawn(r.key(12)); ok && f == 14 {
				if err := r.tl.Despawn(e); err != nil {
					t.Fatal(err)
				}
			}
		}
		r.stepTo(10) // the client simulated 14: the bullet is marked
		pb := r.spawned[0].e
		if !r.tl.Despawned(pb) || r.pos.Store().Has(pb) || r.client.Entities() != 0 {
			t.Fatalf("at %v: marked %v, has a position %v, %d replicated; want true, false, 0", r.tl.Now(), r.tl.Despawned(pb), r.pos.Store().Has(pb), r.client.Entities())
		}
		r.stepTo(16)
		st := r.tl.Stats()
		if st.PredictedSpawnsMatched != 1 || !r.cw.Alive(pb) || len(r.bulletsOnClient()) != 1 || r.pos.Store().Has(pb) {
			t.Fatalf("at %v: matched %d, alive %v, bullets %v, position %v; want 1, true, one, none",
				r.tl.Now(), st.PredictedSpawnsMatched, r.cw.Alive(pb), r.bulletsOnClient(), r.pos.Store().Has(pb))
		}
		if p, ok := r.pos.At(pb, 13); !ok || p.X != 1014 {
			t.Fatalf("history at 13: %v %v, want 1014", p, ok)
		}
		r.stepTo(40) // Now 44: tick 14 is still in the window (30 ticks)
		if !r.cw.Alive(pb) {
			t.Fatalf("at %v: despawned before its marker left the window", r.tl.Now())
		}
		r.step()
		st = r.tl.Stats()
		if r.cw.Alive(pb) || r.cw.Len() != 1 || r.client.Entities() != 0 {
			t.Fatalf("at %v: bullet alive %v, %d entities, %d replicated; want gone", r.tl.Now(), r.cw.Alive(pb), r.cw.Len(), r.client.Entities())
		}
		if st.PredictedSpawnsDropped != 0 || st.Types[0].Mispredictions != 0 || st.Types[1].Mispredictions != 0 {
			t.Fatalf("stats %+v, want nothing dropped or mispredicted", st)
		}
	})
}

// TestPredictedSpawnsUnderLoss: the client fires every 5 ticks from 30 to
// 200 and the server with it, on links losing 20% of their datagrams with
// jitter and reordering. Every bullet is matched (updates are reliable,
// and arrive within the window), none dropped or duplicated, each is the
// entity the client predicted, and its history at every complete tick
// equals the server's.
func TestPredictedSpawnsUnderLoss(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		synctest.Test(t, func(t *testing.T) {
			link := transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Reorder: 0.1}
			r := newSpawnRigLink(t, seed, link, 8, 30)
			defer r.close()
			_ = r.ammo.Store().Set(r.gun, Ammo{N: 1000})
			fired := 0
			for f := tick.Tick(30); f <= 200; f += 5 { // connected by then
				r.clientFires[f], r.serverFires[f] = true, true
				fired++
			}
			r.stepTo(260)
			st := r.tl.Stats()
			if st.PredictedSpawns != uint64(fired) || st.PredictedSpawnsMatched != uint64(fired) || st.PredictedSpawnsDropped != 0 || st.ServerSpawnsUnpredicted != 0 {
				t.Fatalf("seed %d: %d fired, stats %+v", seed, fired, st)
			}
			if n := len(r.bulletsOnClient()); n != fired || r.client.Entities() != fired || r.cw.Len() != fired+1 {
				t.Fatalf("seed %d: %d bullets, %d replicated, %d entities; want %d, %d, %d", seed, n, r.client.Entities(), r.cw.Len(), fired, fired, fired+1)
			}
			first := map[predict.SpawnKey]ecs.Entity{}
			for _, s := range r.spawned {
				k, _ := ecs.StoreOf[predict.SpawnKey](r.cw).Get(s.e)
				if _, ok := first[k]; !ok {
					first[k] = s.e
				}
			}
			for f, se := range r.bullets {
				ce := first[r.key(f)]
				if got, _ := r.client.ClientEntity(se); got != ce {
					t.Fatalf("seed %d: server bullet of %v is client %v, want the predicted %v", seed, f, got, ce)
				}
			}
			// The newest bullets still have complete ticks in the window.
			r.checkBullet(r.bullets[200], first[r.key(200)], 200)
			t.Logf("seed %d: %d bullets matched, rollbacks %d, resimulated %d", seed, fired, st.Rollbacks, st.TicksResimulated)
		})
	}
}

// TestRefusedSpawnsUnderLoss: the client fires every 5 ticks from 30 to
// 200, the server only every 10 (it missed every other input), on links
// losing 20% of their datagrams with jitter and reordering, so many
// ticks never complete (a window of 60 ticks: with 30, seed 3 has an
// update held up past the window, whose bullet the window rule drops
// and the server's spawn brings back later, unpredicted). After every frame, each bullet the server did
// not fire is alive exactly while no server tick at or after its own is
// complete on the client: it vanishes at the Step after the first such
// tick completes, well within the window. Every such bullet is refused
// (none waits for the window), every other one matched, and the client
// ends with the server's bullets only.
func TestRefusedSpawnsUnderLoss(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		synctest.Test(t, func(t *testing.T) {
			link := transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.2, Reorder: 0.1}
			r := newSpawnRigLink(t, seed, link, 8, 60)
			defer r.close()
			_ = r.ammo.Store().Set(r.gun, Ammo{N: 1000})
			both, ghosts := 0, 0
			for f := tick.Tick(30); f <= 200; f += 5 {
				r.clientFires[f] = true
				if f%10 == 0 {
					r.serverFires[f] = true
					both++
				} else {
					ghosts++
				}
			}
			ghost := map[tick.Tick]ecs.Entity{} // the client's bullets the server did not fire
			lived := 0                          // the most frames one of them lived
			for r.frame < 260 {
				r.step()
				for _, s := range r.spawned {
					k, _ := ecs.StoreOf[predict.SpawnKey](r.cw).Get(s.e)
					if !r.serverFires[k.Tick] && k.Tick != 0 {
						if _, ok := ghost[k.Tick]; !ok {
							ghost[k.Tick] = s.e
						}
					}
				}
				for f, e := range ghost {
					settled := false
					for tk := f; !tk.After(r.frame); tk++ {
						settled = settled || r.client.TickComplete(tk)
					}
					if r.cw.Alive(e) == settled {
						t.Fatalf("seed %d frame %d: bullet of %v alive %v, a tick at or after it complete %v", seed, r.frame, f, r.cw.Alive(e), settled)
					}
					if r.cw.Alive(e) {
						lived = max(lived, int(r.tl.Now().Sub(f)))
					}
				}
			}
			st := r.tl.Stats()
			if len(ghost) != ghosts || st.PredictedSpawnsRefused != uint64(ghosts) || st.PredictedSpawnsDropped != uint64(ghosts) || st.PredictedSpawnsMatched != uint64(both) || st.PredictedSpawnsUndone != 0 {
				t.Fatalf("seed %d: %d ghosts seen, stats %+v; want %d refused and dropped, %d matched", seed, len(ghost), st, ghosts, both)
			}
			if n := len(r.bulletsOnClient()); n != both || r.client.Entities() != both || r.cw.Len() != both+1 {
				t.Fatalf("seed %d: %d bullets, %d replicated, %d entities; want %d, %d, %d", seed, n, r.client.Entities(), r.cw.Len(), both, both, both+1)
			}
			if lived >= 30 {
				t.Fatalf("seed %d: a refused bullet lived %d ticks, want under 30", seed, lived)
			}
			t.Logf("seed %d: %d refused, %d matched, longest a refused bullet lived %d ticks, rollbacks %d", seed, ghosts, both, lived, st.Rollbacks)
		})
	}
}
