package rollback

import (
	"math"
	"net/netip"

	"github.com/rewindgo/rewind/rollback/internal/wire"
	"github.com/rewindgo/rewind/transport"
)

// playerStatus is this session's view of one player's connection: the last
// frame of its inputs that is known here, and whether it has left (from
// which frame on its inputs are the default).
type playerStatus struct {
	disconnected bool
	lastFrame    Frame
}

// SessionStats counts what a session did; the demo prints them.
type SessionStats struct {
	// Frame is the current frame, Confirmed the confirmed frame.
	Frame, Confirmed Frame
	// Rollbacks counts loads; RollbackFrames the frames re-simulated;
	// MaxRollback the longest rollback in frames.
	Rollbacks, RollbackFrames, MaxRollback int
	// Stalls counts AdvanceFrame calls that did not advance the frame
	// (prediction threshold, lockstep wait).
	Stalls int
	// Desyncs counts EventDesyncDetected events.
	Desyncs int
	// MissingChecksums counts the checksums desync detection or the
	// recording needed (once per use) that the game had not reported when
	// their frame became final; those frames go unchecked or unrecorded
	// (see ReportChecksum). Always 0 for a game that honours the contract,
	// as runner.Runner does.
	MissingChecksums int
	// EventsDropped counts events dropped because the queue was full;
	// UnknownPackets counts datagrams from addresses that are not peers.
	EventsDropped, UnknownPackets uint64
}

// P2PSession is a peer-to-peer rollback session: every peer simulates every
// frame, sends only its local inputs, predicts the inputs that have not
// arrived, and rolls back when a prediction was wrong.
//
// A frame of the game loop: AddLocalInput for every local player, then
// AdvanceFrame, then carry out the returned requests in order, reporting the
// checksum of each saved state with ReportChecksum. Call Poll when the game
// does not advance (while synchronizing, or on a stall) to keep the network
// going. A P2PSession is not safe for concurrent use.
type P2PSession struct {
	cfg resolved
	net netcore

	queues []*inputQueue
	status []playerStatus
	owner  []*endpoint
	local  []PlayerHandle
	remote []PlayerHandle
	peers  []*endpoint
	specs  []*endpoint
	specOf []PlayerHandle // handle of specs[i]

	running        bool
	closed         bool
	current        Frame
	agreed         Frame
	localConfirmed Frame
	lastSaved      Frame
	checkSent      Frame
	pushed         Frame
	localPushed    Frame
	discRollback   Frame
	advanced       bool
	lastWaitRec    Frame
	// endSaved: the state of frame EndFrame was saved since the last rollback.
	endSaved bool
	// reports holds the final checksums of recent check frames (by check
	// frame), resent to each peer until it acknowledges them; lastReport is
	// the newest.
	reports    [remoteSumHistory]sumEntry
	lastReport Frame

	localIn   [][]byte
	localHave []bool
	reqs      []Request
	inBuf     []Input
	sums      *sumHistory
	rec       *recorder
	scratch   []byte
	stats     SessionStats
}

// NewP2P starts a P2P session on conn with the players in cfg.Players. The
// session reaches the remote players and spectators through conn; it does
// not own conn (close it after the session).
func NewP2P(conn transport.PacketConn, cfg Config) (*P2PSession, error) {
	r, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if err := r.checkPlayers(); err != nil {
		return nil, err
	}
	if conn == nil {
		return nil, invalid("conn is nil")
	}
	s := &P2PSession{cfg: r}
	s.net.init(&s.cfg, conn)
	n := r.NumPlayers
	s.queues = make([]*inputQueue, n)
	s.status = make([]playerStatus, n)
	s.owner = make([]*endpoint, n)
	s.localIn = make([][]byte, n)
	s.localHave = make([]bool, n)
	for i := range s.queues {
		s.queues[i] = newInputQueue(r.MaxInputSize, r.Predictor, r.DefaultInput)
		s.status[i].lastFrame = NullFrame
	}
	// Handles in order, so records list players in handle order.
	for h := 0; h < n; h++ {
		for _, p := range r.Players {
			if int(p.Handle) != h || p.Kind == Spectator {
				continue
			}
			if p.Kind == Local {
				s.local = append(s.local, p.Handle)
				s.queues[h].delay = r.InputDelay
				s.localIn[h] = make([]byte, 0, r.MaxInputSize)
				continue
			}
			s.remote = append(s.remote, p.Handle)
			e := s.net.byAddr[p.Addr]
			if e == nil {
				e = s.net.addEndpoint(p.Addr)
				s.peers = append(s.peers, e)
			} else if e.spectator {
				return nil, invalid("address %v is registered as a spectator and a player", p.Addr)
			}
			e.handles = append(e.handles, p.Handle)
			s.owner[h] = e
		}
	}
	for _, p := range r.Players {
		if p.Kind != Spectator {
			continue
		}
		if s.net.byAddr[p.Addr] != nil {
			return nil, invalid("address %v is registered twice (spectator %d)", p.Addr, p.Handle)
		}
		e := s.net.addEndpoint(p.Addr)
		e.spectator = true
		s.specs = append(s.specs, e)
		s.specOf = append(s.specOf, p.Handle)
	}
	s.current = 0
	s.agreed, s.localConfirmed, s.lastSaved = NullFrame, NullFrame, NullFrame
	s.checkSent, s.pushed, s.localPushed, s.discRollback = NullFrame, NullFrame, NullFrame, NullFrame
	s.lastWaitRec = -recommendationInterval
	s.lastReport = NullFrame
	s.sums = newSumHistory(queueLen, remoteSumHistory)
	s.inBuf = make([]Input, 0, n*(2*r.maxPred+6))
	s.reqs = make([]Request, 0, 2*(2*r.maxPred+6))
	s.scratch = make([]byte, 0, s.net.maxRecord())
	if r.Record != nil {
		s.rec, err = newRecorder(r.Record, &s.cfg)
		if err != nil {
			return nil, err
		}
	}
	if len(s.net.eps) == 0 {
		s.running = true
	} else {
		for _, e := range s.net.eps {
			s.net.sendSync(e)
		}
	}
	return s, nil
}

