package rollback_test

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// TestDesyncDetectedNamesTypes corrupts one peer's accumulator from frame 150
// on: both peers report exactly the first checked frame after it, name the
// other peer and the differing part ("Acc", not "Pos"), with cross-equal sums.
func TestDesyncDetectedNamesTypes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 3, Default: transport.LinkConfig{Latency: 20 * time.Millisecond}})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{DesyncInterval: 100})
		peers[1].g.corrupt = func(s *stubState) {
			if s.Frame >= 150 && s.Frame < 160 {
				s.Acc ^= 1
			}
		}
		runMatch(t, peers, 260, time.Minute)
		drainMatch(t, peers, 3*time.Second)
		var got [2]rollback.Event
		for i, p := range peers {
			var ds []rollback.Event
			for _, e := range p.events {
				if e.Kind == rollback.EventDesyncDetected {
					ds = append(ds, e)
				}
			}
			if len(ds) != 1 {
				t.Fatalf("peer %d: %d desync events, want 1: %v", i, len(ds), ds)
			}
			got[i] = ds[0]
			if ds[0].Frame != 200 {
				t.Errorf("peer %d: desync at frame %d, want 200", i, ds[0].Frame)
			}
			if want := addrOf(1 - i); ds[0].Addr != want {
				t.Errorf("peer %d: desync addr %v, want %v", i, ds[0].Addr, want)
			}
			if len(ds[0].Types) != 1 || ds[0].Types[0] != "Acc" {
				t.Errorf("peer %d: differing types %v, want [Acc]", i, ds[0].Types)
			}
		}
		if got[0].Local != got[1].Remote || got[0].Remote != got[1].Local || got[0].Local == got[0].Remote {
			t.Errorf("checksums not cross-equal: %+v / %+v", got[0], got[1])
		}
	})
}

func TestDesyncDetectionOffByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 3})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{})
		peers[1].g.corrupt = func(s *stubState) { s.Acc++ }
		runMatch(t, peers, 200, time.Minute)
		for i, p := range peers {
			if n := countEvents(p.events, rollback.EventDesyncDetected); n != 0 {
				t.Fatalf("peer %d: %d desync events with detection off", i, n)
			}
		}
	})
}

// TestPredictionThresholdKeepsRollbacks: 3 peers, one link slow, so peers hit
// the prediction window. A stalled AdvanceFrame still returns its rollback
// (GGRS #70/#75) and says it did not advance; every peer agrees.
func TestPredictionThresholdKeepsRollbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 11, Default: transport.LinkConfig{Latency: 20 * time.Millisecond}})
		defer net.Close()
		slow := transport.LinkConfig{Latency: 140 * time.Millisecond, Jitter: 30 * time.Millisecond}
		net.SetLink(addrOf(0), addrOf(2), slow)
		net.SetLink(addrOf(2), addrOf(0), slow)
		peers := newMatch(t, net, 3, rollback.Config{MaxPrediction: 4, DesyncInterval: 10})
		stalledWithRollback := 0
		for i := 0; i < 3000 && peers[0].s.CurrentFrame() < 600; i++ {
			for _, p := range peers {
				if !p.s.Running() {
					p.step(t)
					continue
				}
				for _, h := range p.s.LocalHandles() {
					_ = p.s.AddLocalInput(h, p.input(p.s.CurrentFrame(), h))
				}
				before := p.s.CurrentFrame()
				reqs, err := p.s.AdvanceFrame()
				if err != nil {
					t.Fatal(err)
				}
				if !p.s.Advanced() {
					if p.s.CurrentFrame() != before {
						t.Fatal("frame moved without Advanced")
					}
					for _, q := range reqs {
						if q.Kind == rollback.AdvanceRequest && q.Frame == before {
							t.Fatal("stalled call advanced the current frame")
						}
						if q.Kind == rollback.LoadRequest {
							stalledWithRollback++
						}
					}
				}
				p.g.run(reqs, p.s)
				p.events = append(p.events, p.s.Events()...)
				c := p.s.ConfirmedFrame() + 1
				for f := c; f >= 0 && p.finals[f] == 0; f-- {
					if st, ok := p.g.saved[f]; ok {
						p.finals[f] = st.checksum()
					}
				}
			}
			time.Sleep(time.Second / 60)
		}
		drainMatch(t, peers, 2*time.Second)
		if stalledWithRollback == 0 {
			t.Error("no stalled call carried a rollback; the scenario does not exercise the threshold")
		}
		if n := compareFinals(t, peers); n < 1000 {
			t.Fatalf("only %d frames compared", n)
		}
		for i, p := range peers {
			t.Logf("peer %d: %+v", i, p.s.Stats())
			if p.s.Stats().Stalls == 0 {
				t.Errorf("peer %d never stalled", i)
			}
			if countEvents(p.events, rollback.EventDesyncDetected) != 0 {
				t.Fatalf("peer %d: desync", i)
			}
		}
	})
}

