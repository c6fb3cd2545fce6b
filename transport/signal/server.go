package signal

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// ServerConfig configures a Server. The zero value is usable.
type ServerConfig struct {
	// RoomTTL is how long a room lives after it was created: when it
	// expires, the peers still connected to it are disconnected. Peers
	// need the room only while they connect to each other. Default 10
	// minutes.
	RoomTTL time.Duration
	// MaxRooms caps the rooms open at once; a peer that would create one
	// more is refused (HTTP 503). Default 1024.
	MaxRooms int
	// SendQueue is the number of messages queued for a peer that has not
	// read them yet; a peer that lets it overflow is disconnected.
	// Default 64.
	SendQueue int
	// WriteTimeout bounds the writing of one message to a peer; a peer
	// that takes longer is disconnected. Default 10 seconds.
	WriteTimeout time.Duration
	// OriginPatterns lists the hosts of web pages, other than the
	// server's own, allowed to connect from a browser (see
	// websocket.AcceptOptions; "*" allows every origin). Default: none,
	// only pages served by the same host. Native clients send no Origin
	// and are always accepted.
	OriginPatterns []string
	// Logger receives debug messages about rooms and refused peers.
	// Default: silent.
	Logger *slog.Logger
}

func (c ServerConfig) withDefaults() ServerConfig {
	if c.RoomTTL <= 0 {
		c.RoomTTL = 10 * time.Minute
	}
	if c.MaxRooms <= 0 {
		c.MaxRooms = 1024
	}
	if c.SendQueue <= 0 {
		c.SendQueue = 64
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ServerStats counts a Server's traffic since it was created.
type ServerStats struct {
	// Rooms and Peers are the rooms open and the peers connected now.
	Rooms, Peers int
	// Relayed counts the messages relayed from one peer to another.
	Relayed uint64
	// Dropped counts the messages received that were malformed, of a type
	// a peer may not send, or addressed to an absent peer or to the
	// sender itself; they are discarded.
	Dropped uint64
	// Expired counts the rooms deleted because they outlived RoomTTL.
	Expired uint64
	// Refused counts connections refused: bad room name or size, room
	// full, too many rooms, server closed.
	Refused uint64
}

// Server is the signalling server: an http.Handler for WebSocket requests
// to /room/NAME?n=N (any path whose last element is the room name). Mount
// it on a mux, for example mux.Handle("/room/", srv). Create it with
// NewServer.
type Server struct {
	cfg ServerConfig

	mu     sync.Mutex
	rooms  map[string]*room
	closed bool
	st     ServerStats
}

type room struct {
	name   string
	peers  []*peer // by index; nil when absent
	joined int     // peers that ever joined: the next index
	// welcomed counts the peers sent their welcome: the room is ready
	// once all n were (a peer that joins sees its welcome first).
	welcomed int
	timer    *time.Timer
}

type peer struct {
	index int
	out   chan []byte
	ctx   context.Context
	stop  context.CancelCauseFunc
}

// NewServer returns a Server with the configuration cfg.
func NewServer(cfg ServerConfig) *Server {
	return &Server{cfg: cfg.withDefaults(), rooms: make(map[string]*room)}
}

// Stats returns the server's counters.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Rooms = len(s.rooms)
	for _, r := range s.rooms {
		for _, p := range r.peers {
			if p != nil {
				st.Peers++
			}
		}
	}
	return st
}

// Close disconnects every peer, deletes every room and refuses new
// connections. It returns at once.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for name, r := range s.rooms {
		s.deleteLocked(name, r, ErrClosed)
	}
	return nil
}

