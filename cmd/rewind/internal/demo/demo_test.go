package demo

import (
	"bytes"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/transport"
)

func newSyncTest(t *testing.T, g *Game) (*rollback.SyncTestSession, *runner.Runner) {
	t.Helper()
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: g.Config().Players, CheckDistance: 7, MaxInputSize: InputSize})
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.NewRunner(s, runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

func TestSyncTest(t *testing.T) {
	g, err := New(Config{Players: 3, NPCs: 12, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	s, r := newSyncTest(t, g)
	for range 600 {
		if err := r.RunFrame(); err != nil {
			t.Fatalf("frame %d: %v", r.Frame(), err)
		}
	}
	sc := g.Score()
	t.Logf("frames %d, checked %d, loads %d, score %+v, entities %d", r.Frame(), s.Checked(), r.Loads(), sc, g.World().Len())
	if r.Frame() != 600 || sc.Frames != 600 {
		t.Fatalf("at frame %d, score counted %d frames", r.Frame(), sc.Frames)
	}
	if s.Checked() < (600-8)*6 { // each frame after the 8th re-saves 6 frames
		t.Fatalf("only %d frames checked", s.Checked())
	}
	// The run must have exercised spawning and despawning under rollback.
	alive := g.shots.Len()
	if sc.Shots < 20 || int(sc.Shots) <= alive {
		t.Fatalf("%d shots fired, %d alive: spawn/despawn not exercised", sc.Shots, alive)
	}
	if sc.Hits == 0 {
		t.Errorf("no hits in 600 frames")
	}
}

func TestSyncTestCatchesLeak(t *testing.T) {
	g, err := New(Config{Players: 2, NPCs: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	g.leak = true
	_, r := newSyncTest(t, g)
	var err2 error
	for range 100 {
		if err2 = r.RunFrame(); err2 != nil {
			break
		}
	}
	var m *rollback.MismatchError
	if !errors.As(err2, &m) {
		t.Fatalf("want a *rollback.MismatchError, got %v", err2)
	}
	name := ecs.StoreOf[Position](g.World()).Info().Name
	if name != "github.com/rewindgo/rewind/cmd/rewind/internal/demo.Position" {
		t.Fatalf("Position is named %q", name)
	}
	if !slices.Contains(m.Types, name) {
		t.Fatalf("mismatch %v does not name %s", m, name)
	}
	t.Log(m)
}

func TestDeterministic(t *testing.T) {
	sums := make([]uint64, 2)
	for i := range sums {
		g, err := New(Config{Players: 4, NPCs: 8, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		_, r := newSyncTest(t, g)
		for range 200 {
			if err := r.RunFrame(); err != nil {
				t.Fatal(err)
			}
		}
		if sums[i], err = g.Checksum(); err != nil {
			t.Fatal(err)
		}
	}
	if sums[0] != sums[1] {
		t.Fatalf("two games with the same config and inputs differ: %#x %#x", sums[0], sums[1])
	}
}

func TestBot(t *testing.T) {
	changes, fires := 0, 0
	prev := Bot(3, 0, 1)
	for f := rollback.Frame(0); f < 600; f++ {
		in := Bot(3, f, 1)
		if in != Bot(3, f, 1) {
			t.Fatal("Bot is not a pure function")
		}
		if in != prev {
			changes++
		}
		if in[0]&Fire != 0 {
			fires++
		}
		if in[1] >= Directions {
			t.Fatalf("aim %d", in[1])
		}
		prev = in
	}
	// Player 1 holds keys for 10 frames: about 60 stretches.
	if changes < 30 || changes > 60 {
		t.Fatalf("%d input changes in 600 frames", changes)
	}
	if fires == 0 || fires == 600 {
		t.Fatalf("fire held in %d of 600 frames", fires)
	}
	if Bot(3, 5, 0) == Bot(3, 5, 2) && Bot(3, 50, 0) == Bot(3, 50, 2) && Bot(3, 100, 0) == Bot(3, 100, 2) {
		t.Fatal("players share inputs")
	}
}

func TestMeta(t *testing.T) {
	c := Config{Players: 3, NPCs: 7, Seed: 1<<63 + 5}
	got, err := ParseMeta(c.AppendMeta(nil))
	if err != nil || got != c {
		t.Fatalf("ParseMeta = %+v, %v", got, err)
	}
	bad := [][]byte{nil, []byte("rwdemo"), append([]byte("rwdemo"), 2), c.AppendMeta(nil)[:10], append(c.AppendMeta(nil), 0),
		Config{Players: 0, Seed: 1}.AppendMeta(nil), Config{Players: 9}.AppendMeta(nil),
		append([]byte("rwdemo\x01\x83\x00\x07"), make([]byte, 8)...)} // 3 players as a padded varint
	for _, b := range bad {
		if _, err := ParseMeta(b); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseMeta(%q) = %v, want ErrConfig", b, err)
		}
	}
	if _, err := New(Config{Players: 0}); !errors.Is(err, ErrConfig) {
		t.Errorf("New with 0 players: %v", err)
	}
}

// simPeer is one peer of a match on the simulated network.
type simPeer struct {
	g      *Game
	s      *rollback.P2PSession
	r      *runner.Runner
	finals map[rollback.Frame]uint64
	events []rollback.Event
}

func simAddr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), 7000)
}

// simMatch plays a match of n peers on net until every peer reached frames,
// then polls for a second. Peer 0 records into rec when it is not nil.
func simMatch(t *testing.T, net *transport.PacketNetwork, cfg Config, frames rollback.Frame, rec *bytes.Buffer) []*simPeer {
	t.Helper()
	peers := make([]*simPeer, cfg.Players)
	for i := range peers {
		conn, err := net.Listen(simAddr(i))
		if err != nil {
			t.Fatal(err)
		}
		rc := rollback.Config{NumPlayers: cfg.Players, InputDelay: 2, DesyncInterval: 30, MaxInputSize: InputSize, Seed: uint64(i + 1)}
		for j := range cfg.Players {
			p := rollback.Player{Handle: rollback.PlayerHandle(j), Kind: rollback.Local}
			if j != i {
				p.Kind, p.Addr = rollback.Remote, simAddr(j)
			}
			rc.Players = append(rc.Players, p)
		}
		if i == 0 && rec != nil {
			rc.Record, rc.RecordMeta = rec, cfg.AppendMeta(nil)
		}
		s, err := rollback.NewP2P(conn, rc)
		if err != nil {
			t.Fatal(err)
		}
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := &simPeer{g: g, s: s, finals: map[rollback.Frame]uint64{}}
		p.r, err = g.NewRunner(s, runner.Config{ChecksumAll: true, Confirmed: func(f rollback.Frame, sum uint64) { p.finals[f] = sum }})
		if err != nil {
			t.Fatal(err)
		}
		peers[i] = p
	}
	last := time.Now()
	var doneAt time.Time
	for start := last; ; {
		time.Sleep(4 * time.Millisecond)
		now := time.Now()
		dt := now.Sub(last)
		last = now
		done := true
		for _, p := range peers {
			if p.r.Frame() < frames {
				done = false
				if _, err := p.r.Update(dt); err != nil {
					t.Fatal(err)
				}
			} else {
				p.s.Poll()
			}
			p.events = append(p.events, p.s.Events()...)
		}
		if done && doneAt.IsZero() {
			doneAt = now
		}
		if !doneAt.IsZero() && now.Sub(doneAt) >= time.Second {
			break
		}
		if now.Sub(start) > 2*time.Minute {
			t.Fatalf("match did not finish: peer 0 %+v", peers[0].s.Stats())
		}
	}
	for _, p := range peers {
		if err := p.s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return peers
}

// TestRecordReplay records a match on a bad simulated network and plays the
// recording back: every recorded checksum must match.
func TestRecordReplay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 3, Default: transport.LinkConfig{
			Latency: 50 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.05}})
		defer net.Close()
		cfg := Config{Players: 2, NPCs: DefaultNPCs, Seed: 77}
		var rec bytes.Buffer
		peers := simMatch(t, net, cfg, 400, &rec)
		compared := 0
		for f, sum := range peers[0].finals {
			if o, ok := peers[1].finals[f]; ok {
				compared++
				if o != sum {
					t.Fatalf("frame %d: peers disagree: %#x %#x", f, sum, o)
				}
			}
		}
		if compared < 380 {
			t.Fatalf("only %d frames compared", compared)
		}
		for i, p := range peers {
			st := p.s.Stats()
			t.Logf("peer %d: %+v", i, st)
			if st.Desyncs != 0 || st.Rollbacks == 0 {
				t.Fatalf("peer %d: %d desyncs, %d rollbacks", i, st.Desyncs, st.Rollbacks)
			}
		}

		frames, verified, err := replay(t, rec.Bytes(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("replayed %d frames, %d checksums verified", frames, verified)
		// One checksum every 60 frames is recorded (frames 0, 60, ..., 360).
		if frames < 380 || verified < int(frames)/60 {
			t.Fatalf("replayed %d frames, verified %d checksums", frames, verified)
		}

		// A replay with another world (another seed) must be caught.
		_, _, err = replay(t, rec.Bytes(), func(c *Config) { c.Seed++ })
		var m *rollback.MismatchError
		if !errors.As(err, &m) || m.Frame != 0 {
			t.Fatalf("replay with the wrong seed: %v", err)
		}
	})
}

// replay plays a recording through a fresh game built from its metadata.
func replay(t *testing.T, b []byte, tweak func(*Config)) (frames rollback.Frame, verified int, err error) {
	t.Helper()
	s, err := rollback.NewReplay(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseMeta(s.Info().Meta)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(&cfg)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.NewRunner(s, runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if err := r.RunFrame(); err != nil {
			if errors.Is(err, rollback.ErrReplayEnded) {
				return r.Frame(), s.Verified(), nil
			}
			return r.Frame(), s.Verified(), err
		}
	}
}
