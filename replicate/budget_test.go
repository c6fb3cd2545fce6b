package replicate_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// TestBudgetPerTick: 200 entities change every tick, about 4,000 bytes
// of mutations a tick; the server may send each client 1,000
// (ServerConfig.BudgetPerTick). For 300 ticks every entity keeps getting
// values: on a clean link never more than 4 ticks apart (the values that
// waited go first the next tick: a round-robin), at 10% loss never more
// than 16 (a lost value is resent only once its ack times out, about 6
// ticks at this RTT, and then waits its turn); every update the client
// applies carries its tick's spawns and despawns, budget or not; the
// mutation bytes stay within the budget; and once the changes stop the
// client holds exactly the server's state.
func TestBudgetPerTick(t *testing.T) {
	for _, c := range []struct {
		loss  float64
		bound int32
	}{{0, 4}, {0.1, 16}} {
		t.Run(fmt.Sprint("loss=", c.loss), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { budgetPerTick(t, c.loss, c.bound) })
		})
	}
}

func budgetPerTick(t *testing.T, loss float64, bound int32) {
	const budget = 1000
	r := newMemRig(t, 12, replicate.ServerConfig{BudgetPerTick: budget})
	defer r.close()
	var ents []ecs.Entity
	for i := range 200 {
		ents = append(ents, spawnRep(r.sw, Position{X: float64(i)}, 1))
	}
	r.connect(1, transport.LinkConfig{Latency: 15 * time.Millisecond, Loss: loss})
	c := r.clients[0]
	last := map[ecs.Entity]tick.Tick{} // client entity -> tick of its newest value
	worst := int32(0)
	if err := replicate.SetHooks(c, replicate.ComponentHooks[Position]{Value: func(e ecs.Entity, t tick.Tick, _ Position, kind replicate.ValueKind) bool {
		if t.After(last[e]) {
			if p, ok := last[e]; ok && t.Sub(p) > worst {
				worst = t.Sub(p)
			}
			last[e] = t
		}
		return false
	}}); err != nil {
		t.Fatal(err)
	}
	pos := ecs.StoreOf[Position](r.sw)
	st0, _ := r.srv.Stats(c.ID())
	type change struct {
		spawned, gone ecs.Entity
		at            tick.Tick
	}
	var changes []change
	for k := range 300 {
		for _, e := range ents {
			if r.sw.Alive(e) {
				pos.Ptr(e).Y++
			}
		}
		if k%50 == 25 { // structure, budget or not: a spawn and a despawn
			changes = append(changes, change{spawnRep(r.sw, Position{X: -1}, 2), ents[k/50], r.srv.Tick() + 1})
			_ = r.sw.Despawn(ents[k/50])
		}
		r.step()
		// Every update the client applied carries the structure of its
		// tick: the budget holds back values only.
		for _, ch := range changes {
			if c.UpdateTick().Before(ch.at) {
				continue
			}
			if _, ok := c.ClientEntity(ch.spawned); !ok {
				t.Fatalf("tick %d: the client applied the update of tick %d without its spawn", k, ch.at)
			}
			if _, ok := c.ClientEntity(ch.gone); ok {
				t.Fatalf("tick %d: the client applied the update of tick %d without its despawn", k, ch.at)
			}
		}
	}
	st, _ := r.srv.Stats(c.ID())
	mut := st.Out.Mutations - st0.Out.Mutations
	// Each tick's messages: the budget of entity blocks, plus their
	// headers (at most 12 bytes each, a few messages a tick).
	if perTick := float64(mut) / 300; perTick > budget+100 {
		t.Fatalf("%.0f bytes of mutations a tick, budget %d", perTick, budget)
	}
	if worst > bound {
		t.Fatalf("a value waited %d ticks (budget 1/4 of the changes), bound %d", worst, bound)
	}
	t.Logf("mutations %.0f B/tick (budget %d), values at most %d ticks apart", float64(mut)/300, budget, worst)
	r.setLinks(transport.LinkConfig{Latency: 15 * time.Millisecond})
	for range 120 {
		r.step()
	}
	if d := r.diff(nil); d != "" {
		t.Fatalf("after the changes stopped: %s", d)
	}
}
