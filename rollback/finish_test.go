package rollback_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// runToEnd steps every peer until each reports Finished (a finished peer
// keeps polling, as a game would until it closes the session), and the
// spectator session and game, if any, along. It fails after limit.
func runToEnd(t testing.TB, peers []*peer, spec *rollback.SpectatorSession, sg *stubGame, limit time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		done := spec == nil || spec.Finished()
		for _, p := range peers {
			done = done && p.s.Finished()
		}
		if done {
			return
		}
		if time.Since(start) > limit {
			for i, p := range peers {
				t.Logf("peer %d: finished %v, %+v", i, p.s.Finished(), p.s.Stats())
			}
			t.Fatalf("match not finished within %v", limit)
		}
		for _, p := range peers {
			if p.s.Finished() {
				p.s.Poll()
				p.events = append(p.events, p.s.Events()...)
			} else {
				p.step(t)
			}
		}
		if spec != nil {
			reqs, err := spec.AdvanceFrame()
			if err != nil && !errors.Is(err, rollback.ErrWaitingForInput) && !errors.Is(err, rollback.ErrNotSynchronized) {
				t.Fatal(err)
			}
			sg.run(reqs, nil)
		}
		time.Sleep(time.Second / 60)
	}
}

// TestEndFrameSettlesEveryFrame: 3 peers and a spectator over lossy,
// duplicating, jittery links play a match of EndFrame 300 frames with
// recording and desync checks. When every peer is Finished, each has
// confirmed all of frames 0..299 (and the state of frame 300), every peer
// holds the same checksum for each of the 301 states, the spectator reached
// frame 300 with the host's state, and the recording replays all 300 frames
// and verifies the checksum of frame 300 itself. Before EndFrame, the
// confirmed frame stopped a few frames short and the recording held fewer
// frames than were played.
func TestEndFrameSettlesEveryFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const end = 300
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 41, Default: transport.LinkConfig{
			Latency: 40 * time.Millisecond, Jitter: 15 * time.Millisecond, Loss: 0.2, Duplicate: 0.1}})
		defer net.Close()
		var rec bytes.Buffer
		specAddr := netip.MustParseAddrPort("10.0.0.99:7000")
		cfg := rollback.Config{EndFrame: end, DesyncInterval: 50, InputDelay: 2}
		peers := newMatchWith(t, net, 3, cfg, func(i int, c *rollback.Config) {
			if i == 0 { // peer 0 records and hosts a spectator
				c.Record, c.RecordChecksumInterval = &rec, 60
				c.Players = append(c.Players, rollback.Player{Handle: 3, Kind: rollback.Spectator, Addr: specAddr})
			}
		})
		sc, _ := net.Listen(specAddr)
		spec, err := rollback.NewSpectator(sc, addrOf(0), rollback.Config{NumPlayers: 3, EndFrame: end})
		if err != nil {
			t.Fatal(err)
		}
		sg := newStubGame(t)
		runToEnd(t, peers, spec, sg, time.Minute)

		for i, p := range peers {
			if f := p.s.CurrentFrame(); f != end {
				t.Errorf("peer %d at frame %d, want %d", i, f, end)
			}
			if f := p.s.ConfirmedFrame(); f != end-1 {
				t.Errorf("peer %d confirmed frame %d, want %d", i, f, end-1)
			}
			for f := rollback.Frame(0); f <= end; f++ {
				if _, ok := p.finals[f]; !ok {
					t.Fatalf("peer %d: the state of frame %d never became final", i, f)
				}
			}
			if n := countEvents(p.events, rollback.EventDesyncDetected); n != 0 {
				t.Errorf("peer %d: %d desync events", i, n)
			}
		}
		if n := compareFinals(t, peers); n != 2*(end+1) {
			t.Errorf("%d frame checksums compared, want %d", n, 2*(end+1))
		}
		if sg.state.Frame != end || sg.state.checksum() != peers[0].finals[end] {
			t.Errorf("spectator at frame %d, state equal to the host's: %v", sg.state.Frame, sg.state.checksum() == peers[0].finals[end])
		}
		if err := peers[0].s.Close(); err != nil {
			t.Fatal(err)
		}

		r, err := rollback.NewReplay(bytes.NewReader(rec.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		g := newStubGame(t)
		for {
			reqs, err := r.AdvanceFrame()
			if errors.Is(err, rollback.ErrReplayEnded) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			g.run(reqs, r)
		}
		if !r.Finished() || r.Frames() != end || g.state.Frame != end {
			t.Errorf("replay: finished %v, %d frames recorded, state at frame %d; want %d", r.Finished(), r.Frames(), g.state.Frame, end)
		}
		if want := end/60 + 1; r.Verified() != want { // frames 0, 60, ..., 300
			t.Errorf("replay verified %d checksums, want %d", r.Verified(), want)
		}
	})
}

