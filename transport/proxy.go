package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
)

// ProxyStats counts what a Proxy did.
type ProxyStats struct {
	// Up is client -> Target, Down is Target -> client.
	Up, Down LinkStats
	// Client is the client address replies currently go to (zero before
	// the first datagram from a client).
	Client netip.AddrPort
	// DroppedStray counts datagrams dropped because they came to the
	// upstream socket from an address other than Target, or from Target
	// before any client had sent anything.
	DroppedStray uint64
	// DroppedOversize counts datagrams longer than MaxDatagramSize.
	DroppedOversize uint64
}

// Proxy is a link-conditioning UDP proxy: it forwards datagrams from a client
// to a target and the target's replies back, and applies a LinkConfig in each
// direction with the same conditioner as the simulated PacketNetwork. Use it to put
// real programs (two game instances, a client and a server) on a bad network.
//
// It serves one client at a time: replies from the target go to the address
// that most recently sent a datagram to the listen address. Each direction's
// random decisions come from a PCG seeded with Seed, but on real sockets the
// arrival times, and so the exact outcome, depend on the operating system.
//
// A Proxy runs two reader goroutines and one delivery timer until its context
// is cancelled or Close is called.
type Proxy struct {
	lc, uc   *net.UDPConn // client-facing (listen) and target-facing (upstream)
	addr     netip.AddrPort
	upAddr   netip.AddrPort
	target   netip.AddrPort
	maxSize  int
	log      *slog.Logger
	wg       sync.WaitGroup
	stopCtx  func() bool
	closeOne sync.Once

	mu       sync.Mutex
	s        sched
	up, down *link
	client   netip.AddrPort
	closed   bool
	stray    uint64
	oversize uint64
}

// NewProxy starts a Proxy. It runs until ctx is cancelled or Close is called.
func NewProxy(ctx context.Context, cfg ProxyConfig) (*Proxy, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Upstream == "" {
		cfg.Upstream = ":0"
	}
	if cfg.MaxDatagramSize <= 0 {
		cfg.MaxDatagramSize = DefaultProxyMaxDatagram
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ta, err := net.ResolveUDPAddr("udp", cfg.Target)
	if err != nil {
		return nil, fmt.Errorf("transport: proxy target %q: %w: %w", cfg.Target, ErrInvalidAddr, err)
	}
	if cfg.Target == "" || ta.Port == 0 {
		return nil, fmt.Errorf("transport: proxy target %q: %w", cfg.Target, ErrInvalidAddr)
	}
	var lcfg net.ListenConfig
	lpc, err := lcfg.ListenPacket(ctx, "udp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("transport: proxy listen %s: %w", cfg.Listen, err)
	}
	upc, err := lcfg.ListenPacket(ctx, "udp", cfg.Upstream)
	if err != nil {
		lpc.Close()
		return nil, fmt.Errorf("transport: proxy upstream %s: %w", cfg.Upstream, err)
	}
	p := &Proxy{
		lc:      lpc.(*net.UDPConn),
		uc:      upc.(*net.UDPConn),
		target:  unmap(ta.AddrPort()),
		maxSize: cfg.MaxDatagramSize,
		log:     cfg.Logger,
	}
	p.addr = unmap(p.lc.LocalAddr().(*net.UDPAddr).AddrPort())
	p.upAddr = unmap(p.uc.LocalAddr().(*net.UDPAddr).AddrPort())
	p.up = newLink(cfg.Seed, 1, cfg.Up)
	p.down = newLink(cfg.Seed, 2, cfg.Down)
	p.s = newSched(cfg.MaxInFlight, cfg.MaxDatagramSize, p.onTimer)

	p.wg.Add(2)
	go p.readLoop(p.lc, true)
	go p.readLoop(p.uc, false)
	stop := context.AfterFunc(ctx, func() { p.Close() })
	p.mu.Lock()
	p.stopCtx = stop
	p.mu.Unlock()
	p.log.Info("transport: proxy started", "listen", p.addr, "upstream", p.upAddr, "target", p.target)
	return p, nil
}

// Addr returns the address clients send to.
func (p *Proxy) Addr() netip.AddrPort { return p.addr }

// UpstreamAddr returns the local address the proxy sends to Target from. When
// ProxyConfig.Upstream names a specific IP, this is the address Target sees
// as its peer; with the default ":0" the IP part is unspecified (such as
// "[::]:54321") and Target sees the port with the IP of the route it uses.
func (p *Proxy) UpstreamAddr() netip.AddrPort { return p.upAddr }

// SetConditions replaces the conditions of both directions for datagrams
// received from now on.
func (p *Proxy) SetConditions(up, down LinkConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.cfg = up.normalized()
	p.down.cfg = down.normalized()
}

// Stats returns the proxy's counters.
func (p *Proxy) Stats() ProxyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ProxyStats{
		Up:              p.up.stats,
		Down:            p.down.stats,
		Client:          p.client,
		DroppedStray:    p.stray,
		DroppedOversize: p.oversize,
	}
}

// Close stops the proxy: it closes both sockets, drops the datagrams in
// flight and waits for the reader goroutines to exit. Close is idempotent.
func (p *Proxy) Close() error {
	p.closeOne.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.s.stop()
		stop := p.stopCtx
		p.mu.Unlock()
		if stop != nil {
			stop()
		}
		p.lc.Close()
		p.uc.Close()
		p.wg.Wait()
		p.log.Info("transport: proxy stopped", "listen", p.addr)
	})
	return nil
}

func (p *Proxy) readLoop(c *net.UDPConn, fromClient bool) {
	defer p.wg.Done()
	buf := make([]byte, p.maxSize+1)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			p.log.Debug("transport: proxy read", "err", err)
			continue
		}
		from = unmap(from)
		p.mu.Lock()
		switch {
		case p.closed:
		case n > p.maxSize:
			p.oversize++
		case fromClient:
			p.client = from
			p.forward(p.up, from, p.target, buf[:n])
		case from != p.target || !p.client.IsValid():
			p.stray++
		default:
			p.forward(p.down, from, p.client, buf[:n])
		}
		p.mu.Unlock()
	}
}

// forward runs one datagram through a direction's conditioner. Called with
// p.mu held.
func (p *Proxy) forward(l *link, from, to netip.AddrPort, b []byte) {
	now := p.s.Now()
	k, at := l.plan(now, len(b))
	for i := range k {
		if !p.s.schedule(at[i], from, to, l, b) {
			l.stats.DroppedQueue++
		}
	}
	if k > 0 {
		p.catchUp()
	}
}

func (p *Proxy) onTimer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.s.Fired()
	p.catchUp()
}

// catchUp writes every datagram that is due. Called with p.mu held.
func (p *Proxy) catchUp() {
	now := p.s.Now()
	for d := p.s.popDue(now); d != nil; d = p.s.popDue(now) {
		c := p.lc
		if d.link == p.up {
			c = p.uc
		}
		if _, err := c.WriteToUDPAddrPort(d.buf, d.to); err != nil {
			d.link.stats.Unreachable++
			p.log.Debug("transport: proxy write", "to", d.to, "err", err)
		} else {
			d.link.stats.Delivered++
		}
		p.s.release(d)
	}
	p.s.Rearm(now)
}