// TestInterruptedResumedDisconnected checks the notify and timeout timing on
// virtual time: a partition of 1 s gives Interrupted after 500 ms and Resumed
// when healed; a permanent one gives Disconnected at 2 s, and the remaining
// peer keeps advancing with Disconnected inputs.
func TestInterruptedResumedDisconnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 5})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{})
		runMatch(t, peers, 60, time.Minute)
		net.Partition(addrOf(0), addrOf(1))
		cut := time.Now()
		var interruptedAt, resumedAt time.Duration
		for i := 0; i < 60; i++ { // 1 s
			for _, p := range peers {
				p.step(t)
			}
			for _, e := range peers[0].events {
				if e.Kind == rollback.EventNetworkInterrupted && interruptedAt == 0 {
					interruptedAt = time.Since(cut)
					if e.Timeout <= 0 || e.Timeout > 1600*time.Millisecond {
						t.Errorf("interrupted with %v left", e.Timeout)
					}
				}
			}
			time.Sleep(time.Second / 60)
		}
		net.Heal(addrOf(0), addrOf(1))
		for i := 0; i < 30; i++ {
			for _, p := range peers {
				p.step(t)
			}
			if resumedAt == 0 && countEvents(peers[0].events, rollback.EventNetworkResumed) > 0 {
				resumedAt = time.Since(cut)
			}
			time.Sleep(time.Second / 60)
		}
		if interruptedAt < 500*time.Millisecond || interruptedAt > 560*time.Millisecond {
			t.Errorf("interrupted after %v, want about 500ms", interruptedAt)
		}
		if resumedAt < time.Second || resumedAt > 1300*time.Millisecond {
			t.Errorf("resumed after %v, want soon after 1s", resumedAt)
		}
		if countEvents(peers[0].events, rollback.EventDisconnected) != 0 {
			t.Fatal("disconnected by a 1 s partition")
		}

		// Now for good.
		net.Partition(addrOf(0), addrOf(1))
		cut = time.Now()
		var discAt time.Duration
		for i := 0; i < 200 && discAt == 0; i++ {
			for _, p := range peers {
				p.step(t)
			}
			for _, e := range peers[0].events {
				if e.Kind == rollback.EventDisconnected {
					discAt = time.Since(cut)
				}
			}
			time.Sleep(time.Second / 60)
		}
		if discAt < 2*time.Second || discAt > 2100*time.Millisecond {
			t.Fatalf("disconnected after %v, want about 2s", discAt)
		}
		f := peers[0].s.CurrentFrame()
		for i := 0; i < 60; i++ {
			peers[0].step(t)
			time.Sleep(time.Second / 60)
		}
		if peers[0].s.CurrentFrame() < f+59 {
			t.Fatalf("peer 0 did not keep advancing after the disconnect: %d -> %d", f, peers[0].s.CurrentFrame())
		}
		if disc, last := peers[0].s.PlayerStatus(1); !disc || last < 60 {
			t.Fatalf("player 1 status: disconnected=%v last=%d", disc, last)
		}
	})
}

