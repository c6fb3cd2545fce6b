package rollback

// Rejoining a match (Config.RejoinBytes, Config.Rejoin). A peer that was
// disconnected comes back with a new session at the same address:
//
//  1. It handshakes with every peer; each accepts the new handshake of a
//     disconnected address (netcore.resync) and marks the endpoint joining
//     (its gossip counts for nothing, nothing is sent to it but
//     handshake, keep-alive and rejoin messages).
//  2. It sends RejoinRequest to the host: the peer owning the lowest remote
//     handle.
//  3. The host picks F, the newest state that is final and saved
//     (min(agreed+1, current-1)), G, the newest frame whose inputs are all
//     known here, and R, a frame none of its inputs has been sent for yet
//     (so no peer has confirmed it). It sends the rejoiner the state of F
//     (StateSource) with its checksum, the statuses and the records F..G
//     in acknowledged State pieces, tells every other peer (RejoinNotice:
//     player, R, G+1; its inputs from R wait until the notice is
//     acknowledged, so no peer can confirm R without knowing it), and from
//     then on treats the rejoining players' inputs as the default for the
//     frames after their disconnect frame D and before R, and as real from
//     R. Every peer restarts its input stream to the rejoiner at G+1 (from
//     a history of its own records) and expects the rejoiner's from R.
//  4. The rejoiner decodes the state, asks the game to load it
//     (LoadStateRequest, then Save(F)), compares the reported checksum with
//     the host's (ErrRejoin on a mismatch), replays F.. with the inputs it
//     got, and sends its own inputs from R only once the checksum matched.

import (
	"fmt"
	"time"

	"github.com/rewindgo/rewind/rollback/internal/wire"
)

const (
	rejoinRetry = 60 * time.Millisecond // requests, state windows and notices go again after this
	// rejoinLead is how many frames after the host's newest sent input the
	// rejoining players' inputs start: time for the state to arrive and be
	// replayed before the others wait for them.
	rejoinLead = 30
	// rejoinTimeout: a rejoining session whose state has not arrived this
	// long after its first request gives up (ErrRejoin).
	rejoinTimeout = 10 * time.Second
)

// StateSource returns the encoded game state saved as frame f and its
// checksum (the one ReportChecksum would report), or ok false when that
// frame is no longer held. A rejoining peer's game gets the bytes in a
// LoadStateRequest. Every peer of a match that allows rejoining
// (Config.RejoinBytes) sets one: any of them may be the host of a rejoin.
type StateSource func(f Frame) (state []byte, sum uint64, ok bool)

// SetStateSource sets where the session gets the states it sends rejoining
// peers (Config.RejoinBytes).
func (s *P2PSession) SetStateSource(src StateSource) { s.stateSrc = src }

// epRejoin is the rejoin state of one endpoint.
type epRejoin struct {
	// joining: the endpoint re-synchronized after a disconnect and its
	// players' inputs have not arrived yet: its gossip is ignored.
	joining bool
	// hold: no Input messages until the frame its stream restarts from is
	// known (the host's choice, or a RejoinNotice).
	hold bool
	// asked: a RejoinRequest arrived (host side), handled by prepareRejoins.
	asked bool
	// banned: disconnected on purpose (DisconnectPlayer, misbehaviour): a
	// new handshake from the address is not accepted.
	banned bool
	// recvFrom is the frame whose message has no delta base: 0, or the
	// first frame expected after a rejoin.
	recvFrom Frame
	// sendLimit: inputs of frames from sendLimit on wait until the peer
	// acknowledged the RejoinNotice (NullFrame: no limit).
	sendLimit Frame
	// notice is the RejoinNotice owed to this peer (host side).
	notice *wire.Message
	// out is the encoded rejoin state being sent (host side), acked the
	// bytes the rejoiner holds, outAt when the last window went.
	out          []byte
	outFrame     Frame
	acked        int
	outAt, askAt time.Time
}

