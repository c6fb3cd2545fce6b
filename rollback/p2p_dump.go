package rollback

// Desync dumps over the session (Config.DesyncDumpBytes): once a parts
// exchange has named the differing types of a desynced frame, each peer
// sends the other its dump of those types at that frame (bytes from the
// DumpSource, opaque here: package snapshot's Dump encoding when the
// source is rollback/runner), in Dump pieces that the receiver
// acknowledges by the length it holds in order, and raises
// EventDesyncDump with both dumps when its own has been acknowledged and
// the peer's has arrived (or after dumpTimeout, with what it has).

import (
	"slices"
	"time"

	"github.com/rewindgo/rewind/rollback/internal/wire"
)

const (
	dumpRetry   = 60 * time.Millisecond // a piece window goes again after this
	dumpTimeout = 10 * time.Second      // an unfinished dump exchange gives up
	dumpWindow  = 8                     // pieces sent per round
	// dumpPiece is the data of one Dump message: the packet less header
	// and the three varints (at most 5 bytes each).
	dumpPiece = wire.MaxPacketSize - wire.HeaderSize - 15
)

// DumpSource returns this peer's dump of frame f restricted to the named
// types (checksum Part names), or nil when it has none. rollback/runner
// sets it (Config.Dumps); the bytes are opaque to the session.
type DumpSource func(f Frame, types []string) []byte

// SetDumpSource sets where the session gets its desync dumps from
// (Config.DesyncDumpBytes). The runner sets it when its Config.Dumps is on.
func (s *P2PSession) SetDumpSource(src DumpSource) { s.dumpSrc = src }

// dumpXfer is the exchange of dumps with one peer about one frame.
type dumpXfer struct {
	frame         Frame
	types         []string
	local, remote uint64 // the frame's checksums
	mine          []byte // our dump
	out           []byte // what we send: mine, or nothing when over the bound
	acked         int    // leading bytes of out the peer holds
	ackSeen       bool   // an ack of out arrived (out may be empty)
	in            []byte // the peer's dump so far (cap: its total)
	total         int    // the peer's announced size; -1 before its first piece
	since, last   time.Time
}

// startDump begins the dump exchange of frame f with e after its parts
// exchange named types: once per peer, for the first desync (later ones
// are usually its consequences).
func (s *P2PSession) startDump(e *endpoint, f Frame, local, remote uint64, types []string) bool {
	limit := min(s.cfg.DesyncDumpBytes, wire.MaxDumpSize)
	if limit <= 0 || s.dumpSrc == nil || e.dumped {
		return false
	}
	e.dumped = true // the first desync with a peer is the one to examine
	mine, out := s.dumpSrc(f, types), []byte(nil)
	if len(mine) <= limit {
		out = mine // else too large to exchange: the peer is told "none"
	}
	e.dumps = append(e.dumps, dumpXfer{frame: f, types: types, local: local, remote: remote, mine: mine, out: out, total: -1, since: s.net.now})
	s.sendDump(e, &e.dumps[len(e.dumps)-1])
	return true
}

// sendDump sends the next window of x's pieces (or "none").
func (s *P2PSession) sendDump(e *endpoint, x *dumpXfer) {
	x.last = s.net.now
	if len(x.out) == 0 {
		m := s.net.msg(wire.KindDump)
		m.Frame = int32(x.frame)
		s.net.send(e)
		return
	}
	for off, k := x.acked, 0; off < len(x.out) && k < dumpWindow; k++ {
		end := min(off+dumpPiece, len(x.out))
		m := s.net.msg(wire.KindDump)
		m.Frame, m.Total, m.Offset, m.Data = int32(x.frame), uint32(len(x.out)), uint32(off), x.out[off:end]
		s.net.send(e)
		off = end
	}
}

// onDump handles a Dump piece or ack from e.
func (s *P2PSession) onDump(e *endpoint, m *wire.Message) {
	i := slices.IndexFunc(e.dumps, func(x dumpXfer) bool { return x.frame == Frame(m.Frame) })
	if i < 0 {
		return // not (yet) a desync here: the peer sends again
	}
	x := &e.dumps[i]
	if m.Kind == wire.KindDumpAck {
		if int(m.Total) == len(x.out) {
			x.acked, x.ackSeen = max(x.acked, int(m.Offset)), true
		}
	} else {
		limit := min(s.cfg.DesyncDumpBytes, wire.MaxDumpSize)
		switch {
		case x.total < 0 && int(m.Total) <= limit:
			x.total = int(m.Total)
			x.in = make([]byte, 0, x.total)
		case x.total < 0, int(m.Total) != x.total:
			return // over our bound, or another size than announced
		}
		if int(m.Offset) == len(x.in) {
			x.in = append(x.in, m.Data...)
		}
		a := s.net.msg(wire.KindDumpAck)
		a.Frame, a.Total, a.Offset = m.Frame, uint32(x.total), uint32(len(x.in))
		s.net.send(e)
	}
	if x.total >= 0 && len(x.in) == x.total && x.ackSeen && x.acked == len(x.out) {
		s.endDump(e, i)
	}
}

// checkDumps resends unacknowledged pieces and gives up on old exchanges.
func (s *P2PSession) checkDumps() {
	for _, e := range s.peers {
		for i := 0; i < len(e.dumps); {
			x := &e.dumps[i]
			switch {
			case s.net.now.Sub(x.since) >= dumpTimeout || e.state != stateRunning:
				s.endDump(e, i)
				continue
			case s.net.now.Sub(x.last) >= dumpRetry && (!x.ackSeen || x.acked < len(x.out)):
				s.sendDump(e, x)
			}
			i++
		}
	}
}

// endDump raises EventDesyncDump for exchange i (RemoteDump nil when the
// peer's dump did not arrive whole) and removes it.
func (s *P2PSession) endDump(e *endpoint, i int) {
	x := e.dumps[i]
	var remote []byte
	if x.total > 0 && len(x.in) == x.total {
		remote = x.in
	}
	s.net.event(Event{Kind: EventDesyncDump, Addr: e.addr, Frame: x.frame, Local: x.local, Remote: x.remote,
		Types: x.types, LocalDump: x.mine, RemoteDump: remote})
	e.dumps = slices.Delete(e.dumps, i, i+1)
}
