package rollback

// The sync layer of a P2P session (GGRS's name): AdvanceFrame and the
// requests it builds, when to roll back and to where, which frames to save,
// and the inputs each Advance carries.

import (
	"math"
)

// mispredicted reports whether a received input differs from the prediction
// a simulated frame used (a rollback is due).
func (s *P2PSession) mispredicted() bool {
	for _, q := range s.queues {
		if q.firstIncorrect != NullFrame {
			return true
		}
	}
	return false
}

// AdvanceFrame polls the network and returns the requests the game must
// carry out, in order, before the next call: a rollback (Load, then Advance
// and Save for each frame to re-simulate) if a prediction was wrong or a
// player disconnected, then Save and Advance for the current frame.
//
// When the session may not advance (the prediction window is exhausted, or
// in lockstep the inputs have not arrived), the list still holds any rollback
// (it is never dropped) but no Advance of the current frame, and Advanced
// reports false. The requests and their inputs are valid until the next call.
func (s *P2PSession) AdvanceFrame() ([]Request, error) {
	if s.closed {
		return nil, ErrClosed
	}
	s.advanced = false
	s.reqs = s.reqs[:0]
	s.inBuf = s.inBuf[:0]
	s.net.poll(s)
	if !s.running {
		s.net.flush(s.fill)
		return nil, ErrNotSynchronized
	}
	ending := s.ending()
	for _, h := range s.local {
		if !s.localHave[h] && !ending {
			return nil, ErrMissingInput
		}
	}
	if s.current >= math.MaxInt32-2*queueLen {
		return nil, ErrFrameLimit
	}
	prevAgreed := s.agreed

	// Confirmed frames first (before anything is rolled back or discarded):
	// desync reports, spectators, recording.
	s.confirmedWork(prevAgreed)

	s.updateDisconnects()
	s.computeConfirmed()

	// Roll back to the first misprediction or disconnect.
	target := s.discRollback
	for _, q := range s.queues {
		if fi := q.firstIncorrect; fi != NullFrame && (target == NullFrame || fi < target) {
			target = fi
		}
	}
	mp := s.cfg.maxPred
	if s.cfg.SparseSaving && mp > 0 {
		if target != NullFrame || (s.current-s.lastSaved >= Frame(mp) && s.agreed+1 > s.lastSaved) {
			target = s.lastSaved
		}
	}
	rolledBack := false
	if target != NullFrame && target < s.current && mp > 0 {
		s.rollback(target)
		rolledBack = true
	} else if target != NullFrame {
		for _, q := range s.queues {
			q.resetPrediction()
		}
	}
	s.discRollback = NullFrame

	// Local inputs of this frame: into the queues (at frame+delay) and to
	// the peers. A frame that stalls keeps the inputs first added for it.
	// After EndFrame no input is needed.
	for _, h := range s.local {
		q := s.queues[h]
		if !ending {
			if f := q.addLocal(s.current, s.localIn[h]); f != NullFrame {
				s.status[h].lastFrame = q.head
			}
		}
		s.localHave[h] = false
	}
	s.pushLocal()
	s.computeConfirmed()

	// Inputs no longer needed: everything before the agreed frame (and, when
	// saving sparsely, before the last saved frame).
	keep := prevAgreed
	if s.cfg.SparseSaving && s.lastSaved < keep {
		keep = s.lastSaved
	}
	if keep > s.pushed {
		keep = s.pushed
	}
	for _, q := range s.queues {
		q.discard(keep - 1)
	}

	stall := false
	if mp == 0 {
		stall = s.localConfirmed < s.current || s.agreed < s.current
	} else {
		stall = s.current-s.localConfirmed > Frame(mp) || s.current-s.agreed > Frame(2*mp+2)
	}
	switch {
	case ending:
		// The match is over: save the state of EndFrame (again after a
		// rollback) so that its checksum is reported.
		if (rolledBack || !s.endSaved) && (mp > 0 || s.WantsChecksum(s.current)) {
			s.save(s.current)
			s.endSaved = true
		}
	case stall:
		// The state of the current frame is saved when it is advanced; a
		// rollback above already re-simulated up to it.
		s.stats.Stalls++
	default:
		if s.saveWanted(s.current) {
			s.save(s.current)
		}
		s.advance(s.current)
		s.current++
		s.advanced = true
		s.timeSync()
	}
	s.checkParts()
	s.checkDumps()
	s.net.flush(s.fill)
	return s.reqs, nil
}

// Advanced reports whether the last AdvanceFrame advanced the current frame.
func (s *P2PSession) Advanced() bool { return s.advanced }

// saveWanted decides whether frame f is saved when it is simulated.
func (s *P2PSession) saveWanted(f Frame) bool {
	if s.cfg.maxPred == 0 {
		// Lockstep never loads: save only the frames whose checksums
		// desync detection and the recording use.
		return s.WantsChecksum(f)
	}
	if !s.cfg.SparseSaving {
		return true
	}
	if s.cfg.DesyncInterval > 0 && int(f)%s.cfg.DesyncInterval == 0 {
		return true
	}
	if s.rec != nil && int(f)%s.cfg.RecordChecksumInterval == 0 {
		return true
	}
	return f > s.lastSaved && f == min(s.agreed+1, s.current)
}

func (s *P2PSession) save(f Frame) {
	s.reqs = append(s.reqs, Request{Kind: SaveRequest, Frame: f})
	if f <= s.agreed+1 && f > s.lastSaved {
		s.lastSaved = f
	}
	if !s.cfg.SparseSaving && f > s.lastSaved {
		s.lastSaved = f
	}
}

func (s *P2PSession) advance(f Frame) {
	n := s.cfg.NumPlayers
	k := len(s.inBuf)
	for i := 0; i < n; i++ {
		st := s.status[i]
		if st.disconnected && f > st.lastFrame {
			s.inBuf = append(s.inBuf, Input{Bytes: s.cfg.DefaultInput, Status: Disconnected})
			continue
		}
		b, status := s.queues[i].input(f)
		s.inBuf = append(s.inBuf, Input{Bytes: b, Status: status})
	}
	s.reqs = append(s.reqs, Request{Kind: AdvanceRequest, Frame: f, Inputs: s.inBuf[k : k+n : k+n]})
}

// rollback loads target and re-simulates up to the current frame.
func (s *P2PSession) rollback(target Frame) {
	s.reqs = append(s.reqs, Request{Kind: LoadRequest, Frame: target})
	for _, q := range s.queues {
		q.resetPrediction()
	}
	depth := int(s.current - target)
	s.stats.Rollbacks++
	s.stats.RollbackFrames += depth
	if depth > s.stats.MaxRollback {
		s.stats.MaxRollback = depth
	}
	s.net.log.Debug("rollback", "from", s.current, "to", target)
	for f := target; f < s.current; f++ {
		if f > target && s.saveWanted(f) {
			s.save(f)
		}
		s.advance(f)
	}
}