// rejoiner is the state of a session that joins a match (Config.Rejoin).
type rejoiner struct {
	host    *endpoint
	since   time.Time // the first request
	in      []byte    // the state so far
	total   int       // its announced size, -1 before the first piece
	inFrame Frame
	// loaded: the state was applied; verify: the frame whose checksum is
	// to be compared with sum (NullFrame once it matched); load is the
	// LoadStateRequest's state, handed out once.
	loaded bool
	verify Frame
	sum    uint64
	load   []byte
	err    error
	rejoin Frame
}

// allowsRejoin reports whether a disconnected peer may come back.
func (r *resolved) allowsRejoin() bool { return r.RejoinBytes > 0 }

// resync restarts the protocol with a disconnected peer whose new session
// sent a SyncRequest with magic: a fresh handshake and fresh input streams;
// the endpoint is joining until its players' inputs arrive.
func (n *netcore) resync(e *endpoint, magic uint16) {
	*e = endpoint{
		epLink:      epLink{addr: e.addr, handles: e.handles, state: stateSyncing},
		epHandshake: epHandshake{syncLeft: syncRoundTrips, remoteMagic: magic},
		epSend:      epSend{pending: newRecordRing(n.maxRecord()), lastAcked: NullFrame},
		epRecv: epRecv{recv: newRecordRing(n.maxRecord()), lastRecv: NullFrame, lastSeen: NullFrame,
			lastHeard: n.now, peerStatus: make([]wire.PeerStatus, n.cfg.NumPlayers)},
		epSums:   epSums{sumAcked: NullFrame, reportSent: NullFrame, sumRecv: NullFrame},
		epMeter:  e.epMeter,
		epRejoin: epRejoin{joining: true, hold: true, sendLimit: NullFrame},
	}
	for e.magic == 0 {
		e.magic = uint16(n.rand.Uint64())
	}
	e.syncNonce = uint32(n.rand.Uint64())
	n.event(Event{Kind: EventSynchronizing, Addr: e.addr, Count: 0, Total: syncRoundTrips})
	n.sendSync(e)
}

// restartStream makes e's input stream from us start at frame from, from
// the history of our records, and expects its stream from recvFrom.
func (s *P2PSession) restartStream(e *endpoint, from, recvFrom Frame) error {
	e.pending = newRecordRing(s.net.maxRecord())
	e.lastAcked = from - 1
	if len(s.local) > 0 && s.localPushed >= from {
		if !s.hist.has(from) {
			return fmt.Errorf("%w: inputs from frame %d are no longer held (oldest %d)", ErrRejoin, from, s.hist.first)
		}
		for f := from; f <= s.localPushed; f++ {
			e.pending.push(f, s.hist.get(f))
		}
		e.inputDirty = true
	}
	e.recv = newRecordRing(s.net.maxRecord())
	e.recvFrom, e.lastRecv, e.lastSeen = recvFrom, recvFrom-1, recvFrom-1
	e.hold = false
	return nil
}

// readmit makes player h's inputs the default after its disconnect frame
// and real again from frame r: the queue is filled with the default up to
// r-1.
func (s *P2PSession) readmit(h PlayerHandle, r Frame) {
	st := &s.status[h]
	gap := st.lastFrame
	if !st.disconnected {
		gap = min(st.lastFrame, r-1)
	}
	q := s.queues[h]
	for q.head < r-1 {
		if q.head != NullFrame && !q.room(q.head+1) {
			q.discard(q.head)
		}
		q.put(q.head+1, s.cfg.DefaultInput)
	}
	*st = playerStatus{lastFrame: r - 1, gapLast: gap, rejoinAt: r}
	if r < s.current && (s.discRollback == NullFrame || r < s.discRollback) {
		// Simulated with the default where real inputs will come.
		s.discRollback = r
	}
}

// onRejoinMessage handles the rejoin kinds.
func (s *P2PSession) onRejoinMessage(e *endpoint, m *wire.Message) {
	if !s.cfg.allowsRejoin() || e.spectator {
		return
	}
	switch m.Kind {
	case wire.KindRejoinRequest:
		if e.joining && e.out == nil {
			e.asked = true
		}
	case wire.KindStateAck:
		if e.out != nil && Frame(m.Frame) == e.outFrame && int(m.Total) == len(e.out) {
			e.acked = max(e.acked, int(m.Offset))
		}
	case wire.KindRejoinNotice:
		s.onNotice(e, m)
	case wire.KindRejoinNoticeAck:
		if e.notice != nil && m.Player == e.notice.Player && m.Frame == e.notice.Frame {
			e.notice = nil
			e.sendLimit = NullFrame
			e.inputDirty = true
		}
	case wire.KindState:
		s.onStatePiece(e, m)
	}
}

