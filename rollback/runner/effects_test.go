package runner_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/effect"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// shotEffect is a shot's sound: the player who fired it, at a frame.
type shotEffect struct {
	t tick.Tick
	h rollback.PlayerHandle
}

// effectLog records a Tracker's calls.
type effectLog struct {
	played, cancelled, confirmed []shotEffect
}

func (l *effectLog) tracker() *effect.Tracker[rollback.PlayerHandle, byte] {
	return effect.New(effect.Config[rollback.PlayerHandle, byte]{
		Play: func(t tick.Tick, h rollback.PlayerHandle, _ byte) { l.played = append(l.played, shotEffect{t, h}) },
		Cancel: func(t tick.Tick, h rollback.PlayerHandle, _ byte) {
			l.cancelled = append(l.cancelled, shotEffect{t, h})
		},
		Confirm: func(t tick.Tick, h rollback.PlayerHandle, _ byte) {
			l.confirmed = append(l.confirmed, shotEffect{t, h})
		},
	})
}

// fireShots fires a shot effect for every player whose input fires in
// the frame being simulated.
func fireShots(fx *effect.Tracker[rollback.PlayerHandle, byte], ctx *runner.Context) {
	for h, in := range ctx.Inputs {
		if len(in.Bytes) > 0 && in.Bytes[0]&16 != 0 {
			fx.Fire(tick.Tick(ctx.Frame), rollback.PlayerHandle(h), in.Bytes[0])
		}
	}
}

// A SyncTest session rolls back and re-simulates every frame: each shot
// plays its sound exactly once, none is cancelled, and every one is
// confirmed.
func TestRunnerEffectsSyncTest(t *testing.T) {
	g := newTestGame(t, 2)
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 2, CheckDistance: 4})
	if err != nil {
		t.Fatal(err)
	}
	var l effectLog
	fx := l.tracker()
	r, err := runner.New(runner.Config{World: g.w, Registry: g.reg, Session: s,
		Step:      func(ctx *runner.Context) { g.step(ctx); fireShots(fx, ctx) },
		ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) },
		Effects:   []effect.Follower{fx}})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if err := r.RunFrame(); err != nil {
			t.Fatal(err)
		}
	}
	st := fx.Stats()
	t.Logf("%d loads; effects %+v", r.Loads(), st)
	if r.Loads() < 150 || st.Refired == 0 {
		t.Fatalf("%d loads, %d effects fired again: the test does not roll back", r.Loads(), st.Refired)
	}
	if len(l.cancelled) != 0 {
		t.Fatalf("identical re-simulations cancelled %d effects", len(l.cancelled))
	}
	for i := 1; i < len(l.played); i++ {
		if !l.played[i-1].t.Before(l.played[i].t) && l.played[i-1] == l.played[i] {
			t.Fatalf("effect %+v played twice", l.played[i])
		}
	}
	if !slices.Equal(l.confirmed, l.played[:len(l.confirmed)]) || len(l.played)-len(l.confirmed) != st.Pending {
		t.Fatalf("confirmed %d of %d played, %d pending", len(l.confirmed), len(l.played), st.Pending)
	}
}

// Two peers over a lossy, slow network: a peer predicts the other's input
// and fires the other ship's shots with the guess. When the real input
// differs, the rollback cancels the shots the guess fired and plays the
// real ones. Both peers confirm exactly the same shots, those of the
// confirmed inputs, each once.
func TestRunnerEffectsP2P(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const frames = 400
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 3, Default: transport.LinkConfig{Latency: 60 * time.Millisecond, Loss: 0.05}})
		defer net.Close()
		type peer struct {
			r   *runner.Runner
			s   *rollback.P2PSession
			fx  *effect.Tracker[rollback.PlayerHandle, byte]
			log effectLog
		}
		peers := make([]*peer, 2)
		for i := range peers {
			conn, err := net.Listen(simAddr(i))
			if err != nil {
				t.Fatal(err)
			}
			cfg := rollback.Config{NumPlayers: 2, InputDelay: 1, Seed: uint64(i + 1), EndFrame: frames}
			cfg.Players = []rollback.Player{{Handle: rollback.PlayerHandle(i), Kind: rollback.Local},
				{Handle: rollback.PlayerHandle(1 - i), Kind: rollback.Remote, Addr: simAddr(1 - i)}}
			s, err := rollback.NewP2P(conn, cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := &peer{s: s}
			p.fx = p.log.tracker()
			g := newTestGame(t, 2)
			if p.r, err = runner.New(runner.Config{World: g.w, Registry: g.reg, Session: s,
				Step:      func(ctx *runner.Context) { g.step(ctx); fireShots(p.fx, ctx) },
				ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) },
				Effects:   []effect.Follower{p.fx}}); err != nil {
				t.Fatal(err)
			}
			peers[i] = p
		}
		last := time.Now()
		for k := 0; ; k++ {
			time.Sleep(5 * time.Millisecond)
			now := time.Now()
			done := true
			for _, p := range peers {
				if !p.r.Finished() {
					done = false
					if _, err := p.r.Update(now.Sub(last)); err != nil {
						t.Fatal(err)
					}
				}
			}
			last = now
			if done {
				break
			}
			if k > 60000 {
				t.Fatal("the match did not finish")
			}
		}
		for i, p := range peers {
			st := p.fx.Stats()
			t.Logf("peer %d: %d loads; effects %+v", i, p.r.Loads(), st)
			if len(p.log.cancelled) == 0 {
				t.Errorf("peer %d: no effect cancelled in %d rollbacks: the test does not mispredict", i, p.r.Loads())
			}
			if st.Played != uint64(len(p.log.confirmed)+len(p.log.cancelled)) || st.Pending != 0 {
				t.Errorf("peer %d: %d played, %d confirmed + %d cancelled, %d pending", i, st.Played, len(p.log.confirmed), len(p.log.cancelled), st.Pending)
			}
		}
		if !slices.Equal(peers[0].log.confirmed, peers[1].log.confirmed) {
			t.Fatalf("the peers confirmed different shots: %d and %d", len(peers[0].log.confirmed), len(peers[1].log.confirmed))
		}
		// The confirmed shots are those of the real inputs, each once.
		var want []shotEffect
		for f := range rollback.Frame(frames + 1) {
			for h := range rollback.PlayerHandle(2) {
				if f >= 1 && botInput(f-1, h)[0]&16 != 0 { // input delay 1: frame f runs the input read at f-1
					want = append(want, shotEffect{tick.Tick(f), h})
				}
			}
		}
		got := peers[0].log.confirmed
		if len(got) == 0 || !slices.Equal(got, want[:min(len(want), len(got))]) {
			t.Fatalf("confirmed shots differ from the inputs' shots: %d confirmed, %d expected; first %v / %v", len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
		}
	})
}
