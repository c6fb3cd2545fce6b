package rollback_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rewindgo/rewind/rollback"
)

// FuzzReplay: a recording read from hostile bytes is refused or replays
// (bounded work) without panicking, with one input per player per frame;
// the blocks of a version 2 recording the reader accepts re-encode to
// exactly the bytes read (see ReencodeRecording: the format has one
// encoding per block, not one block order per match).
func FuzzReplay(f *testing.F) {
	f.Add([]byte("RWND\x01\x02\x02\x3c\x3c\x00\x00\x01\x00\x01\x01\x00\x03\x01"))
	f.Add([]byte("RWND\x01\x01\x01\x01\x01\x00\x00\x03\x00"))
	f.Add(rollback.SampleRecording(1, 3))
	f.Add(rollback.SampleRecording(2, 70))
	f.Fuzz(func(t *testing.T, b []byte) {
		if read, again, ok := rollback.ReencodeRecording(b); ok && !bytes.Equal(read, again) {
			t.Fatalf("recording\n%x\nre-encodes to\n%x", read, again)
		}
		r, err := rollback.NewReplay(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := 0; i < 10000; i++ {
			reqs, err := r.AdvanceFrame()
			if err != nil {
				return
			}
			for _, q := range reqs {
				if q.Kind == rollback.SaveRequest {
					r.ReportChecksum(q.Frame, 1, nil)
				}
				if q.Kind == rollback.AdvanceRequest && len(q.Inputs) != r.Info().NumPlayers {
					t.Fatalf("%d inputs", len(q.Inputs))
				}
			}
		}
	})
}

// The fuzz seeds are recordings the reader accepts and that re-encode to
// themselves.
func TestRecordingReencodes(t *testing.T) {
	for _, b := range [][]byte{rollback.SampleRecording(1, 3), rollback.SampleRecording(2, 70), rollback.SampleRecording(3, 200)} {
		read, again, ok := rollback.ReencodeRecording(b)
		if !ok || !bytes.Equal(read, b) || !bytes.Equal(again, b) {
			t.Fatalf("ok %v, read %d of %d bytes, re-encoding equal: %v", ok, len(read), len(b), bytes.Equal(again, b))
		}
		r, err := rollback.NewReplay(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		for {
			reqs, err := r.AdvanceFrame()
			if err != nil {
				if !errors.Is(err, rollback.ErrReplayEnded) {
					t.Fatal(err)
				}
				break
			}
			for _, q := range reqs {
				if q.Kind == rollback.SaveRequest {
					r.ReportChecksum(q.Frame, uint64(q.Frame)*0x9e3779b97f4a7c15, []rollback.Part{{Name: "pos", Sum: uint64(q.Frame)}})
				}
			}
		}
		if r.Verified() == 0 {
			t.Fatal("no checksum verified")
		}
	}
}
