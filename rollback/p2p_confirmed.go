package rollback

// Confirmation and the end of a match: the confirmed and agreed frames,
// what a frame that became final goes to (spectators, the recording,
// desync reports), the checksum contract with the game, and when a match
// is finished.

import (
	"math"
)

// ending reports whether the session reached Config.EndFrame.
func (s *P2PSession) ending() bool {
	return s.cfg.EndFrame > 0 && s.current >= Frame(s.cfg.EndFrame)
}

// localDone reports whether this session has confirmed its whole match: it
// reached EndFrame, every frame before it is final, its confirmed inputs and
// checksums are recorded and sent to the spectators, its checksum reports
// were acknowledged by the peers and every mismatch was reported, and the
// peers and spectators acknowledged all its inputs.
func (s *P2PSession) localDone() bool {
	end := Frame(s.cfg.EndFrame)
	if !s.ending() || s.agreed < end-1 || s.pushed < end-1 {
		return false
	}
	if iv := Frame(s.cfg.DesyncInterval); iv > 0 && s.checkSent < end/iv*iv {
		return false
	}
	if iv := Frame(s.cfg.RecordChecksumInterval); s.rec != nil && s.rec.lastSum < end/iv*iv {
		return false
	}
	for _, e := range s.peers {
		if e.state != stateRunning {
			continue
		}
		if (len(s.local) > 0 && e.lastAcked < end-1) || e.sumAcked < s.lastReport || len(e.exchanges) > 0 || len(e.dumps) > 0 {
			return false
		}
	}
	for _, e := range s.specs {
		if e.state == stateRunning && e.lastAcked < end-1 {
			return false
		}
	}
	return true
}

// Finished reports whether the match is over for every peer: this session
// reached Config.EndFrame, every frame up to it is confirmed, checked for
// desyncs (every EventDesyncDetected of the match is queued), recorded and
// acknowledged by the spectators, and every peer still connected said the
// same of itself. The game may then Close the session. Always false without
// an EndFrame.
func (s *P2PSession) Finished() bool {
	if !s.localDone() {
		return false
	}
	for _, e := range s.peers {
		if e.state == stateRunning && !e.done {
			return false
		}
	}
	return true
}

// ReportChecksum records the checksum (and optionally the per-type parts,
// for example from snapshot.Registry.Checksum) of the state saved as frame f.
// Desync detection and recordings use the checksums of confirmed frames;
// parts let a desync event name the differing types. Parts are copied.
//
// Report it while carrying out the Save request, before the next
// AdvanceFrame, Poll or Close: a saved state may become final at that next
// call, and its checksum is used then (checked against the peers, written to
// the recording before the frame's inputs). A checksum that
// WantsChecksum asked for and that is missing then is not waited for (a
// game that never reports checksums still finishes its match): that frame
// is not checked or not recorded, SessionStats.MissingChecksums counts it
// and the Logger warns.
func (s *P2PSession) ReportChecksum(f Frame, sum uint64, parts []Part) {
	s.sums.put(f, sum, parts, s.WantsChecksum(f))
}

// WantsChecksum reports whether the checksum of saved frame f is used
// (desync detection or recording), so a game can skip computing the others.
func (s *P2PSession) WantsChecksum(f Frame) bool {
	return (s.cfg.DesyncInterval > 0 && int(f)%s.cfg.DesyncInterval == 0) ||
		(s.rec != nil && int(f)%s.cfg.RecordChecksumInterval == 0)
}

// computeConfirmed updates localConfirmed (every input known here) and the
// agreed frame (every input final: known here and, for remote players, also
// known to every other peer, so that no disconnect can change it).
func (s *P2PSession) computeConfirmed() {
	lc, ag := Frame(math.MaxInt32), Frame(math.MaxInt32)
	for i, st := range s.status {
		if st.disconnected {
			continue
		}
		lc = min(lc, st.lastFrame)
		ag = min(ag, st.lastFrame)
		if s.owner[i] == nil {
			continue
		}
		for _, p := range s.peers {
			if p == s.owner[i] || p.state != stateRunning {
				continue
			}
			if !p.hasStatus {
				ag = min(ag, NullFrame)
				continue
			}
			if ps := p.peerStatus[i]; !ps.Disconnected {
				ag = min(ag, Frame(ps.LastFrame))
			}
		}
	}
	if lc == math.MaxInt32 {
		lc = s.current
	}
	if ag == math.MaxInt32 {
		ag = lc
	}
	s.localConfirmed = lc
	if ag > s.agreed {
		s.agreed = ag
	}
	s.stats.Confirmed = s.ConfirmedFrame()
}

// confirmedWork handles frames that became final by the previous call (their
// saves were carried out and their checksums reported since): inputs to the
// spectators and the recording, checksums for desync detection.
func (s *P2PSession) confirmedWork(agreed Frame) {
	limit := min(agreed, s.current-1)
	for f := s.pushed + 1; f <= limit; f++ {
		rec := s.fullRecord(f)
		for _, e := range s.specs {
			if e.state != stateRunning {
				continue
			}
			if e.pending.full() {
				s.net.disconnect(e, "spectator stopped acknowledging inputs")
				continue
			}
			e.pending.push(f, rec)
			e.inputDirty = true
		}
		if s.rec != nil {
			// The checksum of f, when due, goes before f's inputs.
			s.missingChecksums("recording", s.rec.inputs(f, rec, s.sums))
		}
		s.pushed = f
	}
	// The state of the current frame is saved by the requests this call
	// returns, so its checksum is not known yet: it is handled next call.
	// At the end of the match the state of EndFrame was saved by an earlier
	// call.
	final := min(agreed+1, s.current-1)
	if s.ending() && s.endSaved {
		final = min(agreed+1, s.current)
	}
	if s.rec != nil {
		s.missingChecksums("recording", s.rec.checksums(s.sums, final))
	}
	if iv := Frame(s.cfg.DesyncInterval); iv > 0 {
		for c := (s.checkSent/iv + 1) * iv; c <= final; c += iv {
			s.checkSent = c
			sum, ok := s.sums.get(c)
			if ok {
				// Reported to every peer until acknowledged (fill).
				s.reports[int(c/iv)%remoteSumHistory] = sumEntry{frame: c, sum: sum, ok: true}
				s.lastReport = c
			} else {
				s.missingChecksums("desync check", 1)
			}
			for _, p := range s.peers {
				if p.state == stateRunning {
					p.inputDirty = p.inputDirty || ok
					s.compare(p, c)
				}
			}
		}
		if s.checkSent < 0 {
			s.checkSent = 0
		}
	}
}

// missingChecksums counts n checksums that use needed for final frames and
// the game did not report (see ReportChecksum).
func (s *P2PSession) missingChecksums(use string, n int) {
	if n == 0 {
		return
	}
	s.stats.MissingChecksums += n
	s.net.log.Warn("rollback: checksum of a final frame not reported", "use", use, "count", n, "total", s.stats.MissingChecksums)
}

// fullRecord builds the record of frame f with every player's input and
// disconnected status.
func (s *P2PSession) fullRecord(f Frame) []byte {
	rec := s.scratch[:0]
	for i, st := range s.status {
		if st.disconnected && f > st.lastFrame {
			rec = appendRecordInput(rec, s.cfg.DefaultInput, true)
			continue
		}
		rec = appendRecordInput(rec, s.queues[i].get(f), false)
	}
	s.scratch = rec
	return rec
}
