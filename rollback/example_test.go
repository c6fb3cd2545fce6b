package rollback_test

import (
	"fmt"

	"github.com/rewindgo/rewind/rollback"
)

// A game whose whole state is one struct can drive a session directly.
func Example_syncTest() {
	type state struct {
		frame rollback.Frame
		x     int
	}
	var st state
	saved := map[rollback.Frame]state{}

	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 1, CheckDistance: 2})
	if err != nil {
		panic(err)
	}
	for f := 0; f < 100; f++ {
		_ = s.AddLocalInput(0, []byte{byte(f % 3)})
		reqs, err := s.AdvanceFrame()
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range reqs {
			switch r.Kind {
			case rollback.SaveRequest:
				saved[r.Frame] = st
				s.ReportChecksum(r.Frame, uint64(st.x)<<32|uint64(st.frame), nil)
			case rollback.LoadRequest:
				st = saved[r.Frame]
			case rollback.AdvanceRequest:
				st.x += int(r.Inputs[0].Bytes[0])
				st.frame++
			}
		}
	}
	fmt.Println("frame", st.frame, "x", st.x, "checked", s.Checked())
	// Output: frame 100 x 99 checked 97
}

// A match with Config.EndFrame runs the usual loop until Finished: every
// session type stops advancing at the end frame (a P2P session then also
// waits until every peer has confirmed, checked and recorded every frame).
// Here a SyncTest session plays a 30-frame match.
func Example_endFrame() {
	var s rollback.Session
	s, err := rollback.NewSyncTest(rollback.Config{NumPlayers: 1, EndFrame: 30})
	if err != nil {
		panic(err)
	}
	x, calls := 0, 0
	saved := map[rollback.Frame]int{}
	for !s.Finished() {
		calls++
		for _, h := range s.LocalHandles() {
			_ = s.AddLocalInput(h, []byte{1})
		}
		reqs, err := s.AdvanceFrame()
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range reqs {
			switch r.Kind {
			case rollback.SaveRequest:
				saved[r.Frame] = x
				s.ReportChecksum(r.Frame, uint64(x), nil)
			case rollback.LoadRequest:
				x = saved[r.Frame]
			case rollback.AdvanceRequest:
				x += int(r.Inputs[0].Bytes[0])
			}
		}
	}
	// 30 frames, then 3 calls at frame 30: SyncTest saves the final state
	// and re-simulates the last CheckDistance (2) frames to check them.
	fmt.Println("frame", s.CurrentFrame(), "x", x, "calls", calls)
	_ = s.Close()
	// Output: frame 30 x 30 calls 33
}
