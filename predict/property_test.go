package predict_test

import (
	"math/rand/v2"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/tick"
)

// runProperty plays a client against the server for 150 ticks: the
// server's values of each tick arrive 2 to 6 ticks later, and one tick in
// six is lost (never complete). After every Step, the client's history at
// every complete tick it holds must equal the server's state at that tick.
// It returns the client's final health and its stats.
func runProperty(t *testing.T, seed uint64, forced bool) ([]Health, predict.Stats) {
	t.Helper()
	const window = 16
	rnd := rand.New(rand.NewPCG(seed, 1))
	srv := &server{g: newRig(t, predict.Config{Window: window}), rnd: rand.New(rand.NewPCG(seed, 2))}
	cli := newRig(t, predict.Config{Window: window, Forced: forced})
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
