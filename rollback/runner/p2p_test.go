package runner_test

import (
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/transport"
)

// Components of the test game.
type (
	tPos    fixed.Vec2
	tVel    fixed.Vec2
	tPlayer struct{ Handle int32 }
	tShot   struct{ TTL int32 }
)

// testGame is a small game: one ship per player steered by its input, shots
// that live a few frames (spawn and despawn under rollback), and a world RNG
// that jitters every shot.
type testGame struct {
	w      *ecs.World
	reg    *snapshot.Registry
	pos    *ecs.Store[tPos]
	vel    *ecs.Store[tVel]
	shots  *ecs.Store[tShot]
	rand   *ecs.Resource[rng.Rand]
	ships  *ecs.Query2[tPlayer, tVel]
	move   *ecs.Query2[tPos, tVel]
	aging  *ecs.Query1[tShot]
	spawns []fixed.Vec2
	dead   []ecs.Entity
}

func newTestGame(t testing.TB, players int) *testGame {
	t.Helper()
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	err := errors.Join(snapshot.Copy[tPos](reg), snapshot.Copy[tVel](reg), snapshot.Copy[tPlayer](reg),
		snapshot.Copy[tShot](reg), snapshot.CopyResource[rng.Rand](reg))
	if err != nil {
		t.Fatal(err)
	}
	g := &testGame{w: w, reg: reg, pos: ecs.StoreOf[tPos](w), vel: ecs.StoreOf[tVel](w),
		shots: ecs.StoreOf[tShot](w), rand: ecs.ResourceOf[rng.Rand](w)}
	g.rand.Set(rng.NewSeed(5))
	pl := ecs.StoreOf[tPlayer](w)
	for h := range players {
		e := w.Spawn()
		err = errors.Join(err, pl.Set(e, tPlayer{int32(h)}), g.pos.Set(e, tPos{X: fixed.FromInt(int64(10 * h))}), g.vel.Set(e, tVel{}))
	}
	if err != nil {
		t.Fatal(err)
	}
	g.ships = ecs.NewQuery2(pl.Read(), g.vel.Write())
	g.move = ecs.NewQuery2(g.pos.Write(), g.vel.Read())
	g.aging = ecs.NewQuery1(g.shots.Write())
	return g
}

func (g *testGame) step(ctx *runner.Context) {
	g.spawns, g.dead = g.spawns[:0], g.dead[:0]
	for _, row := range g.ships.All() {
		var b byte
		if in := ctx.Inputs[row.A.Handle].Bytes; len(in) > 0 {
			b = in[0]
		}
		row.B.X = fixed.FromInt(int64(b&3) - 1)
		row.B.Y = fixed.FromInt(int64(b>>2&3) - 1)
		if b&16 != 0 {
			g.spawns = append(g.spawns, fixed.Vec2(*row.B))
		}
	}
	for e, s := range g.aging.All() {
		if s.TTL--; s.TTL <= 0 {
			g.dead = append(g.dead, e)
		}
	}
	for _, e := range g.dead {
		ctx.Fail(g.w.Despawn(e))
	}
	r := g.rand.Ptr()
	for _, v := range g.spawns {
		e := g.w.Spawn()
		v.X = v.X.Add(fixed.FromFraction(r.Int64N(100), 100))
		ctx.Fail(errors.Join(g.shots.Set(e, tShot{TTL: 5 + r.Int32N(10)}), g.pos.Set(e, tPos{}), g.vel.Set(e, tVel(v))))
	}
	for b := range g.move.Batches() {
		for i := range b.A {
			b.A[i] = tPos(fixed.Vec2(b.A[i]).Add(fixed.Vec2(b.B[i])))
		}
	}
}

// botInput changes every 6..11 frames, differently per player.
func botInput(f rollback.Frame, h rollback.PlayerHandle) []byte {
	r := rng.Stream(uint64(h), uint64(int(f)/(6+int(h)*5)))
	return []byte{byte(r.Uint64N(32))}
}

func simAddr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), 7000)
}

type testPeer struct {
	g      *testGame
	s      *rollback.P2PSession
	r      *runner.Runner
	finals map[rollback.Frame]uint64
	last   rollback.Frame
	events []rollback.Event
}

