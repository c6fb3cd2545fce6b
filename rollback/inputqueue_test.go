package rollback

import (
	"bytes"
	"testing"
)

func in(b ...byte) []byte { return b }

func TestInputQueueSequentialGapsAndDuplicates(t *testing.T) {
	q := newInputQueue(4, PredictRepeatLast{}, nil)
	if !q.addRemote(0, in(1)) || !q.addRemote(1, in(2)) {
		t.Fatal("sequential inputs refused")
	}
	if q.addRemote(1, in(9)) || q.addRemote(5, in(9)) {
		t.Fatal("duplicate or gap accepted")
	}
	if b, st := q.input(1); !bytes.Equal(b, in(2)) || st != Confirmed {
		t.Fatalf("input(1) = %v %v", b, st)
	}
}

func TestInputQueueDelay(t *testing.T) {
	q := newInputQueue(4, PredictRepeatLast{}, in(0))
	q.delay = 2
	for f := Frame(0); f < 10; f++ {
		if got := q.addLocal(f, in(byte(f+1))); got != f+2 {
			t.Fatalf("input of frame %d landed on %d", f, got)
		}
	}
	// input(i) is the input added at max(0, i-2); frames 0 and 1 are the default.
	for f := Frame(0); f < 12; f++ {
		b, _ := q.input(f)
		want := in(0)
		if f >= 2 {
			want = in(byte(f - 1))
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("input(%d) = %v, want %v", f, b, want)
		}
	}
}

func TestInputQueueRaiseAndLowerDelay(t *testing.T) {
	q := newInputQueue(4, PredictRepeatLast{}, nil)
	for f := Frame(0); f < 5; f++ {
		q.addLocal(f, in(byte(f)))
	}
	q.delay = 2 // frames 5 and 6 repeat the last input, frame 5's input lands on 7
	if got := q.addLocal(5, in(5)); got != 7 {
		t.Fatalf("landed on %d", got)
	}
	for f, want := range map[Frame]byte{5: 4, 6: 4, 7: 5} {
		if b := q.get(f); !bytes.Equal(b, in(want)) {
			t.Fatalf("frame %d = %v, want %d", f, b, want)
		}
	}
	q.delay = 0 // frame 6's input would land on 6: taken, dropped; frame 8 lands on 8
	if got := q.addLocal(6, in(6)); got != NullFrame {
		t.Fatalf("lowered delay: landed on %d", got)
	}
	if got := q.addLocal(8, in(8)); got != 8 {
		t.Fatalf("landed on %d", got)
	}
}

func TestInputQueuePrediction(t *testing.T) {
	q := newInputQueue(4, PredictRepeatLast{}, in(7))
	// Nothing received: the default input, without calling the predictor.
	if b, st := q.input(0); !bytes.Equal(b, in(7)) || st != Predicted {
		t.Fatalf("input(0) = %v %v", b, st)
	}
	q.addRemote(0, in(7)) // matches the prediction
	if q.firstIncorrect != NullFrame {
		t.Fatal("correct prediction flagged")
	}
	q.input(1)
	q.input(2)
	q.input(3)
	q.addRemote(1, in(7))
	q.addRemote(2, in(8)) // differs
	q.addRemote(3, in(9))
	if q.firstIncorrect != 2 {
		t.Fatalf("first incorrect %d, want 2", q.firstIncorrect)
	}
	q.resetPrediction()
	if q.firstIncorrect != NullFrame || q.predicting {
		t.Fatal("reset kept prediction state")
	}
	if b, st := q.input(4); !bytes.Equal(b, in(9)) || st != Predicted {
		t.Fatalf("repeat-last prediction %v %v", b, st)
	}
	d := newInputQueue(4, PredictDefault{Input: in(0)}, nil)
	d.addRemote(0, in(5))
	if b, _ := d.input(1); !bytes.Equal(b, in(0)) {
		t.Fatalf("default predictor gave %v", b)
	}
}

func TestInputQueueWrapsAndDiscards(t *testing.T) {
	q := newInputQueue(2, PredictRepeatLast{}, nil)
	for f := Frame(0); f < 1000; f++ {
		if !q.addRemote(f, in(byte(f), byte(f>>8))) {
			t.Fatalf("frame %d refused", f)
		}
		q.discard(f - 10)
		if b := q.get(max(0, f-5)); !q.has(max(0, f-5)) || len(b) != 2 {
			t.Fatal("lost input")
		}
	}
	// Without discarding, the queue refuses rather than overwrite.
	r := newInputQueue(2, PredictRepeatLast{}, nil)
	for f := Frame(0); f < queueLen; f++ {
		r.addRemote(f, in(1))
	}
	if r.addRemote(queueLen, in(1)) {
		t.Fatal("full queue overwrote a held frame")
	}
}

func TestTimeSyncAverages(t *testing.T) {
	for _, tc := range []struct {
		local, remote, want int
	}{
		{0, 0, 0}, {-5, 5, 5}, {5, -5, -5}, {0, 8, 4}, {-40, 40, 40},
	} {
		e := &endpoint{}
		for i := range e.localWindow {
			e.localWindow[i], e.remoteWindow[i] = tc.local, tc.remote
		}
		if got := e.framesAhead(); got != tc.want {
			t.Errorf("local %d remote %d: %d frames ahead, want %d", tc.local, tc.remote, got, tc.want)
		}
	}
	// Only recent samples count: 10 of 30 slots at 30 frames.
	e := &endpoint{}
	for i := 0; i < 10; i++ {
		e.remoteWindow[i] = 60
	}
	if got := e.framesAhead(); got != 10 {
		t.Errorf("partial window: %d, want 10", got)
	}
}
