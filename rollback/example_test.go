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
