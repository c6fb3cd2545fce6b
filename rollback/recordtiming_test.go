package rollback_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// TestRecordingChecksumsUnderBursts: 2 peers whose game loops hiccup the way
// fixed-timestep loops sharing a loaded machine do (the process freezes for
// a few ticks, then each loop runs every frame it owes at once), so a
// peer's confirmed frame jumps by several frames at a time. Peer 0 records
// with a checksum every 60 frames to EndFrame 300; desync detection checks
// every 30 frames and peer 1 differs from frame 150 on. For every seed the
// recording holds the checksums of frames 0, 60, ..., 300, each written
// between the inputs of the frames before it and those of its frame; the
// replay verifies all 6 against the live match; each peer reports exactly
// the desyncs at 150, 180, ..., 300; no checksum was missing. Before, when
// the confirmed frame jumped over the end of a 64-frame inputs block as a
// checksum frame became final, its checksum block was written after the
// next inputs block, where the replay, past that frame, never compared it
// (5 of 12 seeds verified 4 or 5 checksums: TestDemo's "Checksums:5").
func TestRecordingChecksumsUnderBursts(t *testing.T) {
	const end, iv = 300, 60
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: seed, Default: transport.LinkConfig{
					Latency: 15 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.02, Duplicate: 0.02}})
				defer net.Close()
				var rec bytes.Buffer
				cfg := rollback.Config{EndFrame: end, DesyncInterval: 30, InputDelay: 2}
				peers := newMatchWith(t, net, 2, cfg, func(i int, c *rollback.Config) {
					if i == 0 {
						c.Record, c.RecordChecksumInterval = &rec, iv
					}
				})
				// Peer 1's state differs from frame 150 on.
				peers[1].g.corrupt = func(s *stubState) {
					if s.Frame == 150 {
						s.Acc ^= 1
					}
				}
				rng := rand.New(rand.NewPCG(seed, 99))
				runBursty(t, peers, rng, time.Minute)
				if err := peers[0].s.Close(); err != nil {
					t.Fatal(err)
				}
				// Desync detection checked every frame 30, 60, ..., 300.
				for i, p := range peers {
					if n := p.s.Stats().MissingChecksums; n != 0 {
						t.Errorf("peer %d: %d checksums missing", i, n)
					}
					var frames []rollback.Frame
					for _, e := range p.events {
						if e.Kind == rollback.EventDesyncDetected {
							frames = append(frames, e.Frame)
						}
					}
					if want := []rollback.Frame{150, 180, 210, 240, 270, 300}; !slices.Equal(frames, want) {
						t.Errorf("peer %d: desyncs at frames %v, want %v", i, frames, want)
					}
				}
				// Each checksum block comes after the inputs of the frames
				// before its frame, and before the inputs of its frame.
				_, blocks := splitRecording(t, rec.Bytes())
				var sums []rollback.Frame
				for _, b := range blocks {
					if b.kind == blockChecksum {
						sums = append(sums, b.frame)
						if b.frame != b.before {
							t.Errorf("checksum of frame %d written after the inputs of %d frames", b.frame, b.before)
						}
					}
				}
				if want := []rollback.Frame{0, 60, 120, 180, 240, 300}; !slices.Equal(sums, want) {
					t.Errorf("recorded checksums of frames %v, want %v", sums, want)
				}
				verified := replayAll(t, rec.Bytes(), peers[0])
				if want := end/iv + 1; verified != want {
					t.Errorf("replay verified %d checksums, want %d", verified, want)
				}
			})
		})
	}
}

