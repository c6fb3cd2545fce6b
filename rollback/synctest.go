package rollback

// SyncTestSession checks a game's determinism on one machine: every player
// is local, and every frame it loads the state CheckDistance frames back and
// re-simulates to the present, comparing the checksum of each re-saved frame
// with the one first reported for it. A difference is returned by the next
// AdvanceFrame as a *MismatchError (errors.Is ErrMismatchedChecksum) naming
// the frame and, when checksum parts were reported, the differing types.
type SyncTestSession struct {
	cfg      resolved
	queues   []*inputQueue
	localIn  [][]byte
	have     []bool
	current  Frame
	first    []stEntry
	reqs     []Request
	inBuf    []Input
	mismatch *MismatchError
	checked  int
	handles  []PlayerHandle
	// tail counts the AdvanceFrame calls made at Config.EndFrame: the
	// first saves the final state, the next CheckDistance re-simulate the
	// last frames, so they are checked and confirmed like the others.
	tail int
}

type stEntry struct {
	frame Frame
	ok    bool
	sum   uint64
	parts []Part
}

// NewSyncTest starts a SyncTest session. cfg.Players is ignored: every
// handle 0..NumPlayers-1 is local. SparseSaving is refused.
func NewSyncTest(cfg Config) (*SyncTestSession, error) {
	r, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if r.SparseSaving {
		return nil, invalid("SparseSaving: a SyncTest session saves every frame")
	}
	if r.CheckDistance != NoCheck && r.CheckDistance >= max(r.maxPred, 1) {
		return nil, invalid("CheckDistance %d must be below the prediction window %d", r.CheckDistance, r.maxPred)
	}
	s := &SyncTestSession{cfg: r}
	n := r.NumPlayers
	s.queues = make([]*inputQueue, n)
	s.localIn = make([][]byte, n)
	s.have = make([]bool, n)
	for i := range s.queues {
		s.queues[i] = newInputQueue(r.MaxInputSize, r.Predictor, r.DefaultInput)
		s.queues[i].delay = r.InputDelay
		s.localIn[i] = make([]byte, 0, r.MaxInputSize)
	}
	for h := range n {
		s.handles = append(s.handles, PlayerHandle(h))
	}
	d := max(r.CheckDistance, 0)
	s.first = make([]stEntry, 2*d+4)
	s.inBuf = make([]Input, 0, n*(d+1))
	s.reqs = make([]Request, 0, 2*d+3)
	return s, nil
}

// AddLocalInput sets player h's input for the current frame (copied).
func (s *SyncTestSession) AddLocalInput(h PlayerHandle, input []byte) error {
	if h < 0 || int(h) >= s.cfg.NumPlayers {
		return ErrInvalidHandle
	}
	if len(input) > s.cfg.MaxInputSize {
		return ErrInputTooLarge
	}
	s.localIn[h] = append(s.localIn[h][:0], input...)
	s.have[h] = true
	return nil
}

// SetInputDelay changes player h's input delay.
func (s *SyncTestSession) SetInputDelay(h PlayerHandle, delay int) error {
	if h < 0 || int(h) >= s.cfg.NumPlayers {
		return ErrInvalidHandle
	}
	if delay < 0 || delay > MaxInputDelay {
		return invalid("input delay %d: want 0..%d", delay, MaxInputDelay)
	}
	s.queues[h].delay = delay
	return nil
}

// AdvanceFrame returns the requests of one frame: frames up to CheckDistance
// get [Save, Advance]; later ones [Load(f-d), Advance, (Save, Advance)×(d-1),
// Save(f), Advance]; with NoCheck just [Advance]. A mismatch found in the
// checksums reported since the previous call is returned instead (once).
//
// At Config.EndFrame N it needs no input: the first call returns [Save(N)],
// the next d calls re-simulate the last frames without going past N
// ([Load(N-d+k), (Advance, Save)×(d-k)] for k = 0..d-1), so that every state
// 0..N is compared and confirmed; later calls return nothing.
func (s *SyncTestSession) AdvanceFrame() ([]Request, error) {
	if m := s.mismatch; m != nil {
		s.mismatch = nil
		return nil, m
	}
	if s.ending() {
		return s.advanceTail(), nil
	}
	for h := range s.have {
		if !s.have[h] {
			return nil, ErrMissingInput
		}
	}
	if s.current >= 1<<31-1-2*queueLen {
		return nil, ErrFrameLimit
	}
	for h, q := range s.queues {
		q.addLocal(s.current, s.localIn[h])
		s.have[h] = false
	}
	s.reqs, s.inBuf = s.reqs[:0], s.inBuf[:0]
	d := Frame(s.cfg.CheckDistance)
	if d > 0 && s.current > d {
		target := s.current - d
		s.reqs = append(s.reqs, Request{Kind: LoadRequest, Frame: target})
		for f := target; f < s.current; f++ {
			if f > target {
				s.reqs = append(s.reqs, Request{Kind: SaveRequest, Frame: f})
			}
			s.advance(f)
		}
	}
	if d > 0 {
		s.reqs = append(s.reqs, Request{Kind: SaveRequest, Frame: s.current})
	}
	s.advance(s.current)
	s.current++
	for _, q := range s.queues {
		q.discard(s.current - d - 2)
	}
	return s.reqs, nil
}

