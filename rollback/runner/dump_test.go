package runner_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/transport"
)

// TestP2PDesyncDump: peer 1's simulation moves player 0's ship 3 units
// further at frame 200 than peer 0's (a corruption of one field of one
// entity). On a simulated network with 20% loss both peers detect the
// desync; each writes its dump of the differing types at the desynced
// frame to a file, and the diff of the two files is exactly that entity,
// that field, and the two values. The peers also exchange their dumps
// over the session (DesyncDumpBytes): each one's EventDesyncDump shows
// the same difference, from its own side.
func TestP2PDesyncDump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const corruptAt, frames = 200, 400
		delta := fixed.FromInt(3)
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 29, Default: transport.LinkConfig{Latency: 30 * time.Millisecond, Loss: 0.2}})
		defer net.Close()
		type peer struct {
			g      *testGame
			s      *rollback.P2PSession
			r      *runner.Runner
			ship0  ecs.Entity
			desync *rollback.Event
			dump   *rollback.Event
			file   string
		}
		dir := t.TempDir()
		peers := make([]*peer, 2)
		for i := range peers {
			conn, err := net.Listen(simAddr(i))
			if err != nil {
				t.Fatal(err)
			}
			cfg := rollback.Config{NumPlayers: 2, DesyncInterval: 10, InputDelay: 1, Seed: uint64(i + 1), DesyncDumpBytes: 64 << 10}
			cfg.Players = []rollback.Player{{Handle: rollback.PlayerHandle(i), Kind: rollback.Local},
				{Handle: rollback.PlayerHandle(1 - i), Kind: rollback.Remote, Addr: simAddr(1 - i)}}
			s, err := rollback.NewP2P(conn, cfg)
			if err != nil {
				t.Fatal(err)
			}
			p := &peer{g: newTestGame(t, 2), s: s}
			for e := range ecs.NewQuery1(ecs.StoreOf[tPlayer](p.g.w).Read()).All() {
				if p.ship0 == 0 {
					p.ship0 = e // handle 0's ship, spawned first
				}
			}
			step := p.g.step
			if i == 1 {
				step = func(ctx *runner.Context) {
					p.g.step(ctx)
					if ctx.Frame == corruptAt {
						pos, _ := p.g.pos.Get(p.ship0)
						pos.X = pos.X.Add(delta)
						ctx.Fail(p.g.pos.Set(p.ship0, pos))
					}
				}
			}
			p.r, err = runner.New(runner.Config{
				World: p.g.w, Registry: p.g.reg, Session: s, Step: step,
				ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) },
				Dumps:     8, DumpLabel: fmt.Sprintf("peer %d", i),
			})
			if err != nil {
				t.Fatal(err)
			}
			peers[i] = p
		}
		last := time.Now()
		for peers[0].dump == nil || peers[1].dump == nil {
			time.Sleep(5 * time.Millisecond)
			now := time.Now()
			for i, p := range peers {
				if p.r.Frame() < frames {
					if _, err := p.r.Update(now.Sub(last)); err != nil {
						t.Fatal(err)
					}
				} else {
					p.s.Poll()
				}
				for _, ev := range p.s.Events() {
					if ev.Kind == rollback.EventDesyncDump && p.dump == nil {
						p.dump = &ev
					}
					if ev.Kind != rollback.EventDesyncDetected || p.desync != nil {
						continue
					}
					p.desync = &ev
					d, ok := p.r.Dump(ev.Frame, ev.Types)
					if !ok {
						t.Fatalf("peer %d: no dump of frame %d", i, ev.Frame)
					}
					p.file = filepath.Join(dir, fmt.Sprintf("peer%d.rwdump", i))
					if err := snapshot.WriteDumpFile(p.file, d); err != nil {
						t.Fatal(err)
					}
				}
			}
			last = now
			if peers[0].r.Frame() >= frames && peers[1].r.Frame() >= frames && (peers[0].dump == nil || peers[1].dump == nil) {
				t.Fatalf("by frame %d: desync events %v %v, dump events %v %v", frames, peers[0].desync, peers[1].desync, peers[0].dump, peers[1].dump)
			}
		}
		if f0, f1 := peers[0].desync.Frame, peers[1].desync.Frame; f0 != f1 || f0 <= corruptAt || f0 > corruptAt+10 {
			t.Fatalf("desyncs at frames %d and %d, want the first checked frame after %d", f0, f1, corruptAt)
		}
		posName := ecs.StoreOf[tPos](peers[0].g.w).Info().Name
		if ty := peers[0].desync.Types; len(ty) != 1 || ty[0] != posName {
			t.Fatalf("desync types %v, want [%s]", ty, posName)
		}
		a, err := snapshot.ReadDumpFile(peers[0].file)
		if err != nil {
			t.Fatal(err)
		}
		b, err := snapshot.ReadDumpFile(peers[1].file)
		if err != nil {
			t.Fatal(err)
		}
		diffs, total := snapshot.DiffDumps(a, b, 0)
		if total != 1 {
			t.Fatalf("%d differences, want 1: %v", total, diffs)
		}
		d := diffs[0]
		va, _ := strconv.ParseInt(d.A, 10, 64)
		vb, _ := strconv.ParseInt(d.B, 10, 64)
		if d.Type != posName || d.Entity != peers[0].ship0 || d.Field != ".X" || fixed.Fixed(vb-va) != delta {
			t.Fatalf("difference %v, want %s entity %v .X differing by %v", d, posName, peers[0].ship0, delta)
		}
		// The same difference in each peer's EventDesyncDump, from its side.
		for i, p := range peers {
			dd, err := runner.DiffDumpEvent(*p.dump, 0)
			if err != nil {
				t.Fatalf("peer %d: %v", i, err)
			}
			want := d
			if i == 1 {
				want.A, want.B = d.B, d.A
			}
			if p.dump.Frame != peers[0].desync.Frame || dd.Total != 1 || dd.Diffs[0] != want || dd.Local.Label != fmt.Sprintf("peer %d", i) {
				t.Fatalf("peer %d: event %v: diffs %v (%d), want %v", i, p.dump, dd.Diffs, dd.Total, want)
			}
		}
		st := peers[0].s.Stats()
		t.Logf("diff %s (labels %q, %q) at frame %d; peer 0: %d rollbacks", d, a.Label, b.Label, a.Frame, st.Rollbacks)
	})
}