// TestDisconnectAgreement: 4 peers; peer 3 vanishes while the others are
// mid-rollback (lossy links). The survivors agree on one disconnect frame,
// roll back to it where needed, and keep identical checksums.
func TestDisconnectAgreement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 21, Default: transport.LinkConfig{Latency: 50 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.15}})
		defer net.Close()
		peers := newMatch(t, net, 4, rollback.Config{DesyncInterval: 10})
		runMatch(t, peers, 200, time.Minute)
		for i := 0; i < 3; i++ {
			net.Partition(addrOf(3), addrOf(i))
		}
		survivors := peers[:3]
		runMatch(t, survivors, 600, 5*time.Minute)
		drainMatch(t, survivors, 3*time.Second)
		var last rollback.Frame = -2
		for i, p := range survivors {
			disc, lf := p.s.PlayerStatus(3)
			if !disc {
				t.Fatalf("peer %d: player 3 not disconnected", i)
			}
			if last != -2 && lf != last {
				t.Fatalf("peers disagree on player 3's last frame: %d vs %d", last, lf)
			}
			last = lf
			if countEvents(p.events, rollback.EventDesyncDetected) != 0 {
				t.Fatalf("peer %d: desync", i)
			}
			t.Logf("peer %d: %+v, player 3 last frame %d", i, p.s.Stats(), lf)
		}
		if n := compareFinals(t, survivors); n < 1000 {
			t.Fatalf("only %d frames compared", n)
		}
	})
}

func TestDisconnectPlayerErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 1})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{})
		s := peers[0].s
		if err := s.DisconnectPlayer(0); !errors.Is(err, rollback.ErrInvalidHandle) {
			t.Errorf("local handle: %v", err)
		}
		if err := s.DisconnectPlayer(5); !errors.Is(err, rollback.ErrInvalidHandle) {
			t.Errorf("unknown handle: %v", err)
		}
		runMatch(t, peers, 1, time.Minute)
		// Disconnecting a caught-up player at frame 1 needs no rollback.
		if err := s.DisconnectPlayer(1); err != nil {
			t.Fatal(err)
		}
		if err := s.DisconnectPlayer(1); !errors.Is(err, rollback.ErrAlreadyDisconnected) {
			t.Errorf("second disconnect: %v", err)
		}
		_ = s.AddLocalInput(0, []byte{1, 0})
		reqs, err := s.AdvanceFrame()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range reqs {
			if q.Kind == rollback.LoadRequest {
				t.Fatalf("rollback after disconnecting a caught-up player: %v", reqs)
			}
			if q.Kind == rollback.AdvanceRequest && q.Inputs[1].Status != rollback.Disconnected && q.Frame > 0 {
				t.Fatalf("frame %d: player 1 status %v", q.Frame, q.Inputs[1].Status)
			}
		}
	})
}

func TestLockstep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 2, Default: transport.LinkConfig{Latency: 30 * time.Millisecond, Loss: 0.05}})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{Lockstep: true, InputDelay: 2})
		loadsOrSaves := 0
		for i := 0; i < 2000 && (peers[0].s.CurrentFrame() < 300 || peers[1].s.CurrentFrame() < 300); i++ {
			for _, p := range peers {
				if !p.s.Running() {
					p.s.Poll()
					continue
				}
				for _, h := range p.s.LocalHandles() {
					_ = p.s.AddLocalInput(h, p.input(p.s.CurrentFrame(), h))
				}
				reqs, err := p.s.AdvanceFrame()
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range reqs {
					if q.Kind != rollback.AdvanceRequest {
						loadsOrSaves++
					}
					for _, in := range q.Inputs {
						if in.Status != rollback.Confirmed {
							t.Fatalf("lockstep advanced frame %d with a %v input", q.Frame, in.Status)
						}
					}
				}
				p.g.run(reqs, nil)
			}
			time.Sleep(time.Second / 60)
		}
		if loadsOrSaves != 0 {
			t.Fatalf("%d save/load requests in lockstep", loadsOrSaves)
		}
		if peers[0].s.CurrentFrame() < 300 {
			t.Fatalf("lockstep stuck at frame %d", peers[0].s.CurrentFrame())
		}
		a, b := peers[0].g.state, peers[1].g.state
		for a.Frame != b.Frame { // let the one behind catch up
			p := peers[0]
			if b.Frame < a.Frame {
				p = peers[1]
			}
			p.step(t)
			peers[0].s.Poll()
			peers[1].s.Poll()
			time.Sleep(time.Second / 60)
			a, b = peers[0].g.state, peers[1].g.state
		}
		if a != b {
			t.Fatalf("lockstep states differ at frame %d", a.Frame)
		}
	})
}

