package rollback

// Desync detection beyond the checksum reports: comparing a peer's report
// with ours, and the parts exchange that names the differing types in
// EventDesyncDetected.

import (
	"slices"
	"time"

	"github.com/rewindgo/rewind/rollback/internal/wire"
	"github.com/rewindgo/rewind/transport"
)

// onMessage implements handler: parts requests and parts.
func (s *P2PSession) onMessage(e *endpoint, m *wire.Message) {
	switch m.Kind {
	case wire.KindPartsRequest:
		if parts, ok := s.sums.getParts(Frame(m.Frame)); ok {
			s.sendParts(e, Frame(m.Frame), parts)
		}
	case wire.KindDump, wire.KindDumpAck:
		s.onDump(e, m)
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
	if types != nil {
		s.startDump(e, x.frame, x.local, x.remote, types)
	}
	e.exchanges = slices.Delete(e.exchanges, i, i+1)
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

// exchange is a parts exchange with a peer about one checked frame whose
// checksums differ: it ends with one EventDesyncDetected.
type exchange struct {
	frame         Frame
	local, remote uint64
	since, last   time.Time
	parts         []Part // the peer's parts received so far
}
