package rollback_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

func kinds(reqs []rollback.Request) string {
	var b bytes.Buffer
	for i, r := range reqs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.String())
	}
	return b.String()
}

func runSyncTest(t *testing.T, s *rollback.SyncTestSession, g *stubGame, frames int) error {
	t.Helper()
	for f := 0; f < frames; f++ {
		for h := 0; h < s.NumPlayers(); h++ {
			if err := s.AddLocalInput(rollback.PlayerHandle(h), defaultInput(s.CurrentFrame(), rollback.PlayerHandle(h))); err != nil {
				t.Fatal(err)
			}
		}
		reqs, err := s.AdvanceFrame()
		if err != nil {
			return err
		}
		g.run(reqs, s)
	}
	return nil
}

func TestSyncTestRequestSequences(t *testing.T) {
	for _, tc := range []struct {
		dist int
		want []string
	}{
		{rollback.NoCheck, []string{"advance(0)", "advance(1)", "advance(2)", "advance(3)"}},
		{1, []string{"save(0) advance(0)", "save(1) advance(1)", "load(1) advance(1) save(2) advance(2)", "load(2) advance(2) save(3) advance(3)"}},
		{2, []string{"save(0) advance(0)", "save(1) advance(1)", "save(2) advance(2)", "load(1) advance(1) save(2) advance(2) save(3) advance(3)"}},
	} {
		t.Run(fmt.Sprint(tc.dist), func(t *testing.T) {
			s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 1, CheckDistance: tc.dist})
			if err != nil {
				t.Fatal(err)
			}
			g := newStubGame(t)
			for i, want := range tc.want {
				_ = s.AddLocalInput(0, []byte{byte(i), 0})
				reqs, err := s.AdvanceFrame()
				if err != nil {
					t.Fatal(err)
				}
				if got := kinds(reqs); got != want {
					t.Fatalf("frame %d: %s, want %s", i, got, want)
				}
				g.run(reqs, s)
			}
		})
	}
}

func TestSyncTestDeterministicGamePasses(t *testing.T) {
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 3, CheckDistance: 7, InputDelay: 2})
	if err != nil {
		t.Fatal(err)
	}
	g := newStubGame(t)
	if err := runSyncTest(t, s, g, 300); err != nil {
		t.Fatal(err)
	}
	if s.Checked() < 290*6 { // frames target+1..current-1 are re-saved each call
		t.Fatalf("only %d checksums compared", s.Checked())
	}
}

// TestSyncTestCatchesNonDeterminism: a system that reads state outside the
// world (a counter that is not rolled back) is caught, with the frame and
// the differing part named, as an error value.
func TestSyncTestCatchesNonDeterminism(t *testing.T) {
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 2, CheckDistance: 2})
	if err != nil {
		t.Fatal(err)
	}
	g := newStubGame(t)
	outside := uint64(0)
	g.corrupt = func(st *stubState) {
		outside++
		if st.Frame > 50 {
			st.Acc += outside // depends on how often the frame was simulated
		}
	}
	err = runSyncTest(t, s, g, 100)
	var m *rollback.MismatchError
	if !errors.As(err, &m) || !errors.Is(err, rollback.ErrMismatchedChecksum) {
		t.Fatalf("got %v, want a MismatchError", err)
	}
	if m.Frame < 51 || m.Frame > 54 || len(m.Types) != 1 || m.Types[0] != "Acc" {
		t.Fatalf("mismatch %+v: want a frame just after 50 and types [Acc]", m)
	}
}