// onNotice applies a host's RejoinNotice: the players behind the
// rejoining address play again from m.Frame, and our stream to it
// restarts at m.StartFrame.
func (s *P2PSession) onNotice(from *endpoint, m *wire.Message) {
	h := PlayerHandle(m.Player)
	if int(h) >= s.cfg.NumPlayers || s.owner[h] == nil || s.owner[h] == from {
		return
	}
	e := s.owner[h]
	r := Frame(m.Frame)
	if s.status[h].rejoinAt != r {
		if e.state == stateDisconnected || !e.joining {
			return // its handshake has not reached us yet: the host repeats
		}
		if r <= s.agreed {
			s.net.log.Error("rollback: rejoin notice for a final frame", "frame", r, "agreed", s.agreed)
			return
		}
		if err := s.restartStream(e, Frame(m.StartFrame), r); err != nil {
			s.net.log.Warn("rollback: rejoin", "err", err)
			s.dropEndpoint(e, err.Error())
			return
		}
		for _, o := range e.handles {
			s.readmit(o, r)
		}
		s.net.event(Event{Kind: EventRejoined, Addr: e.addr, Frame: r})
	}
	a := s.net.msg(wire.KindRejoinNoticeAck)
	a.Player, a.Frame = m.Player, m.Frame
	s.net.send(from)
}

// prepareRejoins starts the rejoins asked for since the last call (host
// side). It runs where the requests of the previous call were carried out
// and nothing was rolled back since, so the saved state of
// min(agreed+1, current-1) is final.
func (s *P2PSession) prepareRejoins() {
	for _, e := range s.peers {
		if e.asked && e.out == nil && e.state == stateRunning {
			s.prepareRejoin(e)
		}
	}
}

func (s *P2PSession) prepareRejoin(e *endpoint) {
	if s.stateSrc == nil {
		s.net.log.Warn("rollback: a peer asks to rejoin and no StateSource is set", "addr", e.addr)
		e.asked = false
		return
	}
	f := min(s.agreed+1, s.current-1)
	g := s.localConfirmed
	if f < 1 || g < f-1 {
		return // too early in the match: asked again
	}
	r := max(s.current, s.localPushed+1) + rejoinLead
	for i, st := range s.status {
		if s.owner[i] == e {
			r = max(r, s.queues[i].head+1)
			continue
		}
		if st.disconnected && st.lastFrame > g {
			return // its inputs up to lastFrame are not all here: later
		}
	}
	if r-f >= queueLen {
		return
	}
	state, sum, ok := s.stateSrc(f)
	limit := min(s.cfg.RejoinBytes, wire.MaxDumpSize)
	if !ok {
		return
	}
	rs := rejoinState{frame: f, rejoin: r, sum: sum, state: state}
	for _, st := range s.status {
		rs.status = append(rs.status, playerStatus{disconnected: st.disconnected, lastFrame: st.lastFrame})
	}
	for x := f; x <= g; x++ {
		rs.records = append(rs.records, append([]byte(nil), s.fullRecord(x)...))
	}
	out := rs.append(nil)
	if len(out) > limit {
		s.net.log.Warn("rollback: rejoin state over RejoinBytes: not sent", "bytes", len(out), "limit", limit)
		e.asked = false
		return
	}
	if err := s.restartStream(e, g+1, r); err != nil {
		s.net.log.Warn("rollback: rejoin", "err", err)
		return
	}
	e.out, e.outFrame, e.acked = out, f, 0
	for _, h := range e.handles {
		s.readmit(h, r)
	}
	for _, p := range s.peers {
		if p == e || p.state != stateRunning || p.joining {
			continue
		}
		p.notice = &wire.Message{Kind: wire.KindRejoinNotice, Player: uint8(e.handles[0]), Frame: int32(r), StartFrame: int32(g + 1)}
		p.sendLimit = r
		s.sendNotice(p)
	}
	s.sendState(e)
	s.net.log.Debug("rollback: rejoin", "addr", e.addr, "state", f, "inputs to", g, "rejoin", r, "bytes", len(out))
	s.net.event(Event{Kind: EventRejoined, Addr: e.addr, Frame: r})
}