func TestLockstepStallsWithoutRemote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 2})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{Lockstep: true, InputDelay: 3})
		for i := 0; i < 100 && !(peers[0].s.Running() && peers[1].s.Running()); i++ { // sync
			peers[0].s.Poll()
			peers[1].s.Poll()
			time.Sleep(10 * time.Millisecond)
		}
		// Only peer 0 plays: it may advance the 3 delay frames (default
		// inputs are known on both sides) and then must stall.
		for i := 0; i < 200; i++ {
			_ = peers[0].s.AddLocalInput(0, []byte{1, 0})
			reqs, err := peers[0].s.AdvanceFrame()
			if err != nil {
				t.Fatal(err)
			}
			peers[0].g.run(reqs, nil)
		}
		if f := peers[0].s.CurrentFrame(); f > 3 {
			t.Fatalf("lockstep advanced to frame %d without the remote's inputs", f)
		}
	})
}

// TestInputDelayChange raises and lowers the input delay mid-match on one
// peer (with two local players, one changed): no freeze, equal states.
func TestInputDelayChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 4, Default: transport.LinkConfig{Latency: 25 * time.Millisecond, Loss: 0.05}})
		defer net.Close()
		a, _ := net.Listen(addrOf(0))
		b, _ := net.Listen(addrOf(1))
		// Peer A has players 0 and 1, peer B player 2.
		ca := rollback.Config{NumPlayers: 3, Seed: 1, DesyncInterval: 10, Players: []rollback.Player{
			{Handle: 0, Kind: rollback.Local}, {Handle: 1, Kind: rollback.Local}, {Handle: 2, Kind: rollback.Remote, Addr: addrOf(1)}}}
		cb := rollback.Config{NumPlayers: 3, Seed: 2, DesyncInterval: 10, Players: []rollback.Player{
			{Handle: 0, Kind: rollback.Remote, Addr: addrOf(0)}, {Handle: 1, Kind: rollback.Remote, Addr: addrOf(0)}, {Handle: 2, Kind: rollback.Local}}}
		sa, err := rollback.NewP2P(a, ca)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := rollback.NewP2P(b, cb)
		if err != nil {
			t.Fatal(err)
		}
		if got := sb.HandlesByAddress(addrOf(0)); len(got) != 2 {
			t.Fatalf("handles behind A: %v", got)
		}
		peers := []*peer{
			{s: sa, g: newStubGame(t), conn: a, input: defaultInput, finals: map[rollback.Frame]uint64{}},
			{s: sb, g: newStubGame(t), conn: b, input: defaultInput, finals: map[rollback.Frame]uint64{}},
		}
		runMatch(t, peers, 100, time.Minute)
		if err := sa.SetInputDelay(1, 6); err != nil {
			t.Fatal(err)
		}
		runMatch(t, peers, 250, time.Minute)
		if err := sa.SetInputDelay(1, 1); err != nil {
			t.Fatal(err)
		}
		runMatch(t, peers, 400, time.Minute)
		if err := sb.SetInputDelay(2, 4); err != nil {
			t.Fatal(err)
		}
		runMatch(t, peers, 600, time.Minute)
		drainMatch(t, peers, time.Second)
		if n := compareFinals(t, peers); n < 550 {
			t.Fatalf("only %d frames compared", n)
		}
		if err := sa.SetInputDelay(2, 1); !errors.Is(err, rollback.ErrInvalidHandle) {
			t.Errorf("SetInputDelay on a remote player: %v", err)
		}
		for i, p := range peers {
			if countEvents(p.events, rollback.EventDesyncDetected) != 0 {
				t.Fatalf("peer %d: desync", i)
			}
		}
	})
}