// advanceTail returns the requests of a call at EndFrame (see AdvanceFrame).
func (s *SyncTestSession) advanceTail() []Request {
	d := Frame(max(s.cfg.CheckDistance, 0))
	if d == 0 || Frame(s.tail) > d {
		return nil
	}
	s.reqs, s.inBuf = s.reqs[:0], s.inBuf[:0]
	if s.tail > 0 {
		target := max(s.current-d+Frame(s.tail-1), 0)
		s.reqs = append(s.reqs, Request{Kind: LoadRequest, Frame: target})
		for f := target; f < s.current; f++ {
			if f > target {
				s.reqs = append(s.reqs, Request{Kind: SaveRequest, Frame: f})
			}
			s.advance(f)
		}
	}
	s.reqs = append(s.reqs, Request{Kind: SaveRequest, Frame: s.current})
	s.tail++
	return s.reqs
}

func (s *SyncTestSession) advance(f Frame) {
	k := len(s.inBuf)
	for _, q := range s.queues {
		b, st := q.input(f)
		s.inBuf = append(s.inBuf, Input{Bytes: b, Status: st})
	}
	n := len(s.queues)
	s.reqs = append(s.reqs, Request{Kind: AdvanceRequest, Frame: f, Inputs: s.inBuf[k : k+n : k+n]})
}

// ReportChecksum records the checksum (and parts) of the state saved as
// frame f, or compares it with the first one reported for f.
func (s *SyncTestSession) ReportChecksum(f Frame, sum uint64, parts []Part) {
	if f < 0 {
		return
	}
	e := &s.first[int(f)%len(s.first)]
	if !e.ok || e.frame != f {
		e.frame, e.ok, e.sum = f, true, sum
		e.parts = append(e.parts[:0], parts...)
		return
	}
	s.checked++
	if e.sum != sum && s.mismatch == nil {
		s.mismatch = &MismatchError{CurrentFrame: s.current, Frame: f, Want: e.sum, Got: sum, Types: diffParts(e.parts, parts)}
	}
}

// Checked is the number of re-simulated frames whose checksum was compared.
func (s *SyncTestSession) Checked() int { return s.checked }

// CurrentFrame is the frame the next Advance simulates.
func (s *SyncTestSession) CurrentFrame() Frame { return s.current }

// ConfirmedFrame is the newest frame no longer re-simulated.
func (s *SyncTestSession) ConfirmedFrame() Frame {
	d := Frame(max(s.cfg.CheckDistance, 0))
	if s.ending() && d > 0 {
		// After the k-th re-simulation of the tail (tail = k+1), frame
		// N-d+k-1 is loaded no more.
		return min(s.current-d-1+Frame(max(s.tail-1, 0)), s.current-1)
	}
	return s.current - d - 1
}

// NumPlayers is the number of (local) players.
func (s *SyncTestSession) NumPlayers() int { return s.cfg.NumPlayers }

// LocalHandles lists every player: all are local.
func (s *SyncTestSession) LocalHandles() []PlayerHandle { return s.handles }

// WantsChecksum reports true: every saved frame is compared.
func (s *SyncTestSession) WantsChecksum(Frame) bool { return true }

// SnapshotDepth is CheckDistance+2: the loads reach CheckDistance frames
// back (0 with NoCheck, which never saves).
func (s *SyncTestSession) SnapshotDepth() int {
	if s.cfg.CheckDistance <= 0 {
		return 0
	}
	return s.cfg.CheckDistance + 2
}

// FramesAhead is 0: a SyncTest session has no peers.
func (s *SyncTestSession) FramesAhead() int { return 0 }

// Poll does nothing: a SyncTest session has no network.
func (s *SyncTestSession) Poll() {}

// Events returns nil: mismatches are returned by AdvanceFrame.
func (s *SyncTestSession) Events() []Event { return nil }

func (s *SyncTestSession) ending() bool {
	return s.cfg.EndFrame > 0 && s.current >= Frame(s.cfg.EndFrame)
}

// Finished reports whether the session reached Config.EndFrame, checked
// and confirmed every state 0..N (the calls at N, see AdvanceFrame; after
// them AdvanceFrame returns no requests) and returned every mismatch.
func (s *SyncTestSession) Finished() bool {
	d := max(s.cfg.CheckDistance, 0)
	return s.ending() && (d == 0 || s.tail > d) && s.mismatch == nil
}

// Close does nothing; it exists for the Session contract.
func (s *SyncTestSession) Close() error { return nil }

// ChecksDeterminism reports true: a SyncTest session exists to check the
// game's determinism.
func (s *SyncTestSession) ChecksDeterminism() bool { return true }
