package webrtc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/rewindgo/rewind/transport/signal"
)

// Dial joins the room at url (ws://HOST:PORT/room/NAME?n=N, see package
// transport/signal), connects to every other peer of the room and returns
// once the data channel to each is open. It fails with ErrPeerLeft when a
// peer leaves or fails first, and with ctx.Err() when ctx is done first:
// give it a deadline. The Conn does not depend on ctx after Dial returns.
func Dial(ctx context.Context, url string, cfg Config) (*Conn, error) {
	cfg = cfg.withDefaults()
	cl, err := signal.Join(ctx, url, cfg.Signal)
	if err != nil {
		return nil, err
	}
	defer cl.Close() // the mesh needs signalling only to open
	c := &Conn{
		index: cl.Index(), n: cl.N(), log: cfg.Logger, maxBuf: uint64(cfg.MaxBuffered),
		peers:    make([]*remote, cl.N()),
		closedCh: make(chan struct{}),
		notify:   make(chan struct{}, 1),
		q:        newRing(cfg.ReceiveQueue),
	}
	m := &mesh{c: c, cl: cl, cfg: cfg, opened: make(chan int, c.n), failed: make(chan error, c.n)}
	if err := m.run(ctx); err != nil {
		_ = closePeers(c.peers)
		return nil, err
	}
	c.log.Debug("webrtc: mesh open", "index", c.index, "n", c.n)
	return c, nil
}

// mesh opens a Conn's peer connections.
type mesh struct {
	c       *Conn
	cl      *signal.Client
	cfg     Config
	ctx     context.Context
	started bool
	opened  chan int   // indexes of peers whose data channel opened
	failed  chan error // peer connections that failed
}

func (m *mesh) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.ctx = ctx
	msgs := make(chan signal.Message)
	recvErr := make(chan error, 1)
	go func() {
		for {
			msg, err := m.cl.Receive(ctx)
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case msgs <- msg:
			case <-ctx.Done():
				return
			}
		}
	}()
	open := make([]bool, m.c.n)
	for n := 0; n < m.c.n-1; {
		select {
		case msg := <-msgs:
			if err := m.handle(msg); err != nil {
				return err
			}
		case i := <-m.opened:
			if !open[i] {
				open[i] = true
				n++
				m.c.log.Debug("webrtc: data channel open", "index", m.c.index, "peer", i)
			}
		case err := <-m.failed:
			return err
		case err := <-recvErr:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("webrtc: signalling: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (m *mesh) handle(msg signal.Message) error {
	c := m.c
	if msg.From >= c.n || (msg.From == c.index && msg.Type != signal.TypeReady && msg.Type != signal.TypeWelcome) {
		return nil // not from a peer of this room: ignored
	}
	switch msg.Type {
	case signal.TypeReady:
		if m.started {
			return nil
		}
		m.started = true
		// This peer offers to those that joined after it.
		for j := c.index + 1; j < c.n; j++ {
			r, err := m.remote(j)
			if err != nil {
				return err
			}
			offer, err := r.pc.CreateOffer(nil)
			if err == nil {
				err = r.pc.SetLocalDescription(offer)
			}
			if err != nil {
				return fmt.Errorf("webrtc: offer to peer %d: %w", j, err)
			}
			if err := m.send(signal.TypeOffer, j, offer); err != nil {
				return err
			}
		}
	case signal.TypeOffer:
		if msg.From > c.index {
			return fmt.Errorf("%w: offer from peer %d, which should answer", ErrSignal, msg.From)
		}
		desc, err := decodeDescription(msg.Data, webrtc.SDPTypeOffer)
		if err != nil {
			return err
		}
		r, err := m.remote(msg.From)
		if err != nil {
			return err
		}
		if err := m.setRemote(r, desc); err != nil {
			return err
		}
		answer, err := r.pc.CreateAnswer(nil)
		if err == nil {
			err = r.pc.SetLocalDescription(answer)
		}
		if err != nil {
			return fmt.Errorf("webrtc: answer to peer %d: %w", msg.From, err)
		}
		return m.send(signal.TypeAnswer, msg.From, answer)
	case signal.TypeAnswer:
		r := c.peers[msg.From]
		if msg.From < c.index || r == nil || r.haveRemote {
			return fmt.Errorf("%w: unexpected answer from peer %d", ErrSignal, msg.From)
		}
		desc, err := decodeDescription(msg.Data, webrtc.SDPTypeAnswer)
		if err != nil {
			return err
		}
		return m.setRemote(r, desc)
	case signal.TypeCandidate:
		cand, err := decodeCandidate(msg.Data)
		if err != nil {
			return err
		}
		r, err := m.remote(msg.From)
		if err != nil {
			return err
		}
		if !r.haveRemote {
			if len(r.pending) < maxPending {
				r.pending = append(r.pending, cand)
			}
			return nil
		}
		if err := r.pc.AddICECandidate(cand); err != nil {
			c.log.Debug("webrtc: candidate refused", "peer", msg.From, "err", err)
		}
	case signal.TypeLeave:
		// A peer that leaves once it has sent its description may have
		// finished its side of the mesh: its connection to this one
		// completes without more signalling, or fails.
		if r := c.peers[msg.From]; r == nil || !r.haveRemote {
			return fmt.Errorf("%w: peer %d", ErrPeerLeft, msg.From)
		}
	}
	return nil
}

// maxPending caps the candidates kept from a peer before its description.
const maxPending = 64

// remote returns the link to peer j, creating its peer connection and data
// channel on first use.
func (m *mesh) remote(j int) (*remote, error) {
	c := m.c
	if r := c.peers[j]; r != nil {
		return r, nil
	}
	pc, err := m.cfg.API.NewPeerConnection(webrtc.Configuration{ICEServers: m.cfg.ICEServers})
	if err != nil {
		return nil, fmt.Errorf("webrtc: peer connection: %w", err)
	}
	r := &remote{index: j, pc: pc}
	c.peers[j] = r
	ordered, retransmits, negotiated, id := false, uint16(0), true, uint16(0)
	r.dc, err = pc.CreateDataChannel("rewind", &webrtc.DataChannelInit{
		Ordered: &ordered, MaxRetransmits: &retransmits, Negotiated: &negotiated, ID: &id,
	})
	if err != nil {
		return nil, fmt.Errorf("webrtc: data channel: %w", err)
	}
	prepareChannel(r.dc)
	r.dc.OnOpen(func() { m.opened <- j }) // capacity n: never blocks
	r.dc.OnMessage(func(msg webrtc.DataChannelMessage) {
		if !msg.IsString {
			c.deliver(j, msg.Data)
		}
	})
	pc.OnICECandidate(func(cand *webrtc.ICECandidate) {
		if cand == nil {
			return
		}
		if err := m.send(signal.TypeCandidate, j, cand.ToJSON()); err != nil {
			c.log.Debug("webrtc: candidate not sent", "peer", j, "err", err)
		}
	})
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		c.log.Debug("webrtc: connection state", "index", c.index, "peer", j, "state", s.String())
		// Before the mesh is complete, a connection that fails or that the
		// peer closes (it gave up or quit) fails Dial.
		if s == webrtc.PeerConnectionStateFailed || s == webrtc.PeerConnectionStateClosed {
			select {
			case m.failed <- fmt.Errorf("%w: connection to peer %d %s", ErrPeerLeft, j, s):
			default:
			}
		}
	})
	return r, nil
}