// TestSparseSaving: saves only confirmed (and checked) frames, loads only
// frames it saved, and stays in agreement under loss.
func TestSparseSaving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 8, Default: transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1}})
		defer net.Close()
		peers := newMatch(t, net, 3, rollback.Config{SparseSaving: true, DesyncInterval: 30})
		runMatch(t, peers, 600, 5*time.Minute)
		drainMatch(t, peers, 2*time.Second)
		if n := compareFinals(t, peers); n < 100 {
			t.Fatalf("only %d frames compared", n)
		}
		for i, p := range peers {
			t.Logf("peer %d: %d saves, %d advances, %+v", i, p.g.saves, p.g.advances, p.s.Stats())
			if p.g.saves*3 > p.g.advances {
				t.Errorf("peer %d: %d saves for %d advances: not sparse", i, p.g.saves, p.g.advances)
			}
			if p.s.Stats().Rollbacks == 0 {
				t.Errorf("peer %d: no rollbacks", i)
			}
			if countEvents(p.events, rollback.EventDesyncDetected) != 0 {
				t.Fatalf("peer %d: desync", i)
			}
		}
	})
}

func TestSpectator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 9, Default: transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 0.05}})
		defer net.Close()
		specAddr := netip.MustParseAddrPort("10.0.0.99:7000")
		a, _ := net.Listen(addrOf(0))
		b, _ := net.Listen(addrOf(1))
		sc, _ := net.Listen(specAddr)
		ca := rollback.Config{Seed: 1, Players: []rollback.Player{{Handle: 0, Kind: rollback.Local}, {Handle: 1, Kind: rollback.Remote, Addr: addrOf(1)}, {Handle: 2, Kind: rollback.Spectator, Addr: specAddr}}}
		cb := rollback.Config{Seed: 2, Players: []rollback.Player{{Handle: 0, Kind: rollback.Remote, Addr: addrOf(0)}, {Handle: 1, Kind: rollback.Local}}}
		sa, err := rollback.NewP2P(a, ca)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := rollback.NewP2P(b, cb)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := rollback.NewSpectator(sc, addrOf(0), rollback.Config{MaxFramesBehind: 4, CatchupSpeed: 3})
		if err != nil {
			t.Fatal(err)
		}
		peers := []*peer{
			{s: sa, g: newStubGame(t), input: defaultInput, finals: map[rollback.Frame]uint64{}},
			{s: sb, g: newStubGame(t), input: defaultInput, finals: map[rollback.Frame]uint64{}},
		}
		sg := newStubGame(t)
		maxBatch := 0
		var specEvents []rollback.Event
		step := func(specToo bool) {
			for _, p := range peers {
				p.step(t)
			}
			if specToo {
				reqs, err := spec.AdvanceFrame()
				if err != nil && !errors.Is(err, rollback.ErrWaitingForInput) && !errors.Is(err, rollback.ErrNotSynchronized) {
					t.Fatal(err)
				}
				for _, q := range reqs {
					if q.Kind != rollback.AdvanceRequest {
						t.Fatalf("spectator request %v", q)
					}
				}
				maxBatch = max(maxBatch, len(reqs))
				sg.run(reqs, nil)
			} else {
				spec.Poll()
			}
			specEvents = append(specEvents, spec.Events()...)
			time.Sleep(time.Second / 60)
		}
		for i := 0; i < 300; i++ {
			step(true)
		}
		if maxBatch != 1 {
			t.Errorf("spectator advanced %d frames at once while keeping up", maxBatch)
		}
		// The spectator pauses (a slow machine) for 40 frames, then catches up 3 frames per call.
		for i := 0; i < 40; i++ {
			step(false)
		}
		behind := spec.FramesBehindHost()
		if behind < 30 {
			t.Fatalf("spectator only %d frames behind after a pause", behind)
		}
		for i := 0; i < 30; i++ {
			step(true)
		}
		if maxBatch != 3 {
			t.Errorf("catch-up batch %d, want CatchupSpeed 3", maxBatch)
		}
		if spec.FramesBehindHost() > 10 {
			t.Errorf("still %d frames behind after catching up", spec.FramesBehindHost())
		}
		// Pause longer than the spectator buffer: too far behind is reported.
		for i := 0; i < 90; i++ {
			step(false)
		}
		step(true)
		if countEvents(specEvents, rollback.EventTooFarBehind) != 1 {
			t.Errorf("too-far-behind events: %v", specEvents)
		}
		for i := 0; i < 150; i++ {
			step(true)
		}
		// The spectator's state equals the host's confirmed state at its frame.
		if st, ok := peers[0].g.saved[sg.state.Frame]; !ok || st.checksum() != sg.state.checksum() {
			t.Fatalf("spectator state at frame %d differs from the host's", sg.state.Frame)
		}
	})
}