// SnapshotDepth is how many saved frames the game must keep for Load
// requests to find their frame: 2*MaxPrediction+4 (a disconnect agreed with
// 3+ peers may reach back about twice the window, and the session never runs
// further ahead of the agreed frame than that), 0 in lockstep.
func (s *P2PSession) SnapshotDepth() int {
	if s.cfg.maxPred == 0 {
		return 0
	}
	return 2*s.cfg.maxPred + 4
}

// AddLocalInput sets the input of local player h for the current frame. It
// is copied. Call it for every local player before each AdvanceFrame.
func (s *P2PSession) AddLocalInput(h PlayerHandle, input []byte) error {
	if h < 0 || int(h) >= s.cfg.NumPlayers || s.owner[h] != nil {
		return ErrInvalidHandle
	}
	if len(input) > s.cfg.MaxInputSize {
		return ErrInputTooLarge
	}
	s.localIn[h] = append(s.localIn[h][:0], input...)
	s.localHave[h] = true
	return nil
}

// SetInputDelay changes the input delay of local player h from the next
// frame. Raising it repeats the last input for the new frames in between
// (they are sent to the peers like any other); lowering it drops the inputs
// of frames that are already taken.
func (s *P2PSession) SetInputDelay(h PlayerHandle, delay int) error {
	if h < 0 || int(h) >= s.cfg.NumPlayers || s.owner[h] != nil {
		return ErrInvalidHandle
	}
	if delay < 0 || delay > MaxInputDelay {
		return invalid("input delay %d: want 0..%d", delay, MaxInputDelay)
	}
	s.queues[h].delay = delay
	return nil
}

