package rollback_test

import (
	"bytes"
	"testing"

	"github.com/rewindgo/rewind/rollback"
)

// FuzzReplay: a recording read from hostile bytes is refused or replays
// (bounded work) without panicking, with one input per player per frame.
func FuzzReplay(f *testing.F) {
	f.Add([]byte("RWND\x01\x02\x02\x3c\x3c\x00\x00\x01\x00\x01\x01\x00\x03\x01"))
	f.Add([]byte("RWND\x01\x01\x01\x01\x01\x00\x00\x03\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
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
