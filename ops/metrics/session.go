package metrics

import (
	"sync"
	"time"

	"github.com/rewindgo/rewind/rollback"
)

// SessionConfig configures a Session recorder. The zero value is usable.
type SessionConfig struct {
	// Name labels the session (default "session").
	Name string
	// DepthBuckets are the rollback depth histogram's upper bounds in
	// frames (default DepthBuckets()); RTTBuckets the ping histogram's in
	// seconds (default RTTBuckets()).
	DepthBuckets, RTTBuckets []float64
	// RTTEvery is the number of samples between two observations of each
	// peer's ping (default 60).
	RTTEvery int
}

// PeerFigures are the figures of one remote address of a session.
type PeerFigures struct {
	Handle rollback.PlayerHandle
	// Ping is the smoothed round-trip time; KbpsSent the rate towards
	// the peer; LocalFramesBehind this side's frame advantage measure.
	Ping                             time.Duration
	KbpsSent                         float64
	BytesSent, BytesReceived         uint64
	LocalFramesBehind                int
	Malformed, Dropped, SendQueueLen uint64
}

// SessionFigures are a rollback session's figures (Session.Read).
type SessionFigures struct {
	Name    string
	Samples uint64
	// Frame and Confirmed are the session's frames; Rollbacks,
	// RollbackFrames, Stalls and Desyncs its counters (SessionStats).
	Frame, Confirmed          rollback.Frame
	Rollbacks, RollbackFrames uint64
	Stalls, Desyncs           uint64
	// Depth holds each rollback's depth in frames (mean depth when a
	// sample saw several); Ping every peer's ping every RTTEvery samples.
	Depth, Ping Histogram
	Peers       []PeerFigures
}

// Session records a rollback session's figures. Sample runs on the
// session's goroutine, Read on any.
type Session struct {
	cfg SessionConfig
	mu  sync.Mutex
	fig SessionFigures
}

// NewSession returns a recorder of a rollback session.
func NewSession(cfg SessionConfig) *Session {
	if cfg.Name == "" {
		cfg.Name = "session"
	}
	if cfg.DepthBuckets == nil {
		cfg.DepthBuckets = DepthBuckets()
	}
	if cfg.RTTBuckets == nil {
		cfg.RTTBuckets = RTTBuckets()
	}
	if cfg.RTTEvery <= 0 {
		cfg.RTTEvery = 60
	}
	return &Session{cfg: cfg, fig: SessionFigures{Name: cfg.Name, Depth: NewHistogram(cfg.DepthBuckets), Ping: NewHistogram(cfg.RTTBuckets)}}
}

// NetworkStatser is the part of a rollback session Sample reads peers
// through (rollback.P2PSession has it).
type NetworkStatser interface {
	NetworkStats(h rollback.PlayerHandle) (rollback.NetworkStats, error)
}

// Sample records a session's counters and its remote peers' network
// figures (peers: the remote players' and spectators' handles; a handle
// whose stats are not available yet is skipped). It allocates nothing
// once the recorder has seen the peers.
func (m *Session) Sample(st rollback.SessionStats, net NetworkStatser, peers []rollback.PlayerHandle) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := &m.fig
	f.Samples++
	if r := uint64(st.Rollbacks); r > f.Rollbacks {
		n := r - f.Rollbacks
		depth := float64(uint64(st.RollbackFrames)-f.RollbackFrames) / float64(n)
		for range n {
			f.Depth.Observe(depth)
		}
	}
	f.Frame, f.Confirmed = st.Frame, st.Confirmed
	f.Rollbacks, f.RollbackFrames = uint64(st.Rollbacks), uint64(st.RollbackFrames)
	f.Stalls, f.Desyncs = uint64(st.Stalls), uint64(st.Desyncs)
	observe := f.Samples%uint64(m.cfg.RTTEvery) == 0
	f.Peers = f.Peers[:0]
	for _, h := range peers {
		ns, err := net.NetworkStats(h)
		if err != nil {
			continue
		}
		f.Peers = append(f.Peers, PeerFigures{Handle: h, Ping: ns.Ping, KbpsSent: ns.KbpsSent,
			BytesSent: ns.BytesSent, BytesReceived: ns.BytesReceived, LocalFramesBehind: ns.LocalFramesBehind,
			Malformed: ns.Malformed, Dropped: ns.Dropped, SendQueueLen: uint64(ns.SendQueueLen)})
		if observe && ns.Ping > 0 {
			f.Ping.Observe(ns.Ping.Seconds())
		}
	}
}

// Read copies the figures into dst, reusing its storage; safe on any
// goroutine.
func (m *Session) Read(dst *SessionFigures) {
	m.mu.Lock()
	defer m.mu.Unlock()
	depth, ping, peers := dst.Depth, dst.Ping, dst.Peers[:0]
	*dst = m.fig
	m.fig.Depth.CopyTo(&depth)
	m.fig.Ping.CopyTo(&ping)
	dst.Depth, dst.Ping = depth, ping
	dst.Peers = append(peers, m.fig.Peers...)
}
