package rollback

// recordRing keeps the input records of the last queueLen frames: what an
// endpoint still has to send (until acknowledged) or what it received (the
// decode base of the next packet). Fixed storage, no allocation after creation.
type recordRing struct {
	max  int
	data []byte
	lens []uint16
	// first..last is the range of frames held; first > last when empty.
	first, last Frame
}

func newRecordRing(max int) *recordRing {
	return &recordRing{max: max, data: make([]byte, queueLen*max), lens: make([]uint16, queueLen), first: 0, last: NullFrame}
}

func (r *recordRing) empty() bool { return r.first > r.last }

func (r *recordRing) has(f Frame) bool { return f >= r.first && f <= r.last }

func (r *recordRing) get(f Frame) []byte {
	i := int(f) % queueLen
	return r.data[i*r.max : i*r.max+int(r.lens[i])]
}

// full reports whether adding last+1 would overwrite a held frame.
func (r *recordRing) full() bool { return !r.empty() && r.last+1-r.first >= queueLen }

// push appends the record of frame last+1 (or of f when empty), dropping the
// oldest frame when full.
func (r *recordRing) push(f Frame, rec []byte) {
	if r.empty() {
		r.first = f
	} else if r.full() {
		r.first++
	}
	r.last = f
	i := int(f) % queueLen
	copy(r.data[i*r.max:], rec)
	r.lens[i] = uint16(len(rec))
}

// dropThrough forgets frames up to and including f.
func (r *recordRing) dropThrough(f Frame) {
	if f >= r.first {
		r.first = f + 1
	}
}

// Record format: for each player of the record, a header byte (low 7 bits:
// input length; bit 7: the player is disconnected at this frame) followed by
// the input bytes. Peers send records of the players behind their address;
// hosts send spectators (and recordings hold) records of every player.
const disconnectedBit = 0x80

func appendRecordInput(dst []byte, in []byte, disconnected bool) []byte {
	h := byte(len(in))
	if disconnected {
		h |= disconnectedBit
	}
	dst = append(dst, h)
	return append(dst, in...)
}

// splitRecord calls fn for each of n inputs in rec; it returns false when rec
// is not exactly n well-formed inputs of at most max bytes.
func splitRecord(rec []byte, n, max int, fn func(i int, in []byte, disconnected bool)) bool {
	off := 0
	for i := 0; i < n; i++ {
		if off >= len(rec) {
			return false
		}
		h := rec[off]
		l := int(h &^ disconnectedBit)
		off++
		if l > max || off+l > len(rec) {
			return false
		}
		if fn != nil {
			fn(i, rec[off:off+l], h&disconnectedBit != 0)
		}
		off += l
	}
	return off == len(rec)
}