// TestP2PMatch plays a 2-peer match on a simulated network (40 ms latency,
// 5% loss) with two runners and checks that they agree on the checksum of
// every confirmed frame and that desync detection stays quiet.
func TestP2PMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const frames = 600
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 11, Default: transport.LinkConfig{Latency: 40 * time.Millisecond, Loss: 0.05}})
		defer net.Close()
		peers := make([]*testPeer, 2)
		for i := range peers {
			conn, err := net.Listen(simAddr(i))
			if err != nil {
				t.Fatal(err)
			}
			cfg := rollback.Config{NumPlayers: 2, DesyncInterval: 10, InputDelay: 1, Seed: uint64(i + 1)}
			cfg.Players = []rollback.Player{{Handle: rollback.PlayerHandle(i), Kind: rollback.Local},
				{Handle: rollback.PlayerHandle(1 - i), Kind: rollback.Remote, Addr: simAddr(1 - i)}}
			s, err := rollback.NewP2P(conn, cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := &testPeer{g: newTestGame(t, 2), s: s, finals: map[rollback.Frame]uint64{}, last: rollback.NullFrame}
			p.r, err = runner.New(runner.Config{
				World: p.g.w, Registry: p.g.reg, Session: s, Step: p.g.step,
				ReadInput:   func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) },
				ChecksumAll: true,
				Confirmed: func(f rollback.Frame, sum uint64) {
					if f != p.last+1 {
						t.Errorf("peer %d: Confirmed(%d) after %d", i, f, p.last)
					}
					p.last = f
					p.finals[f] = sum
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			peers[i] = p
		}

		start := time.Now()
		last := start
		var doneAt time.Time
		for {
			time.Sleep(3 * time.Millisecond)
			now := time.Now()
			done := true
			for _, p := range peers {
				if p.r.Frame() < frames {
					done = false
					if _, err := p.r.Update(now.Sub(last)); err != nil {
						t.Fatal(err)
					}
				} else {
					p.s.Poll()
				}
				p.events = append(p.events, p.s.Events()...)
			}
			last = now
			if done && doneAt.IsZero() {
				doneAt = now
			}
			if !doneAt.IsZero() && now.Sub(doneAt) > time.Second {
				break
			}
			if now.Sub(start) > time.Minute {
				t.Fatal("match did not finish")
			}
		}

		compared := 0
		for f, sum := range peers[0].finals {
			if o, ok := peers[1].finals[f]; ok {
				compared++
				if o != sum {
					t.Errorf("frame %d: checksums differ: %#x %#x", f, sum, o)
				}
			}
		}
		if compared < frames-20 {
			t.Fatalf("only %d confirmed frames compared", compared)
		}
		for i, p := range peers {
			st := p.s.Stats()
			t.Logf("peer %d: %+v, runner frames %d loads %d, ring %d bytes", i, st, p.r.Frames(), p.r.Loads(), p.r.Ring().Bytes())
			for _, ev := range p.events {
				if ev.Kind == rollback.EventDesyncDetected || ev.Kind == rollback.EventDisconnected {
					t.Errorf("peer %d: %v", i, ev)
				}
			}
			if st.Rollbacks == 0 || p.r.Loads() != st.Rollbacks {
				t.Errorf("peer %d: %d rollbacks, runner loaded %d times", i, st.Rollbacks, p.r.Loads())
			}
			if st.Frame < frames {
				t.Errorf("peer %d stopped at frame %d", i, st.Frame)
			}
		}
	})
}

// TestRequestOrder: a request list that does not follow the world's frame is
// refused, and a failing step stops the runner.
func TestRequestOrder(t *testing.T) {
	g := newTestGame(t, 1)
	fail := errors.New("boom")
	failing := false
	r, err := runner.New(runner.Config{World: g.w, Registry: g.reg, Session: nopSession{}, Step: func(ctx *runner.Context) {
		if failing {
			ctx.Fail(fail)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	adv := func(f rollback.Frame) rollback.Request {
		return rollback.Request{Kind: rollback.AdvanceRequest, Frame: f}
	}
	if err := r.Handle([]rollback.Request{{Kind: rollback.SaveRequest, Frame: 0}, adv(0), adv(1)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Handle([]rollback.Request{adv(5)}); !errors.Is(err, runner.ErrRequestOrder) {
		t.Fatalf("advance of a future frame: %v", err)
	}
	if err := r.Handle([]rollback.Request{{Kind: rollback.SaveRequest, Frame: 1}}); !errors.Is(err, runner.ErrRequestOrder) {
		t.Fatalf("save of a past frame: %v", err)
	}
	if err := r.Handle([]rollback.Request{{Kind: rollback.LoadRequest, Frame: 1}}); !errors.Is(err, snapshot.ErrFrameNotHeld) {
		t.Fatalf("load of a frame never saved: %v", err)
	}
	if err := r.Handle([]rollback.Request{{Kind: rollback.LoadRequest, Frame: 0}, adv(0)}); err != nil || r.Frame() != 1 {
		t.Fatalf("load and advance: %v, frame %d", err, r.Frame())
	}
	failing = true
	if err := r.Handle([]rollback.Request{adv(1)}); !errors.Is(err, fail) {
		t.Fatalf("failing step: %v", err)
	}
	failing = false
	if err := r.Handle([]rollback.Request{adv(2)}); !errors.Is(err, fail) {
		t.Fatalf("after a failed step: %v", err)
	}
}

// nopSession is a Session that asks for nothing (requests are handed to
// Runner.Handle directly).
type nopSession struct{}

func (nopSession) AdvanceFrame() ([]rollback.Request, error)              { return nil, nil }
func (nopSession) LocalHandles() []rollback.PlayerHandle                  { return nil }
func (nopSession) AddLocalInput(rollback.PlayerHandle, []byte) error      { return nil }
func (nopSession) ReportChecksum(rollback.Frame, uint64, []rollback.Part) {}
func (nopSession) WantsChecksum(rollback.Frame) bool                      { return false }
func (nopSession) CurrentFrame() rollback.Frame                           { return 0 }
func (nopSession) ConfirmedFrame() rollback.Frame                         { return rollback.NullFrame }
func (nopSession) SnapshotDepth() int                                     { return 0 }
func (nopSession) FramesAhead() int                                       { return 0 }
func (nopSession) Poll()                                                  {}
func (nopSession) Events() []rollback.Event                               { return nil }
func (nopSession) Finished() bool                                         { return false }
func (nopSession) Close() error                                           { return nil }
func (nopSession) ChecksDeterminism() bool                                { return false }
