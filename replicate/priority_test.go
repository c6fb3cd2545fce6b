package replicate_test

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// TestClientPriority: ServerConfig.Priority gives each client its own
// priority per entity, here falling with the distance to the client's
// focus (1 within 10 units, then 10/distance). Twenty entities on a line
// change every tick; two clients watch from opposite ends. For 300 ticks
// each client gets each entity's changes every ceil(1/p) ticks: every
// tick near its focus, every few ticks far away, never staler than
// ceil(1/p); the same entity at the same time goes at different rates to
// the two clients; and after the changes stop, both hold exactly the
// server's values.
func TestClientPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		focus := map[replicate.ClientID]float64{}
		var r *memRig
		prio := func(c replicate.ClientID, e ecs.Entity) float32 {
			p, _ := ecs.StoreOf[Position](r.sw).Get(e)
			d := math.Abs(p.X - focus[c])
			if d <= 10 {
				return 1
			}
			return float32(10 / d)
		}
		r = newMemRig(t, 9, replicate.ServerConfig{Priority: prio})
		defer r.close()
		var ents []ecs.Entity
		for i := range 20 {
			ents = append(ents, spawnRep(r.sw, Position{X: float64(i * 10)}, 1))
		}
		r.connect(2, transport.LinkConfig{Latency: 10 * time.Millisecond})
		focus[r.clients[0].ID()] = 0
		focus[r.clients[1].ID()] = 190
		// Each client's ticks of the values received, per client entity.
		got := make([]map[ecs.Entity][]tick.Tick, 2)
		for i, c := range r.clients {
			got[i] = map[ecs.Entity][]tick.Tick{}
			m := got[i]
			if err := replicate.SetHooks(c, replicate.ComponentHooks[Position]{Value: func(e ecs.Entity, t tick.Tick, _ Position, kind replicate.ValueKind) bool {
				if kind == replicate.ValueAuthoritative {
					m[e] = append(m[e], t)
				}
				return false
			}}); err != nil {
				t.Fatal(err)
			}
		}
		pos := ecs.StoreOf[Position](r.sw)
		start := r.srv.Tick() + 1
		for range 300 {
			for _, e := range ents {
				pos.Ptr(e).Y++
			}
			r.step()
		}
		end := r.srv.Tick()
		for range 30 { // changes stop: whatever was held back goes out
			r.step()
		}
		if d := r.diff(nil); d != "" {
			t.Fatalf("after the changes stopped: %s", d)
		}
		for i, c := range r.clients {
			for k, se := range ents {
				ce, ok := c.ClientEntity(se)
				if !ok {
					t.Fatalf("client %d lacks entity %d", i, k)
				}
				p, _ := pos.Get(se)
				pr := float64(prio(c.ID(), se))
				bound := int32(math.Ceil(1/pr - 1e-9))
				var gaps, worst int32
				prev := start - 1
				for _, tk := range got[i][ce] {
					if tk.Before(start) || tk.After(end) {
						continue
					}
					worst = max(worst, tk.Sub(prev))
					prev = tk
					gaps++
				}
				worst = max(worst, end.Sub(prev)+1)
				if worst > bound {
					t.Errorf("client %d, entity at x=%v (priority %.3f): %d ticks without a value, bound %d", i, p.X, pr, worst, bound)
				}
				if pr == 1 && gaps < 299 || pr < 0.2 && float64(gaps) > 300*pr*1.2+2 {
					t.Errorf("client %d, entity at x=%v (priority %.3f): %d values in 300 ticks", i, p.X, pr, gaps)
				}
				if k == 0 || k == 19 {
					t.Logf("client %d, entity at x=%v: priority %.3f, %d values in 300 ticks, at most %d ticks apart", i, p.X, pr, gaps, worst)
				}
			}
		}
	})
}