// Poll receives and answers network traffic without advancing: call it
// while the session synchronizes, while the game waits, or after the match
// ended until Finished. It also advances the confirmed frame when no
// rollback is pending (the saves of the last AdvanceFrame must have been
// carried out), so the confirmed tail of a match is checked for desyncs,
// recorded and sent to spectators even when AdvanceFrame is no longer
// called.
func (s *P2PSession) Poll() {
	if s.closed {
		return
	}
	s.net.poll(s)
	if s.running {
		s.updateDisconnects()
		if s.discRollback == NullFrame && !s.mispredicted() {
			s.computeConfirmed()
		}
		s.confirmedWork(s.agreed)
	}
	s.checkParts()
	s.net.flush(s.fill)
}

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
		if (len(s.local) > 0 && e.lastAcked < end-1) || e.sumAcked < s.lastReport || len(e.exchanges) > 0 {
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

// updateDisconnects applies the connection statuses gossiped by the peers:
// a player any running peer (or this session) considers disconnected is
// disconnected here too, at the lowest last frame anyone has.
func (s *P2PSession) updateDisconnects() {
	for _, i := range s.remote {
		connected := s.owner[i].state != stateDisconnected
		last := Frame(math.MaxInt32)
		for _, p := range s.peers {
			if p.state != stateRunning || !p.hasStatus {
				continue
			}
			ps := p.peerStatus[i]
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
	s.running = true
	s.net.event(Event{Kind: EventRunning})
}

// onRecord implements handler: a peer's inputs for frame f.
func (s *P2PSession) onRecord(e *endpoint, f Frame, rec []byte) bool {
	if e.spectator {
		s.net.malformedFrom(s, e, "inputs from a spectator", nil)
		return false
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
	return true
}

// pushLocal queues the newly complete local frames to every peer.
func (s *P2PSession) pushLocal() {
	if len(s.local) == 0 {
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
		for _, e := range s.peers {
			if e.state == stateDisconnected {
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
	if iv == 0 {
		return
	}
	for c := max(e.sumAcked, s.lastReport-remoteSumHistory*iv, 0)/iv*iv + iv; c <= s.lastReport && len(m.Reports) < wire.MaxReports; c += iv {
		if r := s.reports[int(c/iv)%remoteSumHistory]; r.ok && r.frame == c {
			m.Reports = append(m.Reports, wire.Report{Frame: int32(c), Checksum: r.sum})
		}
	}
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
		e.ackDue = true
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

// onMessage implements handler: parts requests and parts.
func (s *P2PSession) onMessage(e *endpoint, m *wire.Message) {
	switch m.Kind {
	case wire.KindPartsRequest:
		if parts, ok := s.sums.getParts(Frame(m.Frame)); ok {
			s.sendParts(e, Frame(m.Frame), parts)
		}
	case wire.KindParts:
		i := e.exchange(Frame(m.Frame))
		if i < 0 {
			return
		}
		x := &e.exchanges[i]
		for _, p := range m.Parts {
			name := string(p.Name)
			dup := false
			for _, q := range x.parts {
				if q.Name == name {
					dup = true
				}
			}
			if !dup && len(x.parts) < maxFileParts {
				x.parts = append(x.parts, Part{Name: name, Sum: p.Sum})
			}
		}
		local, _ := s.sums.getParts(x.frame)
		if len(x.parts) >= len(local) {
			s.endExchange(e, i, diffShort(local, x.parts, wire.MaxNameLen))
		}
	default:
		s.net.malformedFrom(s, e, "unexpected message", nil)
	}
}

// exchange returns the index of the parts exchange about frame f, or -1.
func (e *endpoint) exchange(f Frame) int {
	for i := range e.exchanges {
		if e.exchanges[i].frame == f {
			return i
		}
	}
	return -1
}

// compare checks the peer's report of check frame f against this session's
// once both are known and f is final here, exactly once per (peer, frame),
// and starts a parts exchange on a mismatch.
func (s *P2PSession) compare(e *endpoint, f Frame) {
	iv := s.cfg.DesyncInterval
	if iv == 0 || f <= 0 || f > s.checkSent {
		return
	}
	slot := &e.remoteSums[int(f)/iv%remoteSumHistory]
	if !slot.ok || slot.frame != f || slot.done {
		return
	}
	slot.done = true
	local := s.reports[int(f)/iv%remoteSumHistory]
	if !local.ok || local.frame != f || local.sum == slot.sum {
		return // equal, or no checksum of f was reported here
	}
	parts, ok := s.sums.getParts(f)
	if !ok || len(e.exchanges) >= maxExchanges {
		s.desyncEvent(e, f, local.sum, slot.sum, nil)
		return
	}
	e.exchanges = append(e.exchanges, exchange{frame: f, local: local.sum, remote: slot.sum, since: s.net.now})
	// The peer found the same mismatch: send our parts at once, and ask
	// for its until they arrive.
	s.sendParts(e, f, parts)
	s.requestParts(e, &e.exchanges[len(e.exchanges)-1])
}

func (s *P2PSession) requestParts(e *endpoint, x *exchange) {
	s.net.msg(wire.KindPartsRequest).Frame = int32(x.frame)
	s.net.send(e)
	x.last = s.net.now
}

// checkParts retries parts requests and gives up after partsTimeout.
func (s *P2PSession) checkParts() {
	for _, e := range s.peers {
		for i := 0; i < len(e.exchanges); {
			x := &e.exchanges[i]
			switch {
			case s.net.now.Sub(x.since) >= partsTimeout || e.state != stateRunning:
				s.endExchange(e, i, nil)
				continue
			case s.net.now.Sub(x.last) >= partsRetry:
				s.requestParts(e, x)
			}
			i++
		}
	}
}

// endExchange raises the desync event of exchange i (types nil when the
// peer's parts did not arrive) and removes it.
func (s *P2PSession) endExchange(e *endpoint, i int, types []string) {
	x := e.exchanges[i]
	s.desyncEvent(e, x.frame, x.local, x.remote, types)
	e.exchanges = append(e.exchanges[:i], e.exchanges[i+1:]...)
}

func (s *P2PSession) desyncEvent(e *endpoint, f Frame, local, remote uint64, types []string) {
	s.net.event(Event{Kind: EventDesyncDetected, Addr: e.addr, Frame: f, Local: local, Remote: remote, Types: types})
	s.stats.Desyncs++
}

// sendParts sends the parts of frame f in as many datagrams as they need.
func (s *P2PSession) sendParts(e *endpoint, f Frame, parts []Part) {
	for len(parts) > 0 {
		m := s.net.msg(wire.KindParts)
		m.Frame = int32(f)
		size := wire.HeaderSize + 10
		for len(parts) > 0 && len(m.Parts) < wire.MaxParts {
			name := shortName(parts[0].Name, wire.MaxNameLen)
			if size+len(name)+10 > transport.MaxPacketSize {
				break
			}
			size += len(name) + 10
			m.Parts = append(m.Parts, wire.Part{Name: []byte(name), Sum: parts[0].Sum})
			parts = parts[1:]
		}
		s.net.send(e)
	}
}

// timeSync samples frame advantages and recommends waiting when far ahead.
func (s *P2PSession) timeSync() {
	for _, e := range s.peers {
		if e.state == stateRunning {
			s.net.updateAdvantage(e, s.current)
		}
	}
	ahead := s.FramesAhead()
	if ahead >= minRecommendation && s.current-s.lastWaitRec >= recommendationInterval {
		s.lastWaitRec = s.current
		s.net.event(Event{Kind: EventWaitRecommendation, SkipFrames: ahead})
	}
}

// FramesAhead is the averaged number of frames this session runs ahead of
// the furthest-behind peer. A game loop runs slightly slower while it is
// positive (the Driver runs 10% slower) so peers stay in step.
func (s *P2PSession) FramesAhead() int {
	ahead := 0
	for _, e := range s.peers {
		if e.state == stateRunning {
			ahead = max(ahead, e.framesAhead())
		}
	}
	return ahead
}

// Events returns and clears the queued events (nil when none).
func (s *P2PSession) Events() []Event { return s.net.drainEvents(nil) }

// NetworkStats returns the connection statistics of a remote player's or a
// spectator's address.
func (s *P2PSession) NetworkStats(h PlayerHandle) (NetworkStats, error) {
	var e *endpoint
	if h >= 0 && int(h) < s.cfg.NumPlayers {
		e = s.owner[h]
	}
	for i, sh := range s.specOf {
		if sh == h {
			e = s.specs[i]
		}
	}
	if e == nil {
		return NetworkStats{}, ErrInvalidHandle
	}
	return s.net.stats(e)
}

// Stats returns the session's counters.
func (s *P2PSession) Stats() SessionStats {
	st := s.stats
	st.Frame = s.current
	st.Confirmed = s.ConfirmedFrame()
	st.EventsDropped = s.net.evDrop
	st.UnknownPackets = s.net.unknown
	return st
}

// CurrentFrame is the frame the next Advance simulates.
func (s *P2PSession) CurrentFrame() Frame { return s.current }

// ConfirmedFrame is the last frame whose inputs are final for every player:
// the game may free saved states before it (Ring.Confirm), and a state
// saved at ConfirmedFrame()+1 or earlier will never be rolled back.
func (s *P2PSession) ConfirmedFrame() Frame { return min(s.agreed, s.current-1) }

// MaxPrediction is the prediction window (0 in lockstep).
func (s *P2PSession) MaxPrediction() int { return s.cfg.maxPred }

// Running reports whether every peer is synchronized.
func (s *P2PSession) Running() bool { return s.running }

// NumPlayers is the number of players.
func (s *P2PSession) NumPlayers() int { return s.cfg.NumPlayers }

// LocalHandles lists the local players.
func (s *P2PSession) LocalHandles() []PlayerHandle { return s.local }

// RemoteHandles lists the remote players.
func (s *P2PSession) RemoteHandles() []PlayerHandle { return s.remote }

// SpectatorHandles lists the spectators.
func (s *P2PSession) SpectatorHandles() []PlayerHandle { return s.specOf }

// HandlesByAddress lists the players behind addr.
func (s *P2PSession) HandlesByAddress(addr netip.AddrPort) []PlayerHandle {
	if e := s.net.byAddr[addr]; e != nil && !e.spectator {
		return e.handles
	}
	return nil
}

// PlayerStatus reports whether player h is disconnected and the last frame
// of its inputs known here (for a disconnected player: the last frame before
// its inputs became the default).
func (s *P2PSession) PlayerStatus(h PlayerHandle) (disconnected bool, lastFrame Frame) {
	if h < 0 || int(h) >= s.cfg.NumPlayers {
		return false, NullFrame
	}
	return s.status[h].disconnected, s.status[h].lastFrame
}

// Close tells the peers this session leaves and flushes the recording. It
// does not close the conn.
func (s *P2PSession) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	for _, e := range s.net.eps {
		if e.state == stateRunning {
			e.disconnectRq = true
			s.net.sendInput(e, s.fill)
		}
	}
	if s.rec != nil {
		// Record what became final with the last requests.
		s.confirmedWork(s.agreed)
		return s.rec.close(s.current)
	}
	return nil
}
