package runner_test

import (
	"bytes"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
	"github.com/rewindgo/rewind/transport"
)

// marker is a resource that the step of one peer sets wrongly for a single
// frame: a transient desync, visible only in the saved state of that frame.
type marker struct{ V int64 }

// markerRunner builds a Runner over a new world whose only saved state is a
// marker resource, starting at 0. cfg gives the session and the options;
// each step sets the marker to next(the old value, the step's context).
func markerRunner(t *testing.T, cfg runner.Config, next func(old int64, ctx *runner.Context) int64) *runner.Runner {
	t.Helper()
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := snapshot.CopyResource[marker](reg); err != nil {
		t.Fatal(err)
	}
	m := ecs.ResourceOf[marker](w)
	m.Set(marker{})
	cfg.World, cfg.Registry = w, reg
	cfg.Step = func(ctx *runner.Context) {
		old, _ := m.Get()
		m.Set(marker{next(old.V, ctx)})
	}
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// lanMatch plays a 2-peer match on a fast simulated network (2 ms latency,
// input delay 2), where every frame is confirmed by the time the next one
// is simulated. Peer 0 records with the given checksum interval; peer 1's
// state at frame badFrame (if not negative) differs from peer 0's. It
// returns the recording and each peer's events.
func lanMatch(t *testing.T, frames, recordEvery, desyncEvery int, badFrame rollback.Frame) ([]byte, [2][]rollback.Event) {
	var rec bytes.Buffer
	var events [2][]rollback.Event
	net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 2, Default: transport.LinkConfig{Latency: 2 * time.Millisecond}})
	defer net.Close()
	var runners [2]*runner.Runner
	var sessions [2]*rollback.P2PSession
	for i := range 2 {
		conn, err := net.Listen(simAddr(i))
		if err != nil {
			t.Fatal(err)
		}
		cfg := rollback.Config{NumPlayers: 2, InputDelay: 2, DesyncInterval: desyncEvery, Seed: uint64(i + 1),
			Players: []rollback.Player{{Handle: rollback.PlayerHandle(i), Kind: rollback.Local},
				{Handle: rollback.PlayerHandle(1 - i), Kind: rollback.Remote, Addr: simAddr(1 - i)}}}
		if i == 0 {
			cfg.Record, cfg.RecordChecksumInterval = &rec, recordEvery
		}
		s, err := rollback.NewP2P(conn, cfg)
		if err != nil {
			t.Fatal(err)
		}
		bad := i == 1
		r := markerRunner(t, runner.Config{Session: s,
			ReadInput: func(h rollback.PlayerHandle) []byte { return botInput(s.CurrentFrame(), h) }},
			func(_ int64, ctx *runner.Context) int64 {
				if bad && ctx.Frame+1 == badFrame {
					return -1 // the state at badFrame differs
				}
				return int64(ctx.Frame)
			})
		runners[i], sessions[i] = r, s
	}
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		for i, r := range runners {
			if r.Frame() < rollback.Frame(frames) {
				if _, err := r.Update(time.Second / 60); err != nil {
					t.Fatal(err)
				}
			} else {
				sessions[i].Poll()
			}
			events[i] = append(events[i], sessions[i].Events()...)
		}
		if runners[0].Frame() >= rollback.Frame(frames) && runners[1].Frame() >= rollback.Frame(frames) {
			break
		}
		time.Sleep(time.Second / 60)
	}
	for i, s := range sessions {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		events[i] = append(events[i], s.Events()...)
	}
	return rec.Bytes(), events
}

// TestRecordingKeepsEveryChecksum: a recording holds a checksum for every
// RecordChecksumInterval-th confirmed frame. (Regression: the session once
// looked for the checksum of the current frame before its save had been
// carried out, and skipped it on fast links.)
func TestRecordingKeepsEveryChecksum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const frames, every = 300, 10
		rec, _ := lanMatch(t, frames, every, 0, -1)
		s, err := rollback.NewReplay(bytes.NewReader(rec))
		if err != nil {
			t.Fatal(err)
		}
		r := markerRunner(t, runner.Config{Session: s},
			func(_ int64, ctx *runner.Context) int64 { return int64(ctx.Frame) })
		for err == nil {
			err = r.RunFrame()
		}
		if !errors.Is(err, rollback.ErrReplayEnded) {
			t.Fatal(err)
		}
		want := int(s.Frames()-1)/every + 1 // frames 0, 10, ... below the recorded count
		if s.Verified() < want-1 {
			t.Errorf("replay of %d frames verified %d checksums, want %d (one every %d frames)", s.Frames(), s.Verified(), want, every)
		}
	})
}

// TestDesyncAtCheckedFrame: peer 1's state differs from peer 0's at frame 60
// only, a desync-check frame; the peers must report the desync (the same
// regression as TestRecordingKeepsEveryChecksum).
func TestDesyncAtCheckedFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, events := lanMatch(t, 200, 60, 30, 60)
		n := 0
		for i := range events {
			for _, ev := range events[i] {
				if ev.Kind == rollback.EventDesyncDetected {
					n++
					if ev.Frame != 60 {
						t.Errorf("peer %d: desync reported at frame %d, want 60", i, ev.Frame)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("the desync at frame 60 was not detected")
		}
	})
}