func (m *mesh) setRemote(r *remote, desc webrtc.SessionDescription) error {
	if err := r.pc.SetRemoteDescription(desc); err != nil {
		return fmt.Errorf("%w: description of peer %d: %w", ErrSignal, r.index, err)
	}
	r.haveRemote = true
	for _, cand := range r.pending {
		if err := r.pc.AddICECandidate(cand); err != nil {
			m.c.log.Debug("webrtc: candidate refused", "peer", r.index, "err", err)
		}
	}
	r.pending = nil
	return nil
}

// send relays v, as JSON, to peer j through the signalling server.
func (m *mesh) send(typ string, j int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(m.ctx, setupTimeout)
	defer cancel()
	return m.cl.Send(ctx, signal.Message{Type: typ, To: j, Data: string(b)})
}

// decodeDescription parses a session description of type want received
// from a peer.
func decodeDescription(data string, want webrtc.SDPType) (webrtc.SessionDescription, error) {
	var d webrtc.SessionDescription
	if len(data) > signal.MaxMessageSize {
		return d, fmt.Errorf("%w: description of %d bytes", ErrSignal, len(data))
	}
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return webrtc.SessionDescription{}, fmt.Errorf("%w: description: %v", ErrSignal, err)
	}
	if d.Type != want || d.SDP == "" {
		return webrtc.SessionDescription{}, fmt.Errorf("%w: description of type %v, want a non-empty %v", ErrSignal, d.Type, want)
	}
	return webrtc.SessionDescription{Type: d.Type, SDP: d.SDP}, nil
}

// decodeCandidate parses an ICE candidate received from a peer.
func decodeCandidate(data string) (webrtc.ICECandidateInit, error) {
	var c webrtc.ICECandidateInit
	if len(data) > maxCandidate {
		return c, fmt.Errorf("%w: candidate of %d bytes", ErrSignal, len(data))
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return webrtc.ICECandidateInit{}, fmt.Errorf("%w: candidate: %v", ErrSignal, err)
	}
	if c.Candidate == "" {
		return webrtc.ICECandidateInit{}, fmt.Errorf("%w: empty candidate", ErrSignal)
	}
	return c, nil
}

// maxCandidate bounds a candidate's JSON; real ones are about 200 bytes.
const maxCandidate = 2048