func (s *P2PSession) sendNotice(p *endpoint) {
	m := s.net.msg(wire.KindRejoinNotice)
	m.Player, m.Frame, m.StartFrame = p.notice.Player, p.notice.Frame, p.notice.StartFrame
	s.net.send(p)
	p.outAt = s.net.now
}

// sendState sends the next window of the rejoin state's pieces.
func (s *P2PSession) sendState(e *endpoint) {
	e.outAt = s.net.now
	for off, k := e.acked, 0; off < len(e.out) && k < dumpWindow; k++ {
		end := min(off+dumpPiece, len(e.out))
		m := s.net.msg(wire.KindState)
		m.Frame, m.Total, m.Offset, m.Data = int32(e.outFrame), uint32(len(e.out)), uint32(off), e.out[off:end]
		s.net.send(e)
		off = end
	}
}

// checkRejoins resends what is unacknowledged: state windows, notices,
// and the rejoiner's request.
func (s *P2PSession) checkRejoins() {
	for _, e := range s.peers {
		if e.state != stateRunning || s.net.now.Sub(e.outAt) < rejoinRetry {
			continue
		}
		switch {
		case e.out != nil && e.acked < len(e.out):
			s.sendState(e)
		case e.notice != nil:
			s.sendNotice(e)
		}
		if e.out != nil && e.acked >= len(e.out) {
			e.out = e.out[:0:0]
		}
	}
	if rj := s.rj; rj != nil && !rj.loaded && rj.host != nil && rj.err == nil {
		switch {
		case rj.host.state == stateDisconnected:
			rj.err = fmt.Errorf("%w: the host %v disconnected before the state arrived", ErrRejoin, rj.host.addr)
		case s.net.now.Sub(rj.since) >= rejoinTimeout:
			rj.err = fmt.Errorf("%w: no state from the host %v within %v (%d of %d bytes)", ErrRejoin, rj.host.addr, rejoinTimeout, len(rj.in), max(rj.total, 0))
		}
	}
	if rj := s.rj; rj != nil && !rj.loaded && rj.host != nil && rj.total < 0 && rj.err == nil && s.net.now.Sub(rj.host.askAt) >= rejoinRetry {
		s.net.msg(wire.KindRejoinRequest)
		s.net.send(rj.host)
		rj.host.askAt = s.net.now
	}
}

// onStatePiece receives a piece of the rejoin state (rejoiner side).
func (s *P2PSession) onStatePiece(e *endpoint, m *wire.Message) {
	rj := s.rj
	if rj == nil || e != rj.host {
		return
	}
	limit := min(s.cfg.RejoinBytes, wire.MaxDumpSize)
	switch {
	case rj.total < 0 && int(m.Total) <= limit && m.Total > 0:
		rj.total, rj.inFrame = int(m.Total), Frame(m.Frame)
		rj.in = make([]byte, 0, rj.total)
	case rj.total < 0, int(m.Total) != rj.total, Frame(m.Frame) != rj.inFrame:
		return
	}
	if int(m.Offset) == len(rj.in) {
		rj.in = append(rj.in, m.Data...)
	}
	a := s.net.msg(wire.KindStateAck)
	a.Frame, a.Total, a.Offset = m.Frame, uint32(rj.total), uint32(len(rj.in))
	s.net.send(e)
	if len(rj.in) == rj.total && !rj.loaded {
		s.applyRejoin()
	}
}

// startRejoin asks the host for the state once every handshake is done.
func (s *P2PSession) startRejoin() {
	rj := s.rj
	if len(s.remote) == 0 {
		rj.err = fmt.Errorf("%w: no remote player to rejoin", ErrRejoin)
		return
	}
	rj.host = s.owner[s.remote[0]]
	rj.since = s.net.now
	s.net.msg(wire.KindRejoinRequest)
	s.net.send(rj.host)
	rj.host.askAt = s.net.now
}

