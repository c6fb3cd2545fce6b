package rollback

// The P2P session's side of the peer protocol (the handler the netcore
// calls): the end of the handshake, the peers' inputs into the queues and
// the local inputs out to them, what rides on Input messages besides inputs
// (connection statuses, Done, checksum reports), and disconnects agreed
// through the gossiped statuses.

import (
	"math"
	"time"

	"github.com/rewindgo/rewind/rollback/internal/wire"
)

// updateDisconnects applies the connection statuses gossiped by the peers:
// a player any running peer (or this session) considers disconnected is
// disconnected here too, at the lowest last frame anyone has.
func (s *P2PSession) updateDisconnects() {
	for _, i := range s.remote {
		connected := s.owner[i].state != stateDisconnected
		last := Frame(math.MaxInt32)
		for _, p := range s.peers {
			if p.state != stateRunning || !p.hasStatus || p.joining {
				continue
			}
			ps := p.peerStatus[i]
			if ra := s.status[i].rejoinAt; ra > 0 && Frame(ps.LastFrame) < ra-1 {
				continue // about the player before it rejoined
			}
			if ps.Disconnected {
				connected = false
			}
			last = min(last, Frame(ps.LastFrame))
		}
		st := s.status[i]
		if !st.disconnected {
			last = min(last, st.lastFrame)
		}
		if !connected && (!st.disconnected || st.lastFrame > last) {
			s.disconnectPlayerAt(PlayerHandle(i), last)
		}
	}
}

func (s *P2PSession) disconnectPlayerAt(h PlayerHandle, last Frame) {
	if last < s.agreed {
		// Cannot happen with peers following the protocol (the agreed
		// frame already includes every peer's last frame); refuse to
		// rewrite history that is final.
		last = s.agreed
	}
	s.status[h] = playerStatus{disconnected: true, lastFrame: last}
	if last+1 < s.current && (s.discRollback == NullFrame || last+1 < s.discRollback) {
		s.discRollback = last + 1
	}
	e := s.owner[h]
	if e == nil {
		return
	}
	for _, o := range e.handles {
		if !s.status[o].disconnected {
			return
		}
	}
	s.net.disconnect(e, "disconnected by a peer")
}

// DisconnectPlayer disconnects a remote player (and every player behind the
// same address) or a spectator. The other peers agree on the frame from
// which the player's inputs are the default.
func (s *P2PSession) DisconnectPlayer(h PlayerHandle) error {
	if h >= 0 && int(h) < s.cfg.NumPlayers {
		e := s.owner[h]
		if e == nil {
			return ErrInvalidHandle
		}
		if s.status[h].disconnected {
			return ErrAlreadyDisconnected
		}
		e.banned = true
		s.dropEndpoint(e, "disconnected locally")
		return nil
	}
	for i, sh := range s.specOf {
		if sh == h {
			if s.specs[i].state == stateDisconnected {
				return ErrAlreadyDisconnected
			}
			s.net.disconnect(s.specs[i], "disconnected locally")
			return nil
		}
	}
	return ErrInvalidHandle
}

// dropEndpoint implements handler.
func (s *P2PSession) dropEndpoint(e *endpoint, reason string) {
	s.net.disconnect(e, reason)
	for _, h := range e.handles {
		if !s.status[h].disconnected {
			s.disconnectPlayerAt(h, s.status[h].lastFrame)
		}
	}
}

// synchronized implements handler.
func (s *P2PSession) synchronized(*endpoint) {
	if s.running {
		return
	}
	for _, e := range s.net.eps {
		if e.state == stateSyncing {
			return
		}
	}
	if s.rj != nil {
		if s.rj.host == nil {
			s.startRejoin()
		}
		return
	}
	s.running = true
	s.net.event(Event{Kind: EventRunning})
}

// onRecord implements handler: a peer's inputs for frame f.
func (s *P2PSession) onRecord(e *endpoint, f Frame, rec []byte) bool {
	if e.spectator {
		s.net.malformedFrom(s, e, "inputs from a spectator", nil)
		return false
	}
	if s.rj != nil && !s.rj.loaded {
		return false // no state yet to put them on
	}
	for _, h := range e.handles {
		q := s.queues[h]
		if f != q.head+1 || !q.room(f) {
			return false
		}
	}
	splitRecord(rec, len(e.handles), s.cfg.MaxInputSize, func(i int, in []byte, _ bool) {
		h := e.handles[i]
		s.queues[h].addRemote(f, in)
		if !s.status[h].disconnected {
			s.status[h].lastFrame = f
		}
	})
	e.joining = false
	return true
}