// roomName returns the last element of the request's path.
func roomName(r *http.Request) string {
	if n := r.PathValue("name"); n != "" {
		return n
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// ServeHTTP implements http.Handler: it adds the peer to its room,
// upgrades the request to a WebSocket and relays the peer's messages until
// it leaves or the room expires.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	name := roomName(req)
	n := 2
	if q := req.URL.Query().Get("n"); q != "" {
		var err error
		if n, err = strconv.Atoi(q); err != nil {
			n = -1
		}
	}
	if !ValidRoomName(name) || n < 2 || n > MaxPeers {
		s.refuse(w, http.StatusBadRequest, "invalid room name or size", name)
		return
	}
	p, r, code, why := s.join(name, n)
	if p == nil {
		s.refuse(w, code, why, name)
		return
	}
	c, err := websocket.Accept(w, req, &websocket.AcceptOptions{OriginPatterns: s.cfg.OriginPatterns})
	if err != nil {
		s.cfg.Logger.Debug("signal: accept", "room", name, "err", err)
		s.leave(r, p)
		return
	}
	c.SetReadLimit(MaxMessageSize)
	s.cfg.Logger.Debug("signal: peer joined", "room", name, "index", p.index, "n", n)
	done := make(chan struct{})
	go func() { // the writer: the peer's queue to the socket
		defer close(done)
		for {
			select {
			case <-p.ctx.Done():
				if errors.Is(context.Cause(p.ctx), ErrClosed) {
					c.Close(websocket.StatusGoingAway, "room closed")
				} else {
					c.CloseNow()
				}
				return
			case b := <-p.out:
				ctx, cancel := context.WithTimeout(p.ctx, s.cfg.WriteTimeout)
				err := c.Write(ctx, websocket.MessageText, b)
				cancel()
				if err != nil {
					p.stop(err)
				}
			}
		}
	}()
	s.enqueueWelcome(r, p, n)
	for {
		_, b, err := c.Read(p.ctx)
		if err != nil {
			break
		}
		s.relay(r, p, b)
	}
	s.leave(r, p)
	p.stop(errPeerLeft)
	<-done
}

var errPeerLeft = errors.New("signal: peer left")

// msgRoomFull is the reason of a refusal because the room is full; the
// client tells it from a size conflict by it.
const msgRoomFull = "room full"

func (s *Server) refuse(w http.ResponseWriter, code int, why, name string) {
	s.mu.Lock()
	s.st.Refused++
	s.mu.Unlock()
	s.cfg.Logger.Debug("signal: refused", "room", name, "why", why)
	http.Error(w, "signal: "+why, code)
}

// join adds a peer to room name of size n, creating the room if needed.
// It returns nil, an HTTP status and a reason when the peer is refused.
func (s *Server) join(name string, n int) (*peer, *room, int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, http.StatusServiceUnavailable, "server closed"
	}
	r := s.rooms[name]
	switch {
	case r == nil && len(s.rooms) >= s.cfg.MaxRooms:
		return nil, nil, http.StatusServiceUnavailable, "too many rooms"
	case r == nil:
		r = &room{name: name, peers: make([]*peer, n)}
		s.rooms[name] = r
		r.timer = time.AfterFunc(s.cfg.RoomTTL, func() { s.expire(r) })
	case len(r.peers) != n:
		return nil, nil, http.StatusConflict, "room exists with another size"
	case r.joined >= n:
		return nil, nil, http.StatusConflict, msgRoomFull
	}
	ctx, stop := context.WithCancelCause(context.Background())
	p := &peer{index: r.joined, out: make(chan []byte, s.cfg.SendQueue), ctx: ctx, stop: stop}
	r.peers[p.index] = p
	r.joined++
	return p, r, 0, ""
}

// enqueueWelcome sends p its welcome, and everyone the ready message when
// p completed the room.
func (s *Server) enqueueWelcome(r *room, p *peer, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sendLocked(p, Message{Type: TypeWelcome, Index: p.index, N: n})
	r.welcomed++
	if r.welcomed == n && s.rooms[r.name] == r {
		for _, q := range r.peers {
			if q != nil {
				s.sendLocked(q, Message{Type: TypeReady, N: n})
			}
		}
	}
}

// sendLocked queues m for p, disconnecting p when its queue is full.
func (s *Server) sendLocked(p *peer, m Message) {
	b, err := Encode(m)
	if err != nil { // cannot happen: the server's messages are valid
		s.cfg.Logger.Error("signal: encode", "err", err)
		return
	}
	select {
	case p.out <- b:
	default:
		p.stop(errors.New("signal: send queue full"))
	}
}

// relay forwards a message from p to the peer it names.
func (s *Server) relay(r *room, p *peer, b []byte) {
	m, err := Decode(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && m.Type != TypeOffer && m.Type != TypeAnswer && m.Type != TypeCandidate {
		err = errors.New("type not relayed")
	}
	if err == nil && (m.To >= len(r.peers) || m.To == p.index || r.peers[m.To] == nil) {
		err = errors.New("no such peer")
	}
	if err != nil {
		s.st.Dropped++
		s.cfg.Logger.Debug("signal: dropped", "room", r.name, "from", p.index, "err", err)
		return
	}
	m.From = p.index
	s.sendLocked(r.peers[m.To], m)
	s.st.Relayed++
}

// leave removes p from its room, tells the others, and deletes the room
// when p was the last.
func (s *Server) leave(r *room, p *peer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.peers[p.index] != p {
		return
	}
	r.peers[p.index] = nil
	empty := true
	for _, q := range r.peers {
		if q != nil {
			empty = false
			s.sendLocked(q, Message{Type: TypeLeave, From: p.index})
		}
	}
	if empty && s.rooms[r.name] == r {
		r.timer.Stop()
		delete(s.rooms, r.name)
	}
	s.cfg.Logger.Debug("signal: peer left", "room", r.name, "index", p.index)
}

func (s *Server) expire(r *room) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rooms[r.name] == r {
		s.st.Expired++
		s.cfg.Logger.Debug("signal: room expired", "room", r.name)
		s.deleteLocked(r.name, r, ErrClosed)
	}
}

func (s *Server) deleteLocked(name string, r *room, cause error) {
	r.timer.Stop()
	delete(s.rooms, name)
	for i, p := range r.peers {
		if p != nil {
			p.stop(cause)
			r.peers[i] = nil
		}
	}
}
