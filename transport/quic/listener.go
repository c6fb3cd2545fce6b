package quic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/internal/msgq"
)

// Listener accepts QUIC message conns on a UDP address. It implements
// transport.MessageListener.
type Listener struct {
	ql      *quicgo.Listener
	cfg     Config
	log     *slog.Logger
	addr    netip.AddrPort
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	backlog chan *Conn
	buf     *msgq.Budget   // bytes buffered by the conns beyond their allowance
	wg      sync.WaitGroup // the accept loop
	stopCtx func() bool
	once    sync.Once

	mu     sync.Mutex
	conns  map[*Conn]struct{} // open conns, accepted or waiting in the backlog
	closed bool
}

var _ transport.MessageListener = (*Listener)(nil)

// Listen starts a QUIC listener on the UDP address addr ("127.0.0.1:0"
// picks a free loopback port; see Addr). cfg.TLS must hold a certificate.
// The listener and every conn it accepted are closed when ctx is cancelled
// or Close is called.
func Listen(ctx context.Context, addr string, cfg Config) (*Listener, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	tlsConf, err := serverTLS(cfg.TLS)
	if err != nil {
		return nil, err
	}
	ql, err := quicgo.ListenAddr(addr, tlsConf, cfg.quicConfig(true))
	if err != nil {
		if _, ok := errors.AsType[*net.OpError](err); ok { // already "listen udp ADDR: ..."
			return nil, fmt.Errorf("quic: %w", err)
		}
		return nil, fmt.Errorf("quic: listen %s: %w", addr, err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	l := &Listener{
		ql:      ql,
		cfg:     cfg,
		log:     cfg.Logger,
		addr:    addrPort(ql.Addr()),
		ctx:     lctx,
		cancel:  cancel,
		backlog: make(chan *Conn, cfg.AcceptBacklog),
		buf:     msgq.NewBudget(cfg.MaxBufferedBytes),
		conns:   make(map[*Conn]struct{}),
	}
	l.wg.Add(1)
	go l.acceptLoop()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	l.mu.Lock()
	l.stopCtx = stop
	l.mu.Unlock()
	l.log.Info("quic: listening", "addr", l.addr)
	return l, nil
}

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	for {
		qc, err := l.ql.Accept(l.ctx)
		if err != nil {
			return
		}
		c, err := newConn(qc, l.cfg, l, nil)
		if err != nil {
			l.log.Debug("quic: rejected conn", "remote", qc.RemoteAddr(), "err", err)
			continue
		}
		l.mu.Lock()
		closed := l.closed
		if !closed {
			l.conns[c] = struct{}{}
		}
		l.mu.Unlock()
		if closed {
			c.Close()
			return
		}
		select {
		case l.backlog <- c:
			l.log.Debug("quic: accepted conn", "remote", c.remote)
		default:
			c.closeWith(&transport.CloseError{Reason: "accept backlog full", Err: transport.ErrRefused}, true)
		}
	}
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

// Addr implements transport.MessageListener: the bound UDP address.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Close implements transport.MessageListener. It closes every conn of the
// listener with the reason "listener closed", then the UDP socket, and
// returns once all their goroutines have ended.
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		conns := make([]*Conn, 0, len(l.conns))
		for c := range l.conns {
			conns = append(conns, c)
		}
		stop := l.stopCtx
		l.mu.Unlock()
		if stop != nil {
			stop()
		}
		l.cancel()
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() { c.CloseWithReason("listener closed") })
		}
		wg.Wait()
		l.ql.Close()
		l.wg.Wait()
		l.log.Info("quic: listener closed", "addr", l.addr)
	})
	return nil
}

// Dial connects to the QUIC listener at addr ("host:port") and opens the
// ordered stream. ctx bounds the dial only; the conn lives until it is
// closed by either side or times out. Errors from the network or TLS are
// returned wrapped.
func Dial(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	cfg = cfg.withDefaults()
	// Resolve first: quic.DialAddr would leak its socket on this error.
	if _, err := net.ResolveUDPAddr("udp", addr); err != nil {
		return nil, fmt.Errorf("quic: dial %s: %w", addr, err)
	}
	qc, err := quicgo.DialAddr(ctx, addr, clientTLS(cfg.TLS), cfg.quicConfig(false))
	if err != nil {
		return nil, fmt.Errorf("quic: dial %s: %w", addr, err)
	}
	st, err := qc.OpenStream()
	if err != nil {
		qc.CloseWithError(codeProtocol, "cannot open the ordered stream")
		// The server may refuse the conn (accept backlog full) before the
		// stream opens: report its close reason (errors.Is ErrRefused).
		return nil, fmt.Errorf("quic: dial %s: open ordered stream: %w", addr, closeErrorFrom(err))
	}
	c, err := newConn(qc, cfg, nil, st)
	if err != nil {
		return nil, fmt.Errorf("quic: dial %s: %w", addr, err)
	}
	cfg.Logger.Debug("quic: dialed", "local", c.local, "remote", c.remote)
	return c, nil
}