// pushLocal queues the newly complete local frames to every peer.
func (s *P2PSession) pushLocal() {
	if len(s.local) == 0 || !s.rejoinVerified() {
		return
	}
	top := Frame(math.MaxInt32)
	for _, h := range s.local {
		top = min(top, s.queues[h].head)
	}
	for f := s.localPushed + 1; f <= top; f++ {
		rec := s.scratch[:0]
		for _, h := range s.local {
			rec = appendRecordInput(rec, s.queues[h].get(f), false)
		}
		s.scratch = rec
		if s.hist != nil {
			s.hist.push(f, rec)
		}
		for _, e := range s.peers {
			if e.state == stateDisconnected || e.hold {
				continue
			}
			if e.pending.full() {
				// 128 frames unacknowledged: the peer is long gone.
				s.dropEndpoint(e, "stopped acknowledging inputs")
				continue
			}
			e.pending.push(f, rec)
			e.inputDirty = true
		}
		s.localPushed = f
	}
}

// fill implements handler: the connection statuses gossiped in Input
// messages and, to peers, the Done flag and the checksum reports the peer has
// not acknowledged (oldest first, those still held).
func (s *P2PSession) fill(e *endpoint, m *wire.Message) {
	for _, st := range s.status {
		m.Status = append(m.Status, wire.PeerStatus{Disconnected: st.disconnected, LastFrame: int32(st.lastFrame)})
	}
	if e.spectator {
		return
	}
	m.Done = s.localDone()
	m.PeerDone = e.done
	iv := Frame(s.cfg.DesyncInterval)
	if iv == 0 || s.lastReport <= e.sumAcked {
		return
	}
	// Unacknowledged reports go with the first message after a new one,
	// then again each reportResend until acknowledged: repeating them on
	// every Input message (60 a second) cost about a quarter more bytes.
	if s.lastReport <= e.reportSent && s.net.now.Sub(e.reportAt) < reportResend(e) {
		return
	}
	for c := max(e.sumAcked, s.lastReport-remoteSumHistory*iv, 0)/iv*iv + iv; c <= s.lastReport && len(m.Reports) < wire.MaxReports; c += iv {
		if r := s.reports[int(c/iv)%remoteSumHistory]; r.ok && r.frame == c {
			m.Reports = append(m.Reports, wire.Report{Frame: int32(c), Checksum: r.sum})
			e.reportSent = max(e.reportSent, c)
		}
	}
	e.reportAt = s.net.now
}

// reportResend is how long unacknowledged checksum reports wait before
// they are sent again: one and a half round trips, at least minReportResend.
func reportResend(e *endpoint) time.Duration {
	return max(e.rtt+e.rtt/2, minReportResend)
}

// owes implements handler: unacknowledged checksum reports, or the end of
// the match while the peer has not said it is done. A done session also
// answers each Input message of a peer that has not seen its Done yet
// (onInputMeta), so that both learn that the other is done.
func (s *P2PSession) owes(e *endpoint) bool {
	return !e.spectator && (s.lastReport > e.sumAcked || (s.ending() && !e.done))
}

// onInputMeta implements handler: the peer's Done flag and its checksum
// reports. A report is compared once per (peer, frame): duplicates and
// reports older than the one held for their slot are ignored.
func (s *P2PSession) onInputMeta(e *endpoint, m *wire.Message) {
	if m.Done {
		e.done = true
	}
	if !m.PeerDone && s.localDone() {
		// The peer does not know that this session is done: tell it now
		// (it repeats until it knows, so this answers each attempt).
		e.inputDirty = true
	}
	iv := s.cfg.DesyncInterval
	for _, r := range m.Reports {
		f := Frame(r.Frame)
		if iv > 0 && f > max(s.checkSent, 0)+Frame(remoteSumHistory/2*iv) {
			// Far beyond what this session has checked: not kept (it would
			// take the slot of a report still to come) and not acknowledged,
			// so an honest peer repeats it later.
			break
		}
		e.ackDue, e.sumAckDue = true, true
		e.sumRecv = max(e.sumRecv, f)
		if iv == 0 || f == 0 || int(f)%iv != 0 {
			continue // not a frame this session checks
		}
		slot := &e.remoteSums[int(f)/iv%remoteSumHistory]
		if slot.ok && slot.frame >= f {
			continue
		}
		*slot = sumEntry{frame: f, sum: r.Checksum, ok: true}
		s.compare(e, f)
	}
}
