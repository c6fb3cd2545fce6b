package agones

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// MatchConfig configures a Match.
type MatchConfig struct {
	// Server is the match's replication server and Listener the
	// listener its players dial, open before Run marks the server Ready
	// (both required). The game runs the server's ticks itself.
	Server   *replicate.Server
	Listener transport.MessageListener
	// FinishWithin is how long Drain waits for the match to end (End)
	// before saving a checkpoint (default 20 s; keep it under
	// RunConfig.DrainTimeout).
	FinishWithin time.Duration
	// Save saves a checkpoint of a match that did not end within
	// FinishWithin (for instance replicate.SaveState to durable storage,
	// for another server to load); nil: the match is abandoned.
	Save func(ctx context.Context) error
}

// ErrMatchConfig: MatchConfig lacks its Server or Listener.
var ErrMatchConfig = errors.New("agones: MatchConfig needs a Server and a Listener")

// Match is the Game of a replication match server for Run: players are
// accepted from the allocation on (Server.Serve on the Listener); on
// SIGTERM or the match's end it stops accepting, lets the match finish
// (FinishWithin) or saves a checkpoint (Save), and Run then asks Agones
// to shut down. The game calls End when the match is over. Connections
// already made stay open throughout: Drain does not close the listener
// (which would close them); the game closes it after Run returns.
type Match struct {
	cfg MatchConfig

	mu     sync.Mutex
	cancel context.CancelFunc // stops Serve (nil: not serving)
	served chan error         // Serve's result
	done   chan struct{}
	end    sync.Once
}

// NewMatch returns the Game of a match.
func NewMatch(cfg MatchConfig) (*Match, error) {
	if cfg.Server == nil || cfg.Listener == nil {
		return nil, ErrMatchConfig
	}
	if cfg.FinishWithin <= 0 {
		cfg.FinishWithin = 20 * time.Second
	}
	return &Match{cfg: cfg, done: make(chan struct{})}, nil
}

// Allocated starts accepting players.
func (m *Match) Allocated(ctx context.Context, _ GameServer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cancel != nil {
		return nil
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel, m.served = cancel, make(chan error, 1)
	go func() { m.served <- m.cfg.Server.Serve(sctx, m.cfg.Listener) }()
	return nil
}

// Accepting reports whether players are being accepted.
func (m *Match) Accepting() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cancel != nil
}

// End marks the match over (from any goroutine, any number of times).
func (m *Match) End() { m.end.Do(func() { close(m.done) }) }

// Done is closed by End.
func (m *Match) Done() <-chan struct{} { return m.done }

// Drain stops accepting players, waits up to FinishWithin for the match
// to end, and saves a checkpoint when it did not.
func (m *Match) Drain(ctx context.Context) error {
	m.mu.Lock()
	cancel, served := m.cancel, m.served
	m.cancel = nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
		<-served
	}
	t := time.NewTimer(m.cfg.FinishWithin)
	defer t.Stop()
	select {
	case <-m.done:
		return nil
	case <-ctx.Done():
	case <-t.C:
	}
	if m.cfg.Save == nil {
		return nil
	}
	return m.cfg.Save(ctx)
}
