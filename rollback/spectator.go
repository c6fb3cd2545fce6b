package rollback

import (
	"net/netip"

	"github.com/rewindgo/rewind/rollback/internal/wire"
	"github.com/rewindgo/rewind/transport"
)

// SpectatorSession follows a host (a P2PSession that registered this
// address as a Spectator): it receives every player's confirmed inputs and
// returns only Advance requests, never predicting. When it falls more than
// MaxFramesBehind behind, each AdvanceFrame advances up to CatchupSpeed
// frames. It holds SpectatorBuffer frames ahead; further frames are refused
// and the host resends them.
type SpectatorSession struct {
	cfg     resolved
	net     netcore
	host    *endpoint
	running bool
	closed  bool
	current Frame
	tooFar  bool
	reqs    []Request
	inputs  []Input
	inBuf   []byte
}

// NewSpectator starts a spectator session that follows the host at host.
// cfg.NumPlayers and cfg.MaxInputSize must match the host's.
func NewSpectator(conn transport.PacketConn, host netip.AddrPort, cfg Config) (*SpectatorSession, error) {
	r, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if conn == nil {
		return nil, invalid("conn is nil")
	}
	if !host.IsValid() {
		return nil, invalid("host address %v is not valid", host)
	}
	s := &SpectatorSession{cfg: r}
	s.net.init(&s.cfg, conn)
	s.host = s.net.addEndpoint(host)
	s.host.host = true
	n := r.NumPlayers
	k := r.spectatorCatchup()
	s.inputs = make([]Input, n*k)
	s.inBuf = make([]byte, 0, n*k*r.MaxInputSize)
	s.reqs = make([]Request, 0, k)
	s.net.sendSync(s.host)
	return s, nil
}

// spectatorCatchup is the most frames a spectator advances in one call.
func (r *resolved) spectatorCatchup() int { return min(r.CatchupSpeed, SpectatorBuffer-1) }

// AdvanceFrame polls the network and returns the Advance requests to carry
// out: one frame normally, up to CatchupSpeed when behind. It returns
// ErrWaitingForInput when the next frame's inputs have not arrived, and
// ErrNotSynchronized before the handshake is done.
func (s *SpectatorSession) AdvanceFrame() ([]Request, error) {
	if s.closed {
		return nil, ErrClosed
	}
	s.reqs = s.reqs[:0]
	s.inBuf = s.inBuf[:0]
	s.net.poll(s)
	defer s.net.flush(nil)
	if !s.running {
		return nil, ErrNotSynchronized
	}
	if s.Finished() {
		return nil, nil
	}
	behind := s.FramesBehindHost()
	if behind >= SpectatorBuffer && !s.tooFar {
		s.tooFar = true
		s.net.event(Event{Kind: EventTooFarBehind, Addr: s.host.addr, SkipFrames: behind})
	} else if behind < SpectatorBuffer {
		s.tooFar = false
	}
	steps := 1
	if behind > s.cfg.MaxFramesBehind {
		steps = min(s.cfg.spectatorCatchup(), behind)
	}
	n := s.cfg.NumPlayers
	for k := 0; k < steps; k++ {
		if !s.host.recv.has(s.current) || s.Finished() {
			break
		}
		rec := s.host.recv.get(s.current)
		ins := s.inputs[k*n : (k+1)*n : (k+1)*n]
		splitRecord(rec, n, s.cfg.MaxInputSize, func(i int, in []byte, disc bool) {
			j := len(s.inBuf)
			s.inBuf = append(s.inBuf, in...)
			st := Confirmed
			if disc {
				st = Disconnected
			}
			ins[i] = Input{Bytes: s.inBuf[j:len(s.inBuf):len(s.inBuf)], Status: st}
		})
		s.reqs = append(s.reqs, Request{Kind: AdvanceRequest, Frame: s.current, Inputs: ins})
		s.current++
	}
	if len(s.reqs) == 0 {
		return nil, ErrWaitingForInput
	}
	return s.reqs, nil
}

// FramesBehindHost is how many frames the host has sent beyond the current one.
func (s *SpectatorSession) FramesBehindHost() int {
	return max(0, int(s.host.lastSeen-s.current+1))
}

// CurrentFrame is the frame the next Advance simulates.
func (s *SpectatorSession) CurrentFrame() Frame { return s.current }

// Running reports whether the handshake with the host is done.
func (s *SpectatorSession) Running() bool { return s.running }

// Poll receives and answers network traffic without advancing.
func (s *SpectatorSession) Poll() {
	if !s.closed {
		s.net.poll(s)
		s.net.flush(nil)
	}
}

// Events returns and clears the queued events (nil when none).
func (s *SpectatorSession) Events() []Event { return s.net.drainEvents(nil) }

// NetworkStats returns the statistics of the connection to the host.
func (s *SpectatorSession) NetworkStats() (NetworkStats, error) { return s.net.stats(s.host) }

// Close tells the host this spectator leaves. It does not close the conn.
func (s *SpectatorSession) Close() error {
	if !s.closed {
		s.closed = true
		s.net.disconnect(s.host, "closed")
	}
	return nil
}

func (s *SpectatorSession) onRecord(_ *endpoint, f Frame, _ []byte) bool {
	return f < s.current+SpectatorBuffer
}

func (s *SpectatorSession) onMessage(e *endpoint, m *wire.Message) {
	s.net.malformedFrom(s, e, "unexpected message kind "+m.Kind.String(), nil)
}

func (s *SpectatorSession) dropEndpoint(e *endpoint, reason string) { s.net.disconnect(e, reason) }

func (s *SpectatorSession) onInputMeta(*endpoint, *wire.Message) {}
func (s *SpectatorSession) owes(*endpoint) bool                  { return false }
func (s *SpectatorSession) fill(*endpoint, *wire.Message)        {}

func (s *SpectatorSession) synchronized(*endpoint) {
	if !s.running {
		s.running = true
		s.net.event(Event{Kind: EventRunning})
	}
}

// LocalHandles returns nil: a spectator has no players.
func (s *SpectatorSession) LocalHandles() []PlayerHandle { return nil }

// AddLocalInput returns ErrInvalidHandle: a spectator has no players.
func (s *SpectatorSession) AddLocalInput(PlayerHandle, []byte) error { return ErrInvalidHandle }

// ReportChecksum does nothing: a spectator never asks for a save.
func (s *SpectatorSession) ReportChecksum(Frame, uint64, []Part) {}

// WantsChecksum reports false.
func (s *SpectatorSession) WantsChecksum(Frame) bool { return false }

// ConfirmedFrame is CurrentFrame()-1: a spectator simulates confirmed inputs
// only, so every state is final.
func (s *SpectatorSession) ConfirmedFrame() Frame { return s.current - 1 }

// SnapshotDepth is 0: a spectator never loads.
func (s *SpectatorSession) SnapshotDepth() int { return 0 }

// FramesAhead is 0: a spectator follows its host and is never ahead.
func (s *SpectatorSession) FramesAhead() int { return 0 }

// ChecksDeterminism reports false: a spectator plays the host's inputs.
func (s *SpectatorSession) ChecksDeterminism() bool { return false }

// Finished reports whether the spectator reached Config.EndFrame (set it to
// the host's); after it AdvanceFrame returns no requests.
func (s *SpectatorSession) Finished() bool {
	return s.cfg.EndFrame > 0 && s.current >= Frame(s.cfg.EndFrame)
}