// TestReplayVerifiesLateChecksums: recordings of earlier builds could hold
// a checksum block after the inputs blocks that follow its frame (see
// TestRecordingChecksumsUnderBursts). A replay of a recording whose every
// checksum block was moved two inputs blocks later still verifies all 6
// checksums, and a game that differs from frame 130 on is still caught at
// frame 180. Before, such a replay verified none of the moved checksums and
// passed the differing game.
func TestReplayVerifiesLateChecksums(t *testing.T) {
	var rec bytes.Buffer
	var p0 *peer
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 5, Default: transport.LinkConfig{Latency: 20 * time.Millisecond}})
		defer net.Close()
		peers := newMatchWith(t, net, 2, rollback.Config{EndFrame: 300, InputDelay: 2}, func(i int, c *rollback.Config) {
			if i == 0 {
				c.Record, c.RecordChecksumInterval = &rec, 60
			}
		})
		runToEnd(t, peers, nil, nil, time.Minute)
		if err := peers[0].s.Close(); err != nil {
			t.Fatal(err)
		}
		p0 = peers[0]
	})
	header, blocks := splitRecording(t, rec.Bytes())
	late := slices.Clone(header)
	type held struct {
		data []byte
		wait int
	}
	var hold []held
	moved := 0
	for _, b := range blocks {
		switch b.kind {
		case blockChecksum:
			hold = append(hold, held{b.data, 2})
			continue
		case blockInputs:
			late = append(late, b.data...)
			for i := range hold {
				hold[i].wait--
			}
			for len(hold) > 0 && hold[0].wait == 0 {
				late, hold = append(late, hold[0].data...), hold[1:]
				moved++
			}
			continue
		}
		for _, h := range hold {
			late = append(late, h.data...)
		}
		hold = nil
		late = append(late, b.data...)
	}
	if moved < 4 {
		t.Fatalf("only %d checksum blocks moved behind two inputs blocks", moved)
	}
	if n := replayAll(t, late, p0); n != 6 {
		t.Errorf("replay verified %d checksums, want 6", n)
	}

	r, err := rollback.NewReplay(bytes.NewReader(late))
	if err != nil {
		t.Fatal(err)
	}
	g := newStubGame(t)
	g.corrupt = func(s *stubState) {
		if s.Frame == 130 {
			s.Acc++
		}
	}
	var m *rollback.MismatchError
	for {
		reqs, err := r.AdvanceFrame()
		if errors.As(err, &m) {
			break
		}
		if err != nil {
			t.Fatalf("got %v, want a mismatch", err)
		}
		g.run(reqs, r)
	}
	if m.Frame != 180 || !slices.Equal(m.Types, []string{"Acc"}) {
		t.Fatalf("mismatch %+v, want frame 180 type Acc", m)
	}
}

// TestMissingChecksumsCounted: a game that never reports checksums still
// finishes its match (the session does not wait for them); each peer counts
// the 10 desync-check frames 30..300 as missing, the recording peer also
// the 6 recording frames 0..300, and the recording holds every frame's
// inputs and no checksum.
func TestMissingChecksumsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 3, Default: transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 0.05}})
		defer net.Close()
		var rec bytes.Buffer
		peers := newMatchWith(t, net, 2, rollback.Config{EndFrame: 300, DesyncInterval: 30, InputDelay: 2}, func(i int, c *rollback.Config) {
			if i == 0 {
				c.Record, c.RecordChecksumInterval = &rec, 60
			}
		})
		start := time.Now()
		for !peers[0].s.Finished() || !peers[1].s.Finished() {
			if time.Since(start) > time.Minute {
				t.Fatal("match not finished")
			}
			for _, p := range peers {
				if p.s.Finished() {
					p.s.Poll()
					continue
				}
				for _, h := range p.s.LocalHandles() {
					if err := p.s.AddLocalInput(h, p.input(p.s.CurrentFrame(), h)); err != nil {
						t.Fatal(err)
					}
				}
				reqs, err := p.s.AdvanceFrame()
				if err != nil && !errors.Is(err, rollback.ErrNotSynchronized) {
					t.Fatal(err)
				}
				p.g.run(reqs, nil) // no ReportChecksum
			}
			time.Sleep(time.Second / 60)
		}
		for i, want := range []int{16, 10} {
			if n := peers[i].s.Stats().MissingChecksums; n != want {
				t.Errorf("peer %d: %d missing checksums, want %d", i, n, want)
			}
		}
		if err := peers[0].s.Close(); err != nil {
			t.Fatal(err)
		}
		if r, _ := playReplay(t, rec.Bytes()); r.Frames() != 300 || r.Verified() != 0 {
			t.Errorf("replay: %d frames, %d checksums verified; want 300 and 0", r.Frames(), r.Verified())
		}
	})
}

