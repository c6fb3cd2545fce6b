package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/quic"
)

// quicRig is the network of a QUIC demo (demo server, demo predict): a
// replication server serving a listener on loopback, and per client a
// link-conditioning proxy in front of it, a QUIC conn through the proxy
// and the replication client on that conn.
type quicRig struct {
	cancel context.CancelFunc
	srv    *replicate.Server
	ln     *quic.Listener
	serve  chan error  // the result of Server.Serve
	cliTLS *tls.Config // the clients' side of the listener's self-signed TLS
}

// rig returns r, for runRig.
func (r *quicRig) rig() *quicRig { return r }

// rigLink is one client's part of a quicRig. A demo's client type embeds
// it and sets rc before connect.
type rigLink struct {
	idx   int
	proxy *transport.Proxy
	conn  *quic.Conn
	rc    *replicate.Client
	// At the start of the run (markStart): the counters the join ran up
	// (QUIC's handshake, the full state), which the run's rates leave out.
	startStats replicate.ConnectionStats
	startDown  uint64
}

// markStart notes the link's counters as the run starts.
func (l *rigLink) markStart(srv *replicate.Server) {
	l.startStats, _ = srv.Stats(l.rc.ID())
	l.startDown = l.proxy.Stats().Down.SentBytes
}

// runStats returns the server's counters of the link accumulated since
// markStart, and the UDP bytes sent down since.
func (l *rigLink) runStats(srv *replicate.Server) (replicate.ConnectionStats, uint64, error) {
	st, err := srv.Stats(l.rc.ID())
	return since(st, l.startStats), l.proxy.Stats().Down.SentBytes - l.startDown, err
}

// listen serves srv on a loopback listener with a self-signed
// certificate until ctx is done.
func (r *quicRig) listen(ctx context.Context, srv *replicate.Server) error {
	r.srv = srv
	srvTLS, cliTLS, err := quic.SelfSigned()
	if err != nil {
		return err
	}
	r.cliTLS = cliTLS
	if r.ln, err = quic.Listen(ctx, "127.0.0.1:0", quic.Config{TLS: srvTLS}); err != nil {
		return err
	}
	r.serve = make(chan error, 1)
	go func() { r.serve <- srv.Serve(ctx, r.ln) }()
	return nil
}

// proxies returns n proxies to the listener, each conditioning both
// directions with link, seeded from seed (a new seed per proxy).
func (r *quicRig) proxies(ctx context.Context, n int, link transport.LinkConfig, seed uint64) ([]*transport.Proxy, error) {
	ps := make([]*transport.Proxy, 0, n)
	for range n {
		seed = seed*6364136223846793005 + 1442695040888963407
		p, err := transport.NewProxy(ctx, transport.ProxyConfig{
			Listen: "127.0.0.1:0", Upstream: "127.0.0.1:0", Target: r.ln.Addr().String(),
			Up: link, Down: link, Seed: seed,
		})
		if err != nil {
			for _, p := range ps {
				p.Close()
			}
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// connect dials every link's proxy at once (handshakes through lossy links
// take a few round trips each) and connects its replication client.
func (r *quicRig) connect(ctx context.Context, links []*rigLink) error {
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	for i, l := range links {
		wg.Go(func() {
			l.conn, errs[i] = dial(ctx, l.proxy.Addr().String(), quic.Config{TLS: r.cliTLS})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, l := range links {
		if err := l.rc.Connect(l.conn); err != nil {
			return fmt.Errorf("client %d: %w", l.idx, err)
		}
	}
	return nil
}

// close shuts everything down in order: the clients and their conns, the
// server and its accept loop, the listener, the proxies. It is safe on a
// partly started demo.
func (r *quicRig) close(links []*rigLink) error {
	for _, l := range links {
		if l.rc != nil {
			l.rc.Close()
		}
		if l.conn != nil {
			l.conn.Close()
		}
	}
	if r.srv != nil {
		r.srv.Close()
	}
	if r.cancel != nil {
		r.cancel()
	}
	var err error
	if r.serve != nil {
		err = <-r.serve
	}
	if r.ln != nil {
		r.ln.Close()
	}
	for _, l := range links {
		if l.proxy != nil {
			l.proxy.Close()
		}
	}
	return err
}

// dial dials a QUIC server, trying again when a handshake fails (its
// packets can all be lost on a bad link).
func dial(ctx context.Context, addr string, cfg quic.Config) (*quic.Conn, error) {
	var err error
	for range dialAttempts {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		var c *quic.Conn
		c, err = quic.Dial(dctx, addr, cfg)
		cancel()
		if err == nil || ctx.Err() != nil {
			return c, err
		}
	}
	return nil, err
}

// rigDemo is a QUIC demo runRig drives: it embeds a quicRig (rig), start
// builds the rig, play runs the ticks, finish fills the summary sum of
// type S, close shuts down.
type rigDemo[S any] interface {
	rig() *quicRig
	start(ctx context.Context) error
	play(ctx context.Context, sum S, live io.Writer, start time.Time) error
	finish(sum S, start time.Time)
	close() error
}

// runRig runs d and returns sum filled; live statistics go to live. The
// run's context ends with close.
func runRig[S any](ctx context.Context, d rigDemo[S], sum S, live io.Writer) (S, error) {
	var none S
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.rig().cancel = cancel
	start := time.Now()
	if err := d.start(ctx); err != nil {
		return none, errors.Join(err, d.close())
	}
	err := d.play(ctx, sum, live, start)
	if err == nil {
		d.finish(sum, start)
	}
	if cerr := d.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return none, err
	}
	return sum, nil
}

// pacer paces a demo's loop at the server's tick rate, printing live
// statistics every StatsEvery on the way.
type pacer struct {
	ctx             context.Context
	period, every   time.Duration
	next, nextStats time.Time
	stats           func(ph phase) // prints the live statistics
}

// newPacer returns a pacer whose first tick is due now; every <= 0 prints
// no statistics.
func newPacer(ctx context.Context, every time.Duration, stats func(ph phase)) *pacer {
	now := time.Now()
	return &pacer{ctx: ctx, period: time.Second / serverTickRate, every: every, next: now, nextStats: now.Add(every), stats: stats}
}

// wait sleeps until the next tick is due; it reports false when ctx is
// done.
func (p *pacer) wait(ph phase) bool {
	now := time.Now()
	if p.every > 0 && !now.Before(p.nextStats) {
		p.nextStats = p.nextStats.Add(p.every)
		p.stats(ph)
	}
	p.next = p.next.Add(p.period)
	dt := p.next.Sub(now)
	if dt < -250*time.Millisecond {
		p.next = now // far behind (a slow machine): do not try to catch up in a burst
	}
	if dt <= 0 {
		return p.ctx.Err() == nil
	}
	t := time.NewTimer(dt)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}
