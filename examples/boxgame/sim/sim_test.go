package sim

import (
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/transport"
)

// reference plays frames of the scripted match without rollback and returns
// the checksum of every state 0..frames. The first delay
// frames have empty inputs, as in a session with that input delay.
func reference(t *testing.T, players, frames, delay int) []uint64 {
	t.Helper()
	g, err := New(Config{Players: players})
	if err != nil {
		t.Fatal(err)
	}
	var sums []uint64
	inputs := make([]rollback.Input, players)
	ctx := &runner.Context{World: g.World()}
	for f := range frames + 1 {
		sum, err := g.Checksum()
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
		if f == frames {
			break
		}
		for h := range inputs {
			inputs[h] = rollback.Input{}
			if f >= delay {
				inputs[h].Bytes = []byte{Script(rollback.Frame(f), rollback.PlayerHandle(h))}
			}
		}
		ctx.Frame, ctx.Inputs = rollback.Frame(f), inputs
		g.Step(ctx)
	}
	return sums
}

// TestScriptedMatch plays the scripted match between two P2P peers on a
// simulated network with latency, jitter and loss until it is finished
// (EndFrame), and checks that each peer's confirmed checksums of states
// 0..400 are those of the same match simulated without any network or
// rollback, frame by frame, and that rollbacks happened.
func TestScriptedMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const frames = 400
		ref := reference(t, 2, frames, 1)
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 3,
			Default: transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1}})
		defer net.Close()
		addr := func(i int) netip.AddrPort {
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), 7000)
		}
		type peer struct {
			s      *rollback.P2PSession
			r      *runner.Runner
			digest Digest
		}
		peers := make([]*peer, 2)
		for i := range peers {
			conn, err := net.Listen(addr(i))
			if err != nil {
				t.Fatal(err)
			}
			s, err := rollback.NewP2P(conn, rollback.Config{NumPlayers: 2, InputDelay: 1, DesyncInterval: 20, EndFrame: frames,
				MaxInputSize: InputSize, Seed: uint64(i + 1), Players: []rollback.Player{
					{Handle: rollback.PlayerHandle(i), Kind: rollback.Local},
					{Handle: rollback.PlayerHandle(1 - i), Kind: rollback.Remote, Addr: addr(1 - i)}}})
			if err != nil {
				t.Fatal(err)
			}
			g, err := New(Config{Players: 2})
			if err != nil {
				t.Fatal(err)
			}
			p := &peer{s: s}
			// Each peer adds its input for the frame it is about to play.
			p.r, err = g.NewRunner(s, runner.Config{
				ReadInput:   func(h rollback.PlayerHandle) []byte { return []byte{Script(s.CurrentFrame()+1, h)} },
				ChecksumAll: true,
				Confirmed: func(f rollback.Frame, sum uint64) {
					if !p.digest.Add(f, sum) {
						t.Errorf("peer %d: frame %d confirmed out of order", i, f)
					}
					if int(f) <= frames && sum != ref[f] {
						t.Errorf("peer %d: frame %d checksum %#x, reference %#x", i, f, sum, ref[f])
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			peers[i] = p
		}
		last := time.Now()
		for !peers[0].r.Finished() || !peers[1].r.Finished() {
			time.Sleep(5 * time.Millisecond)
			now := time.Now()
			for _, p := range peers {
				if _, err := p.r.Update(now.Sub(last)); err != nil {
					t.Fatal(err)
				}
			}
			last = now
		}
		for i, p := range peers {
			st := p.s.Stats()
			t.Logf("peer %d: %+v, %d frames confirmed", i, st, p.digest.Frames())
			if st.Rollbacks == 0 || st.Desyncs != 0 {
				t.Errorf("peer %d: %d rollbacks, %d desyncs", i, st.Rollbacks, st.Desyncs)
			}
			if p.digest.Frames() != frames+1 {
				t.Errorf("peer %d: states 0..%d confirmed, want 0..%d", i, p.digest.Frames()-1, frames)
			}
		}
		if peers[0].digest.String() != peers[1].digest.String() {
			t.Errorf("digests differ: %s %s", peers[0].digest.String(), peers[1].digest.String())
		}
	})
}

// TestSyncTest runs 4 players for 600 frames in SyncTest mode (every frame
// rolled back 7 frames and re-simulated, checksums compared): the game
// is deterministic under rollback, and the boxes really moved and met.
func TestSyncTest(t *testing.T) {
	g, err := New(Config{Players: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 4, CheckDistance: 7, MaxInputSize: InputSize})
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.NewRunner(s, runner.Config{
		ReadInput: func(h rollback.PlayerHandle) []byte { return []byte{Script(s.CurrentFrame(), h)} },
	})
	if err != nil {
		t.Fatal(err)
	}
	start := g.Boxes(nil)
	for range 600 {
		if err := r.RunFrame(); err != nil {
			t.Fatalf("frame %d: %v", r.Frame(), err)
		}
	}
	if g.Frame() != 600 || s.Checked() < (600-8)*6 {
		t.Fatalf("frame %d, %d checksums compared", g.Frame(), s.Checked())
	}
	end := g.Boxes(nil)
	for h := range end {
		if end[h].Pos == start[h].Pos {
			t.Errorf("box %d did not move", h)
		}
	}
}

// TestSyncTestCatchesNondeterminism: a step that reads state from outside
// the world fails SyncTest with a mismatch naming the Box type.
func TestSyncTestCatchesNondeterminism(t *testing.T) {
	g, err := New(Config{Players: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 2, CheckDistance: 3, MaxInputSize: InputSize})
	if err != nil {
		t.Fatal(err)
	}
	outside := int64(0)
	r, err := runner.New(runner.Config{World: g.World(), Registry: g.Registry(), Session: s,
		ReadInput: func(rollback.PlayerHandle) []byte { return []byte{Right} },
		Step: func(ctx *runner.Context) {
			g.Step(ctx)
			outside++ // not rolled back
			for _, b := range g.boxes.All() {
				b.Pos.Y = fixed.FromInt(outside % 100)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err = r.RunFrame(); err != nil {
			break
		}
	}
	var m *rollback.MismatchError
	if !errors.As(err, &m) || len(m.Types) != 1 || m.Types[0] != g.boxes.Info().Name {
		t.Fatalf("want a mismatch naming %s, got %v", g.boxes.Info().Name, err)
	}
}

// TestCollision: two boxes driven into each other never overlap and end up
// side by side.
func TestCollision(t *testing.T) {
	g, err := New(Config{Players: 2}) // box 0 right of centre, box 1 left
	if err != nil {
		t.Fatal(err)
	}
	ctx := &runner.Context{World: g.World(), Inputs: []rollback.Input{{Bytes: []byte{Left}}, {Bytes: []byte{Right}}}}
	for f := range 120 {
		ctx.Frame = rollback.Frame(f)
		g.Step(ctx)
		b := g.Boxes(nil)
		d := b[0].Pos.Sub(b[1].Pos)
		if d.X.Abs() < BoxSize && d.Y.Abs() < BoxSize {
			t.Fatalf("frame %d: boxes overlap: %v %v", f, b[0].Pos, b[1].Pos)
		}
	}
	b := g.Boxes(nil)
	if gap := b[0].Pos.X.Sub(b[1].Pos.X).Sub(BoxSize); gap.Abs() > fixed.One {
		t.Fatalf("boxes pushing each other are %v apart: %v %v", gap, b[0].Pos, b[1].Pos)
	}
}

func TestDigest(t *testing.T) {
	var a, b Digest
	for f := range 10 {
		a.Add(rollback.Frame(f), uint64(f*7))
		b.Add(rollback.Frame(f), uint64(f*7))
	}
	if a.String() != b.String() || a.Frames() != 10 {
		t.Fatalf("equal inputs: %s %s, %d frames", a.String(), b.String(), a.Frames())
	}
	if b.Add(11, 77) || b.Frames() != 10 {
		t.Fatal("a gap was accepted")
	}
	var c Digest
	for f := range 10 {
		c.Add(rollback.Frame(f), uint64(f*7)^uint64(f/9)) // frame 9 differs
	}
	if c.String() == a.String() {
		t.Fatal("different checksums, same digest")
	}
}