// runBursty steps the peers like fixed-timestep game loops (runner.Update)
// that run one after the other on a loaded machine, until each is
// Finished: every tick owes each peer one frame; now and then the whole
// process freezes for 2..11 ticks, after which each peer in turn runs all
// the frames it owes at once. A finished peer only polls.
func runBursty(t *testing.T, peers []*peer, rng *rand.Rand, limit time.Duration) {
	t.Helper()
	start := time.Now()
	owed := make([]int, len(peers))
	frozen := 0
	for {
		done := true
		for _, p := range peers {
			done = done && p.s.Finished()
		}
		if done {
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("match not finished within %v", limit)
		}
		if frozen == 0 && rng.IntN(12) == 0 {
			frozen = 2 + rng.IntN(10)
		}
		for i, p := range peers {
			owed[i]++
			if frozen > 0 {
				continue
			}
			if p.s.Finished() {
				p.s.Poll()
				p.events = append(p.events, p.s.Events()...)
				continue
			}
			for ; owed[i] > 0; owed[i]-- {
				p.step(t)
			}
		}
		if frozen > 0 {
			frozen--
		}
		time.Sleep(time.Second / 60)
	}
}

// replayAll plays recording data through a stub game, checks every
// replayed state against the live peer's final states, and returns the
// number of checksums the replay verified.
func replayAll(t *testing.T, data []byte, live *peer) int {
	t.Helper()
	r, g := playReplay(t, data)
	for f, st := range g.saved {
		if sum, ok := live.finals[f]; !ok || sum != st.checksum() {
			t.Errorf("replayed state of frame %d differs from the live match (live known %v)", f, ok)
		}
	}
	return r.Verified()
}

// playReplay plays recording data through a stub game to its end.
func playReplay(t *testing.T, data []byte) (*rollback.ReplaySession, *stubGame) {
	t.Helper()
	r, err := rollback.NewReplay(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	g := newStubGame(t)
	for {
		reqs, err := r.AdvanceFrame()
		if errors.Is(err, rollback.ErrReplayEnded) {
			return r, g
		}
		if err != nil {
			t.Fatal(err)
		}
		g.run(reqs, r)
	}
}

// Block kinds of the recording format (rollback/record.go).
const (
	blockInputs   = 1
	blockChecksum = 2
	blockEnd      = 3
)

// recBlock is one block of a recording: its bytes, its kind, the first
// frame of an inputs block or the frame of a checksum block, and the
// number of frames whose inputs precede it.
type recBlock struct {
	data          []byte
	kind          byte
	frame, before rollback.Frame
}

// splitRecording cuts a recording into its header and its blocks.
func splitRecording(t *testing.T, data []byte) ([]byte, []recBlock) {
	t.Helper()
	r := bytes.NewReader(data)
	uv := func() uint64 {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			t.Fatalf("recording: %v", err)
		}
		return v
	}
	skip := func(n uint64) {
		if _, err := r.Seek(int64(n), io.SeekCurrent); err != nil {
			t.Fatal(err)
		}
	}
	skip(5) // magic, version
	for range 4 {
		uv() // players, input size, FPS, checksum interval
	}
	skip(uv()) // meta
	skip(uv()) // default input
	skip(4)    // CRC
	header := data[:len(data)-r.Len()]
	var blocks []recBlock
	frames := rollback.Frame(0)
	for r.Len() > 0 {
		start := len(data) - r.Len()
		b := recBlock{before: frames}
		b.kind, _ = r.ReadByte()
		switch b.kind {
		case blockInputs:
			b.frame = rollback.Frame(uv())
			n := uv()
			skip(uv())
			frames += rollback.Frame(n)
		case blockChecksum:
			b.frame = rollback.Frame(uv())
			skip(8)
			for range uv() {
				skip(uv() + 8)
			}
		case blockEnd:
			uv()
		default:
			t.Fatalf("unknown block kind %d", b.kind)
		}
		skip(4) // CRC
		b.data = data[start : len(data)-r.Len()]
		blocks = append(blocks, b)
	}
	return header, blocks
}