// TestPollConfirmsTail: once the peers stop advancing (no EndFrame), Poll
// alone confirms every frame they simulated when no rollback is due (here
// the inputs never change, so no prediction fails; a due rollback needs
// AdvanceFrame, which is why matches end with EndFrame). Before,
// ConfirmedFrame moved only inside AdvanceFrame and stayed short of the last
// frames.
func TestPollConfirmsTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 43, Default: transport.LinkConfig{Latency: 30 * time.Millisecond}})
		defer net.Close()
		peers := newMatch(t, net, 2, rollback.Config{})
		for _, p := range peers {
			p.input = func(rollback.Frame, rollback.PlayerHandle) []byte { return []byte{1, 0} }
		}
		runMatch(t, peers, 120, time.Minute)
		drainMatch(t, peers, time.Second)
		for i, p := range peers {
			if c, f := p.s.ConfirmedFrame(), p.s.CurrentFrame(); c != f-1 {
				t.Errorf("peer %d: confirmed frame %d after polling, current frame %d", i, c, f)
			}
		}
	})
}

// TestEndFrameNeedsNoInput: at EndFrame AdvanceFrame no longer asks for
// local inputs and does not advance past it; a SyncTest session then saves
// the final state and re-simulates its last CheckDistance frames, so every
// state 0..N is compared and confirmed before it is Finished.
func TestEndFrameNeedsNoInput(t *testing.T) {
	s, err := rollback.NewSyncTest(rollback.Config{EndFrame: 5, NumPlayers: 1, CheckDistance: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		_ = s.AddLocalInput(0, []byte{1})
		if _, err := s.AdvanceFrame(); err != nil {
			t.Fatal(err)
		}
	}
	kinds := func(reqs []rollback.Request) string {
		var b strings.Builder
		for _, q := range reqs {
			fmt.Fprintf(&b, "%c%d ", " SLA"[q.Kind], q.Frame)
		}
		return b.String()
	}
	for i, want := range []string{"S5 ", "L3 A3 S4 A4 S5 ", "L4 A4 S5 "} {
		if s.Finished() {
			t.Fatalf("finished before call %d at the end", i)
		}
		reqs, err := s.AdvanceFrame()
		if got := kinds(reqs); err != nil || got != want || s.CurrentFrame() != 5 {
			t.Fatalf("call %d at the end: %q, %v, frame %d; want %q", i, got, err, s.CurrentFrame(), want)
		}
	}
	if !s.Finished() || s.ConfirmedFrame() != 4 {
		t.Fatalf("finished %v, confirmed frame %d; want true, 4 (every state 0..5 final)", s.Finished(), s.ConfirmedFrame())
	}
	if reqs, err := s.AdvanceFrame(); len(reqs) != 0 || err != nil {
		t.Fatalf("after finishing: %v, %v", reqs, err)
	}
	if _, err := rollback.NewSyncTest(rollback.Config{EndFrame: -1}); !errors.Is(err, rollback.ErrInvalidConfig) {
		t.Errorf("EndFrame -1: %v", err)
	}
}
