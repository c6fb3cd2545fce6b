package rollback_test

import (
	"bytes"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// recordMatch plays a lossy 3-peer match with peer 0 recording, and returns
// the recording and peer 0.
func recordMatch(t *testing.T) ([]byte, *peer) {
	var rec bytes.Buffer
	var p0 *peer
	synctest.Test(t, func(t *testing.T) {
		net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 31, Default: transport.LinkConfig{Latency: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1}})
		defer net.Close()
		peers := newMatch(t, net, 3, rollback.Config{Record: &rec, RecordChecksumInterval: 25, RecordMeta: []byte("seed=31")})
		runMatch(t, peers, 400, time.Minute)
		// Player 2 leaves mid-match: its Disconnected inputs are recorded too.
		net.Partition(addrOf(2), addrOf(0))
		net.Partition(addrOf(2), addrOf(1))
		runMatch(t, peers[:2], 700, time.Minute)
		drainMatch(t, peers[:2], time.Second)
		for _, p := range peers[:2] {
			p.step(t)
		}
		if err := peers[0].s.Close(); err != nil {
			t.Fatal(err)
		}
		p0 = peers[0]
	})
	return rec.Bytes(), p0
}

func TestReplayRoundTrip(t *testing.T) {
	data, p0 := recordMatch(t)
	t.Logf("recording: %d bytes", len(data))
	// The recording of a match re-encodes block by block to itself.
	if read, again, ok := rollback.ReencodeRecording(data); !ok || !bytes.Equal(read, data) || !bytes.Equal(again, data) {
		t.Fatalf("recording re-encoded: ok %v, %d of %d bytes read, equal %v", ok, len(read), len(data), bytes.Equal(again, data))
	}
	r, err := rollback.NewReplay(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if info := r.Info(); info.NumPlayers != 3 || string(info.Meta) != "seed=31" || info.ChecksumInterval != 25 {
		t.Fatalf("info %+v", info)
	}
	g := newStubGame(t)
	disconnected := 0
	for {
		reqs, err := r.AdvanceFrame()
		if errors.Is(err, rollback.ErrReplayEnded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range reqs {
			if q.Kind == rollback.AdvanceRequest && q.Inputs[2].Status == rollback.Disconnected {
				disconnected++
			}
		}
		g.run(reqs, r)
	}
	if r.Frames() < 650 || r.Verified() < 25 {
		t.Fatalf("replayed %d frames, verified %d checksums", r.Frames(), r.Verified())
	}
	if disconnected == 0 {
		t.Fatal("the disconnect was not recorded")
	}
	// Every confirmed state of the live match is reproduced.
	n := 0
	for f, sum := range p0.finals {
		if st, ok := g.saved[f]; ok {
			n++
			if st.checksum() != sum {
				t.Fatalf("frame %d differs from the live match", f)
			}
		}
	}
	if n < 25 {
		t.Fatalf("only %d frames compared with the live match", n)
	}

	// A game that behaves differently is caught, naming the part.
	r2, _ := rollback.NewReplay(bytes.NewReader(data))
	g2 := newStubGame(t)
	g2.corrupt = func(s *stubState) {
		if s.Frame == 300 {
			s.Acc++
		}
	}
	var m *rollback.MismatchError
	for {
		reqs, err := r2.AdvanceFrame()
		if errors.As(err, &m) {
			break
		}
		if err != nil {
			t.Fatalf("got %v, want a mismatch", err)
		}
		g2.run(reqs, r2)
	}
	if m.Frame != 300 || len(m.Types) != 1 || m.Types[0] != "Acc" {
		t.Fatalf("mismatch %+v", m)
	}
}

func TestReplayRejectsBadFiles(t *testing.T) {
	data, _ := recordMatch(t)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XXXX"), data[4:]...),
		"version":   append(append([]byte("RWND"), 9), data[5:]...),
		"truncated": data[:len(data)/2],
		// NumPlayers (3) in two bytes: a varint must be minimal (internal/bin).
		"non-minimal varint": append(append(append([]byte(nil), data[:5]...), data[5]|0x80, 0), data[6:]...),
	} {
		r, err := rollback.NewReplay(bytes.NewReader(b))
		for err == nil {
			_, err = r.AdvanceFrame()
		}
		if !errors.Is(err, rollback.ErrRecording) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
