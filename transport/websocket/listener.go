//go:build !js

package websocket

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// Listener accepts WebSocket message conns. It is an http.Handler, to be
// mounted on the game's own HTTP server (NewListener: a page and the
// WebSocket endpoint share one port), or served by its own (Listen). It
// implements transport.MessageListener.
type Listener struct {
	cfg     Config
	log     *slog.Logger
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	backlog chan *Conn
	buf     *msgq.Budget
	srv     *http.Server // Listen's own server, or nil
	addr    netip.AddrPort
	hs      sync.WaitGroup // handshakes in progress
	once    sync.Once

	mu      sync.Mutex
	conns   map[*Conn]struct{} // open conns, accepted or in the backlog
	pending int                // upgraded, waiting for their hello
	closed  bool
}

var _ transport.MessageListener = (*Listener)(nil)
var _ http.Handler = (*Listener)(nil)

// NewListener returns a listener to mount on an HTTP server, at the path
// clients dial:
//
//	mux.Handle("/ws", ln)
//
// Its Addr is the zero AddrPort (the HTTP server owns the address). It
// accepts until Close.
func NewListener(cfg Config) *Listener {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Listener{
		cfg:     cfg,
		log:     cfg.Logger,
		ctx:     ctx,
		cancel:  cancel,
		backlog: make(chan *Conn, cfg.AcceptBacklog),
		buf:     msgq.NewBudget(cfg.MaxBufferedBytes),
		conns:   make(map[*Conn]struct{}),
	}
}

// Listen serves a listener on its own HTTP server on the TCP address addr
// ("127.0.0.1:0" picks a free loopback port; see Addr), at every path:
// clients dial "ws://ADDR/". The listener and every conn it accepted are
// closed when ctx is cancelled or Close is called.
func Listen(ctx context.Context, addr string, cfg Config) (*Listener, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l := NewListener(cfg)
	tl, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	if ta, ok := tl.Addr().(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		l.addr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: l.cfg.HandshakeTimeout, ErrorLog: slog.NewLogLogger(l.log.Handler(), slog.LevelDebug)}
	go func() { _ = l.srv.Serve(tl) }()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	go func() {
		<-l.ctx.Done()
		stop()
	}()
	l.log.Info("websocket: listening", "addr", l.addr)
	return l, nil
}

// ServeHTTP implements http.Handler: it upgrades the request to a
// WebSocket with the subprotocol Subprotocol, waits for the client's hello
// (Config.HandshakeTimeout) and queues the conn for Accept. A listener
// that is closed, or holds Config.MaxPending upgrades waiting for their
// hello, answers 503.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	if l.closed || l.pending >= l.cfg.MaxPending {
		closed := l.closed
		l.mu.Unlock()
		if closed {
			http.Error(w, "listener closed", http.StatusServiceUnavailable)
		} else {
			http.Error(w, "too many connections in progress", http.StatusServiceUnavailable)
		}
		return
	}
	l.pending++
	l.hs.Add(1)
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.pending--
		l.mu.Unlock()
		l.hs.Done()
	}()

	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:    []string{Subprotocol},
		OriginPatterns:  l.cfg.OriginPatterns,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		l.log.Debug("websocket: upgrade refused", "remote", r.RemoteAddr, "err", err)
		return // Accept wrote the response
	}
	if ws.Subprotocol() != Subprotocol {
		_ = ws.Close(websocket.StatusPolicyViolation, "subprotocol "+Subprotocol+" required")
		return
	}
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	var local netip.AddrPort
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		ap := a.AddrPort()
		local = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	if err := l.hello(ws); err != nil {
		l.log.Debug("websocket: no hello", "remote", remote, "err", err)
		return
	}
	c := newConn(ws, l.cfg, l, l.buf, local, remote, false)
	// Pushes happen under l.mu only (Accept only takes), so a free slot
	// stays free until the push: the welcome goes only to a conn Accept
	// will return.
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		refuse(ws, transport.ErrClosed, "listener closed", l.cfg.CloseTimeout)
	case len(l.backlog) == cap(l.backlog):
		l.mu.Unlock()
		refuse(ws, transport.ErrRefused, "accept backlog full", l.cfg.CloseTimeout)
	default:
		l.conns[c] = struct{}{}
		c.start(appendControl(nil, control{kind: kindWelcome}))
		l.backlog <- c
		l.mu.Unlock()
		l.log.Debug("websocket: accepted conn", "remote", remote)
	}
}

// hello waits for the client's hello frame; on anything else it closes
// the WebSocket with a close frame saying why.
func (l *Listener) hello(ws *websocket.Conn) error {
	ws.SetReadLimit(maxControl)
	ctx, cancel := context.WithTimeout(l.ctx, l.cfg.HandshakeTimeout)
	defer cancel()
	typ, b, err := ws.Read(ctx) // a cancelled read closes the WebSocket
	if err != nil {
		_ = ws.CloseNow()
		return err
	}
	if typ != websocket.MessageBinary {
		err = protocolf("text message")
	} else if ctl, perr := parseControl(b); perr != nil {
		err = perr
	} else if ctl.kind != kindHello {
		err = protocolf("frame kind %d before the hello", ctl.kind)
	}
	if err != nil {
		refuse(ws, transport.ErrProtocol, err.Error(), l.cfg.CloseTimeout)
	}
	return err
}

// refuse closes a WebSocket whose conn never started, with a close frame
// of cause and reason.
func refuse(ws *websocket.Conn, cause error, reason string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if ws.Write(ctx, websocket.MessageBinary, closeFrame(cause, reason)) == nil {
		t := time.AfterFunc(timeout, func() { _ = ws.CloseNow() })
		defer t.Stop()
		_ = ws.Close(websocket.StatusNormalClosure, "")
	}
	_ = ws.CloseNow()
}

// remove forgets a closed conn.
func (l *Listener) remove(c *Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// Accept implements transport.MessageListener. The conn it returns is a
// *Conn.
func (l *Listener) Accept(ctx context.Context) (transport.MessageConn, error) {
	if l.ctx.Err() != nil {
		return nil, transport.ErrClosed
	}
	select {
	case c := <-l.backlog:
		return c, nil
	case <-l.ctx.Done():
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Addr implements transport.MessageListener: the TCP address of Listen's
// server, or the zero AddrPort for a listener from NewListener.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Close implements transport.MessageListener. It stops accepting (new
// upgrade requests are answered 503; Listen's server stops), closes
// every conn of the listener with the reason "listener closed", and
// returns once they and the handshakes in progress have ended.
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		conns := make([]*Conn, 0, len(l.conns))
		for c := range l.conns {
			conns = append(conns, c)
		}
		l.mu.Unlock()
		l.cancel()
		if l.srv != nil {
			_ = l.srv.Close() // hijacked WebSockets are closed below
		}
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() { c.CloseWithReason("listener closed") })
		}
		wg.Wait()
		l.hs.Wait()
		l.log.Info("websocket: listener closed", "addr", l.addr)
	})
	return nil
}
