package rollback

// queueLen is the number of frames an input queue holds. The prediction
// window plus the input delay plus the gossip lag stays well below it; remote
// inputs further ahead are refused (the peer resends them later).
const queueLen = 128

// inputQueue holds one player's inputs by frame, predicts missing ones and
// detects mispredictions. Storage is fixed: no allocation after creation.
type inputQueue struct {
	max   int
	data  []byte // queueLen * max
	lens  [queueLen]uint8
	head  Frame // last frame added; NullFrame when empty
	tail  Frame // oldest frame held
	delay int
	pred  Predictor
	def   []byte

	predicting     bool
	prediction     []byte // cap max
	lastRequested  Frame
	firstIncorrect Frame
}

func newInputQueue(max int, pred Predictor, def []byte) *inputQueue {
	return &inputQueue{
		max: max, data: make([]byte, queueLen*max), head: NullFrame, tail: 0,
		pred: pred, def: def, prediction: make([]byte, 0, max),
		lastRequested: NullFrame, firstIncorrect: NullFrame,
	}
}

func (q *inputQueue) slot(f Frame) []byte {
	i := int(f) % queueLen
	return q.data[i*q.max : i*q.max+int(q.lens[i])]
}

// has reports whether frame f is held.
func (q *inputQueue) has(f Frame) bool { return q.head != NullFrame && f >= q.tail && f <= q.head }

// get returns the input of a held frame.
func (q *inputQueue) get(f Frame) []byte { return q.slot(f) }

// last returns the newest input, or the default input when none was added.
func (q *inputQueue) last() []byte {
	if q.head == NullFrame {
		return q.def
	}
	return q.slot(q.head)
}

// room reports whether frame f (== head+1) can be stored without overwriting
// a frame still held.
func (q *inputQueue) room(f Frame) bool {
	return q.head == NullFrame || f-q.tail < queueLen
}

// put stores the input of frame head+1 and checks it against the prediction
// used for that frame, if any.
func (q *inputQueue) put(f Frame, in []byte) {
	i := int(f) % queueLen
	copy(q.data[i*q.max:], in)
	q.lens[i] = uint8(len(in))
	if q.head == NullFrame {
		q.tail = f
	}
	q.head = f
	if q.predicting {
		if q.firstIncorrect == NullFrame && f <= q.lastRequested && string(in) != string(q.prediction) {
			q.firstIncorrect = f
		}
		if f >= q.lastRequested && q.firstIncorrect == NullFrame {
			// Every frame simulated with the prediction is now confirmed
			// and was predicted right: prediction mode ends.
			q.predicting = false
		}
	}
}

// addRemote stores a received input for frame f. It returns false when f is
// not the next frame (duplicates and gaps are ignored) or there is no room.
func (q *inputQueue) addRemote(f Frame, in []byte) bool {
	next := q.head + 1
	if f != next || !q.room(f) {
		return false
	}
	q.put(f, in)
	return true
}

// addLocal stores a local input added for frame f at f+delay, filling any gap
// with the last input (the default before the first). It returns the frame
// the input landed on, or NullFrame when the delay was lowered and the frame
// is already taken (the input is dropped).
func (q *inputQueue) addLocal(f Frame, in []byte) Frame {
	target := f + Frame(q.delay)
	if target <= q.head {
		return NullFrame
	}
	for q.head+1 < target {
		// Gap (start of the match with a delay, or a raised delay): repeat
		// the last input; these frames are sent like any other.
		last := q.last()
		var tmp [MaxInputLimit]byte
		n := copy(tmp[:], last)
		q.put(q.head+1, tmp[:n])
	}
	q.put(target, in)
	return target
}

// input returns the input for frame f for a simulation step, predicting it
// when it has not arrived. It records the request for misprediction checks.
func (q *inputQueue) input(f Frame) ([]byte, InputStatus) {
	if f > q.lastRequested {
		q.lastRequested = f
	}
	if q.has(f) {
		return q.get(f), Confirmed
	}
	if !q.predicting {
		q.predicting = true
		q.prediction = q.prediction[:0]
		if q.head == NullFrame {
			q.prediction = append(q.prediction, q.def...)
		} else {
			q.prediction = q.pred.Predict(q.prediction, q.slot(q.head))
			if len(q.prediction) > q.max {
				q.prediction = q.prediction[:q.max]
			}
		}
	}
	return q.prediction, Predicted
}

// resetPrediction is called after a rollback to firstIncorrect: frames after
// the newest input are predicted afresh.
func (q *inputQueue) resetPrediction() {
	q.predicting = false
	q.firstIncorrect = NullFrame
	q.lastRequested = NullFrame
}

// discard forgets frames up to and including f, always keeping the newest.
func (q *inputQueue) discard(f Frame) {
	if q.head == NullFrame {
		return
	}
	if f >= q.head {
		f = q.head - 1
	}
	if f+1 > q.tail {
		q.tail = f + 1
	}
}