// applyRejoin takes the complete rejoin state: the frame, the statuses,
// the inputs F..G, and the game state to load.
func (s *P2PSession) applyRejoin() {
	rj := s.rj
	st, err := decodeRejoinState(rj.in, s.cfg.NumPlayers, s.cfg.MaxInputSize, min(s.cfg.RejoinBytes, wire.MaxDumpSize))
	if err != nil {
		rj.err = err
		return
	}
	rj.loaded, rj.verify, rj.sum, rj.load, rj.rejoin = true, st.frame, st.sum, st.state, st.rejoin
	f, g := st.frame, st.frame+Frame(len(st.records))-1
	for i := range s.queues {
		q := newInputQueue(s.cfg.MaxInputSize, s.cfg.Predictor, s.cfg.DefaultInput)
		q.delay = s.queues[i].delay
		q.put(f-1, s.cfg.DefaultInput) // the base: frames from f follow
		h := i
		for x, rec := range st.records {
			splitRecord(rec, s.cfg.NumPlayers, s.cfg.MaxInputSize, func(j int, in []byte, _ bool) {
				if j == h {
					q.put(f+Frame(x), in)
				}
			})
		}
		s.queues[i] = q
		s.status[i] = playerStatus{disconnected: st.status[i].disconnected, lastFrame: min(st.status[i].lastFrame, g)}
		if !st.status[i].disconnected {
			s.status[i].lastFrame = g
		}
		if s.owner[i] == nil {
			// Our own players: the default after their disconnect frame
			// up to the rejoin frame.
			s.status[i].lastFrame = st.status[i].lastFrame
			s.status[i].disconnected = true
			s.readmit(PlayerHandle(i), st.rejoin)
		}
	}
	for _, e := range s.peers {
		e.recv = newRecordRing(s.net.maxRecord())
		e.recvFrom, e.lastRecv, e.lastSeen = g+1, g, g
		e.pending = newRecordRing(s.net.maxRecord())
		e.lastAcked = st.rejoin - 1
	}
	s.current = f
	s.agreed, s.lastSaved, s.pushed = f-1, f-1, f-1
	s.localPushed = st.rejoin - 1
	if iv := Frame(s.cfg.DesyncInterval); iv > 0 {
		s.checkSent = (f - 1) / iv * iv
	}
	s.running = true
	s.net.event(Event{Kind: EventRunning})
}

// rejoinRequests returns the LoadStateRequest of a rejoining session's
// first frame (once), and its error.
func (s *P2PSession) rejoinRequests() error {
	rj := s.rj
	if rj.err != nil {
		return rj.err
	}
	if rj.load != nil {
		s.reqs = append(s.reqs, Request{Kind: LoadStateRequest, Frame: rj.verify, State: rj.load})
		rj.load = nil
		return nil
	}
	if rj.verify != NullFrame && s.current > rj.verify {
		// The Save of the loaded frame was handed out with the last
		// requests: its checksum must have been reported.
		rj.err = fmt.Errorf("%w: the checksum of the loaded frame %d was not reported", ErrRejoin, rj.verify)
		return rj.err
	}
	return nil
}

// verifyRejoin compares the checksum reported for the loaded frame with
// the host's.
func (s *P2PSession) verifyRejoin(f Frame, sum uint64) {
	rj := s.rj
	if rj == nil || !rj.loaded || rj.verify == NullFrame || f != rj.verify {
		return
	}
	if sum != rj.sum {
		rj.err = fmt.Errorf("%w: checksum of the loaded frame %d is %#x, the host's %#x", ErrRejoin, f, sum, rj.sum)
		return
	}
	rj.verify = NullFrame
	s.net.event(Event{Kind: EventRejoined, Addr: rj.host.addr, Frame: rj.rejoin})
}

// rejoinVerified reports whether local inputs may go out: always, except
// on a rejoining session before its loaded state's checksum matched.
func (s *P2PSession) rejoinVerified() bool {
	return s.rj == nil || (s.rj.loaded && s.rj.verify == NullFrame && s.rj.err == nil)
}
