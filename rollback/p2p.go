package rollback

// The P2P session: its state, NewP2P, and its public API besides the frame
// (inputs, Poll, handles, stats, Close). The frame is in p2p_synclayer.go,
// final frames and the end of a match in p2p_confirmed.go, the peer protocol
// in p2p_peers.go, desync detection in p2p_desync.go, time sync in
// timesync.go.

import (
	"net/netip"

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

	// queues holds each player's inputs by frame (handle order); status
	// each player's connection status as gossiped (disconnected, last
	// frame).
	queues []*inputQueue
	status []playerStatus
	// owner is the endpoint of each remote player (nil for local ones);
	// local and remote list the handles of each kind.
	owner  []*endpoint
	local  []PlayerHandle
	remote []PlayerHandle
	// peers are the remote players' endpoints, specs the spectators'.
	peers  []*endpoint
	specs  []*endpoint
	specOf []PlayerHandle // handle of specs[i]
	// dumpSrc gives this peer's desync dumps (SetDumpSource).
	dumpSrc DumpSource

	// running: every peer is synchronized; closed: Close was called.
	running bool
	closed  bool
	// current is the frame the next Advance simulates.
	current Frame
	// agreed is the newest frame whose inputs every peer knows (from the
	// statuses each Input gossips): ConfirmedFrame. Only agreed frames
	// are sent to spectators, recorded, compared or freed.
	agreed Frame
	// localConfirmed is the newest frame whose inputs are all known here;
	// it bounds prediction (current - localConfirmed <= the window).
	localConfirmed Frame
	// lastSaved is the newest frame saved that is final or about to be
	// (at most agreed+1; any saved frame without SparseSaving): the
	// rollback target of sparse saving, and inputs after it are kept.
	lastSaved Frame
	// checkSent is the newest desync check frame (a multiple of
	// DesyncInterval) whose checksum was taken into reports.
	checkSent Frame
	// pushed is the newest agreed frame handed to the spectators and the
	// recording (confirmedWork); inputs from it on are kept.
	pushed Frame
	// localPushed is the newest frame whose local inputs were queued for
	// every peer (pushLocal).
	localPushed Frame
	// discRollback is the first frame a disconnect changed the inputs of
	// (the frame after the player's last), to roll back to in the next
	// AdvanceFrame; NullFrame when none.
	discRollback Frame
	// advanced: the last AdvanceFrame advanced the current frame.
	advanced bool
	// lastWaitRec is the frame of the last EventWaitRecommendation, to
	// space them by recommendationInterval.
	lastWaitRec Frame
	// endSaved: the state of frame EndFrame was saved since the last rollback.
	endSaved bool
	// reports holds the final checksums of recent check frames (by check
	// frame), resent to each peer until it acknowledges them; lastReport is
	// the newest.
	reports    [remoteSumHistory]sumEntry
	lastReport Frame

	// localIn and localHave are the local inputs added for the current
	// frame (by handle); reqs, inBuf and scratch are buffers reused by
	// every AdvanceFrame (requests, their inputs, record encoding).
	localIn   [][]byte
	localHave []bool
	reqs      []Request
	inBuf     []Input
	// sums are the checksums reported for saved frames, rec the recording
	// (nil without Config.Record), stats the counters of Stats.
	sums    *sumHistory
	rec     *recorder
	scratch []byte
	stats   SessionStats
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
	s.checkDumps()
	s.net.flush(s.fill)
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
