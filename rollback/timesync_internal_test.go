package rollback

import "testing"

// TestFramesAheadRounds pins the decision to round the averaged frame
// advantage to the nearest frame (halves away from zero) where GGRS
// truncates toward zero: a lead of 1.5 frames reads 2 (GGRS: 1), 0.5 reads
// 1 (GGRS: 0, so a runner would not slow down), and leads behind mirror it.
func TestFramesAheadRounds(t *testing.T) {
	for _, c := range []struct{ remote, local, want int }{
		{3, 0, 2}, {1, 0, 1}, {0, 3, -2}, {0, 1, -1}, {2, 0, 1}, {0, 0, 0}, {4, -4, 4},
	} {
		var e endpoint
		for i := range e.localWindow {
			e.localWindow[i], e.remoteWindow[i] = c.local, c.remote
		}
		if got := e.framesAhead(); got != c.want {
			t.Errorf("remote %d, local %d: framesAhead %d, want %d", c.remote, c.local, got, c.want)
		}
	}
}

// TestNoAdvantageBeforeFirstInput: until a peer's first input arrives its
// frame is unknown, and the sample is 0 (as in GGRS), not "frame -1" (which
// made a session at frame 50 look 51 frames ahead of a peer whose inputs
// were merely in flight). Once an input arrives the estimate is used.
func TestNoAdvantageBeforeFirstInput(t *testing.T) {
	n := netcore{cfg: &resolved{Config: Config{FPS: 60}}}
	e := &endpoint{epRecv: epRecv{lastRecv: NullFrame}}
	n.updateAdvantage(e, 50)
	if e.localAdv != 0 || e.framesAhead() != 0 {
		t.Fatalf("before any input: local advantage %d, frames ahead %d; want 0, 0", e.localAdv, e.framesAhead())
	}
	e.lastRecv = 47
	n.updateAdvantage(e, 50)
	if e.localAdv != -3 {
		t.Fatalf("after input of frame 47 at frame 50: local advantage %d, want -3", e.localAdv)
	}
}