func TestGarbageAndFloodDoNotHurt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 12, Default: transport.LinkConfig{Latency: 10 * time.Millisecond}})
		defer net.Close()
		peers := newMatch(t, net, 3, rollback.Config{DesyncInterval: 10})
		runMatch(t, peers, 100, time.Minute)
		// Peer 2's process goes rogue: it floods peer 0 with garbage and
		// peer 1 with a flood of valid-looking keep-alive headers.
		evil := peers[2].conn
		junk := bytes.Repeat([]byte{1, 3, 0xff}, 100)
		for i := 0; i < 3000; i++ {
			_ = evil.Send(addrOf(0), junk[:1+i%299])
			_ = evil.Send(addrOf(1), []byte{9, 9, 9, 9})
		}
		runMatch(t, peers[:2], 400, 2*time.Minute)
		drainMatch(t, peers[:2], 3*time.Second)
		st, err := peers[0].s.NetworkStats(2)
		if err != nil {
			t.Fatal(err)
		}
		if st.Malformed+st.Dropped == 0 {
			t.Errorf("garbage not counted: %+v", st)
		}
		if disc, _ := peers[0].s.PlayerStatus(2); !disc {
			t.Error("peer 0 kept a peer that sent 3000 malformed datagrams")
		}
		if n := compareFinals(t, peers[:2]); n < 300 {
			t.Fatalf("only %d frames compared", n)
		}
	})
}

func TestVersionMismatchEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 1})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{})
		// Peer 1 is replaced by a build speaking version 3.
		_ = peers[1].conn.Close()
		fake, _ := net.Listen(netip.MustParseAddrPort("10.0.0.2:7000"))
		for i := 0; i < 20; i++ {
			_ = fake.Send(addrOf(0), []byte{3, 1, 0x34, 0x12, 0, 0, 0, 0})
			peers[0].s.Poll()
			peers[0].events = append(peers[0].events, peers[0].s.Events()...)
			time.Sleep(50 * time.Millisecond)
		}
		var ev []rollback.Event
		for _, e := range peers[0].events {
			if e.Kind == rollback.EventVersionMismatch {
				ev = append(ev, e)
			}
		}
		if len(ev) != 1 || ev[0].Version != 3 || ev[0].Addr != addrOf(1) {
			t.Fatalf("version events %v", ev)
		}
		if peers[0].s.Running() {
			t.Fatal("running with a peer of another version")
		}
	})
}