// TestSyncTestDesyncError: a simulation that gives another value to one
// field of one entity when it re-simulates a frame fails SyncTest with a
// DesyncError naming that entity and field with both values, which is
// still a rollback.ErrMismatchedChecksum.
func TestSyncTestDesyncError(t *testing.T) {
	g := newTestGame(t, 2)
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 2, CheckDistance: 2})
	if err != nil {
		t.Fatal(err)
	}
	var ship1 ecs.Entity
	n := 0
	for e := range ecs.NewQuery1(ecs.StoreOf[tPlayer](g.w).Read()).All() {
		if n++; n == 2 {
			ship1 = e
		}
	}
	calls := map[rollback.Frame]int{}
	r, err := runner.New(runner.Config{World: g.w, Registry: g.reg, Session: s,
		ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) },
		Step: func(ctx *runner.Context) {
			g.step(ctx)
			if calls[ctx.Frame]++; ctx.Frame == 30 && calls[ctx.Frame] == 3 { // frame 30 run a third time: state 31 saved a second time
				v, _ := g.vel.Get(ship1)
				v.Y = v.Y.Add(fixed.FromInt(7))
				ctx.Fail(g.vel.Set(ship1, v))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if err = r.RunFrame(); err != nil {
			break
		}
	}
	var de *runner.DesyncError
	if !errors.As(err, &de) || !errors.Is(err, rollback.ErrMismatchedChecksum) {
		t.Fatalf("RunFrame: %v, want a *DesyncError", err)
	}
	velName := g.vel.Info().Name
	if de.Total != 1 || de.Diffs[0].Type != velName || de.Diffs[0].Entity != ship1 || de.Diffs[0].Field != ".Y" {
		t.Fatalf("diffs %v (total %d), want %s entity %v .Y", de.Diffs, de.Total, velName, ship1)
	}
	va, _ := strconv.ParseInt(de.Diffs[0].A, 10, 64)
	vb, _ := strconv.ParseInt(de.Diffs[0].B, 10, 64)
	if fixed.Fixed(vb-va) != fixed.FromInt(7) {
		t.Fatalf("values %s and %s, want them 7 apart", de.Diffs[0].A, de.Diffs[0].B)
	}
	t.Log(err)
}