func TestSyncTestRejectsConfigs(t *testing.T) {
	for _, c := range []rollback.Config{
		{SparseSaving: true},
		{CheckDistance: 8},
		{CheckDistance: -2},
		{NumPlayers: 9},
	} {
		if _, err := rollback.NewSyncTest(c); !errors.Is(err, rollback.ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	a1 := addrOf(1)
	local := rollback.Player{Handle: 0, Kind: rollback.Local}
	remote := rollback.Player{Handle: 1, Kind: rollback.Remote, Addr: a1}
	cases := map[string]rollback.Config{
		"duplicate handle":      {Players: []rollback.Player{local, local, remote}},
		"missing player":        {Players: []rollback.Player{local}},
		"local out of range":    {Players: []rollback.Player{local, remote, {Handle: 2, Kind: rollback.Local}}},
		"remote without addr":   {Players: []rollback.Player{local, {Handle: 1, Kind: rollback.Remote}}},
		"spectator handle low":  {Players: []rollback.Player{local, remote, {Handle: 1, Kind: rollback.Spectator, Addr: addrOf(5)}}},
		"fps negative":          {FPS: -1, Players: []rollback.Player{local, remote}},
		"prediction too large":  {MaxPrediction: 99, Players: []rollback.Player{local, remote}},
		"lockstep + prediction": {Lockstep: true, MaxPrediction: 4, Players: []rollback.Player{local, remote}},
		"input delay":           {InputDelay: 31, Players: []rollback.Player{local, remote}},
		"desync interval":       {DesyncInterval: -5, Players: []rollback.Player{local, remote}},
		"notify > timeout":      {DisconnectNotifyDelay: 3 * time.Second, Players: []rollback.Player{local, remote}},
		"default input size":    {MaxInputSize: 2, DefaultInput: []byte{1, 2, 3}, Players: []rollback.Player{local, remote}},
		"max frames behind":     {MaxFramesBehind: 60, Players: []rollback.Player{local, remote}},
		"spectator same addr":   {Players: []rollback.Player{local, remote, {Handle: 2, Kind: rollback.Spectator, Addr: a1}}},
	}
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{})
		defer net.Close()
		conn, _ := net.Listen(addrOf(0))
		for name, c := range cases {
			if _, err := rollback.NewP2P(conn, c); !errors.Is(err, rollback.ErrInvalidConfig) {
				t.Errorf("%s: got %v", name, err)
			}
		}
		// Valid: 1 local + 3 remote + 1 spectator; catch-up may exceed max frames behind.
		ok := rollback.Config{NumPlayers: 4, CatchupSpeed: 20, MaxFramesBehind: 4, Players: []rollback.Player{local,
			{Handle: 1, Kind: rollback.Remote, Addr: a1}, {Handle: 2, Kind: rollback.Remote, Addr: addrOf(2)},
			{Handle: 3, Kind: rollback.Remote, Addr: addrOf(3)}, {Handle: 4, Kind: rollback.Spectator, Addr: addrOf(4)}}}
		s, err := rollback.NewP2P(conn, ok)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.RemoteHandles()) != 3 || len(s.SpectatorHandles()) != 1 || s.MaxPrediction() != 8 {
			t.Fatalf("handles %v %v prediction %d", s.RemoteHandles(), s.SpectatorHandles(), s.MaxPrediction())
		}
		if _, err := s.NetworkStats(0); !errors.Is(err, rollback.ErrInvalidHandle) {
			t.Errorf("stats of a local player: %v", err)
		}
		if _, err := s.NetworkStats(4); !errors.Is(err, rollback.ErrNotSynchronized) {
			t.Errorf("stats of an unsynchronized spectator: %v", err)
		}
		if err := s.AddLocalInput(0, make([]byte, 17)); !errors.Is(err, rollback.ErrInputTooLarge) {
			t.Errorf("oversize input: %v", err)
		}
		if _, err := s.AdvanceFrame(); !errors.Is(err, rollback.ErrNotSynchronized) {
			t.Errorf("advance before sync: %v", err)
		}
	})
}

// TestSinglePlayerRunsAtOnce: with no remote players or spectators a session
// is running from the start; missing local input is an error.
func TestSinglePlayerRunsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{})
		defer net.Close()
		conn, _ := net.Listen(addrOf(0))
		s, err := rollback.NewP2P(conn, rollback.Config{NumPlayers: 1, Players: []rollback.Player{{Handle: 0, Kind: rollback.Local}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AdvanceFrame(); !errors.Is(err, rollback.ErrMissingInput) {
			t.Fatalf("advance without input: %v", err)
		}
		g := newStubGame(t)
		for i := 0; i < 20; i++ {
			_ = s.AddLocalInput(0, []byte{1, 0})
			reqs, err := s.AdvanceFrame()
			if err != nil {
				t.Fatal(err)
			}
			g.run(reqs, s)
		}
		if g.state.Frame != 20 || g.loads != 0 {
			t.Fatalf("frame %d loads %d", g.state.Frame, g.loads)
		}
	})
}
