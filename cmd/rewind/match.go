package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/transport"
)

// demoPeer is one peer of the match: its socket, game, session and runner,
// and the checksum of every frame it confirmed.
type demoPeer struct {
	idx     int
	conn    *transport.UDPConn
	game    *demo.Game
	sess    *rollback.P2PSession
	run     *runner.Runner
	sums    []frameSum
	remotes map[rollback.PlayerHandle]string // remote handle -> label for stats
	sent    uint64                           // bytes sent at the last stats line
}

// demoSpectator follows peer 0.
type demoSpectator struct {
	conn *transport.UDPConn
	game *demo.Game
	sess *rollback.SpectatorSession
	run  *runner.Runner
	sums []frameSum // checksums of every spectatorSumEvery-th frame
}

// spectatorSumEvery is the spacing of the spectators' checksums.
const spectatorSumEvery = 10

// match is a running demo match: the peers, the spectators, the proxies
// between them and the recording file.
type match struct {
	o       demoOptions
	peers   []*demoPeer
	specs   []*demoSpectator
	proxies []*transport.Proxy
	rec     *os.File
}

// runDemo plays a match as configured and returns its summary. Live
// statistics and notable events go to live.
func runDemo(ctx context.Context, o demoOptions, live io.Writer) (*demoSummary, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // closes every socket and proxy
	m, err := newMatch(ctx, o)
	if err != nil {
		m.close()
		return nil, err
	}
	sum := &demoSummary{
		Mode: "p2p", Frames: o.Frames, Peers: o.Peers, Spectators: o.Spectators,
		Events: map[string]int{}, Record: o.Record,
		Link: linkSummary{LatencyMS: ms(o.Latency), JitterMS: ms(o.Jitter), Loss: o.Loss, Dup: o.Dup},
	}
	elapsed, err := m.play(ctx, sum, live)
	if cerr := m.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	sum.finish(m.peers, m.specs, elapsed)
	return sum, nil
}

// newMatch opens the sockets and proxies (closed when ctx is done) and
// creates every peer's and spectator's game, session and runner.
func newMatch(ctx context.Context, o demoOptions) (*match, error) {
	m := &match{o: o}
	link := transport.LinkConfig{Latency: o.Latency, Jitter: o.Jitter, Loss: o.Loss, Duplicate: o.Dup}
	listen := func() (*transport.UDPConn, error) {
		return transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	}
	proxySeed := o.Seed
	proxy := func(target netip.AddrPort) (*transport.Proxy, error) {
		proxySeed = proxySeed*6364136223846793005 + 1442695040888963407 // a new seed per proxy
		p, err := transport.NewProxy(ctx, transport.ProxyConfig{
			Listen: "127.0.0.1:0", Upstream: "127.0.0.1:0", Target: target.String(),
			Up: link, Down: link, Seed: proxySeed,
		})
		if err == nil {
			m.proxies = append(m.proxies, p)
		}
		return p, err
	}

	// Sockets, then one proxy per pair of peers: i sends to the proxy's
	// Addr, which forwards to j from its UpstreamAddr, where j answers.
	m.peers = make([]*demoPeer, o.Peers)
	for i := range m.peers {
		c, err := listen()
		if err != nil {
			return m, err
		}
		m.peers[i] = &demoPeer{idx: i, conn: c, remotes: map[rollback.PlayerHandle]string{}}
	}
	addr := make([][]netip.AddrPort, o.Peers) // addr[i][j]: where i reaches j
	for i := range addr {
		addr[i] = make([]netip.AddrPort, o.Peers)
	}
	for i := range m.peers {
		for j := i + 1; j < len(m.peers); j++ {
			p, err := proxy(m.peers[j].conn.LocalAddr())
			if err != nil {
				return m, err
			}
			addr[i][j], addr[j][i] = p.Addr(), p.UpstreamAddr()
		}
	}
	// Each spectator reaches the host (peer 0) through its own proxy.
	m.specs = make([]*demoSpectator, o.Spectators)
	specAddr := make([]netip.AddrPort, o.Spectators) // where the host reaches spectator k
	hostAddr := make([]netip.AddrPort, o.Spectators) // where spectator k reaches the host
	for k := range m.specs {
		c, err := listen()
		if err != nil {
			return m, err
		}
		p, err := proxy(m.peers[0].conn.LocalAddr())
		if err != nil {
			return m, err
		}
		m.specs[k] = &demoSpectator{conn: c}
		hostAddr[k], specAddr[k] = p.Addr(), p.UpstreamAddr()
	}

	if o.Record != "" {
		f, err := os.Create(o.Record)
		if err != nil {
			return m, err
		}
		m.rec = f
	}
	gcfg := demo.Config{Players: o.Peers, NPCs: o.NPCs, Seed: o.Seed}
	for i, p := range m.peers {
		cfg := rollback.Config{
			NumPlayers: o.Peers, InputDelay: o.InputDelay, DesyncInterval: o.DesyncInterval,
			MaxInputSize: demo.InputSize, Seed: o.Seed*1000 + uint64(i) + 1, EndFrame: o.Frames,
		}
		for j := range m.peers {
			pl := rollback.Player{Handle: rollback.PlayerHandle(j), Kind: rollback.Local}
			if j != i {
				pl.Kind, pl.Addr = rollback.Remote, addr[i][j]
				p.remotes[pl.Handle] = fmt.Sprintf("p%d", j)
			}
			cfg.Players = append(cfg.Players, pl)
		}
		if i == 0 {
			for k := range m.specs {
				h := rollback.PlayerHandle(o.Peers + k)
				cfg.Players = append(cfg.Players, rollback.Player{Handle: h, Kind: rollback.Spectator, Addr: specAddr[k]})
				p.remotes[h] = fmt.Sprintf("s%d", k)
			}
			if m.rec != nil {
				cfg.Record, cfg.RecordMeta = m.rec, gcfg.AppendMeta(nil)
			}
		}
		var err error
		if p.sess, err = rollback.NewP2P(p.conn, cfg); err != nil {
			return m, err
		}
		if p.game, err = demo.New(gcfg); err != nil {
			return m, err
		}
		p.run, err = p.game.NewRunner(p.sess, runner.Config{
			ChecksumAll: true,
			Confirmed:   func(f rollback.Frame, sum uint64) { p.sums = append(p.sums, frameSum{f, sum}) },
		})
		if err != nil {
			return m, err
		}
	}
	for k, s := range m.specs {
		var err error
		s.sess, err = rollback.NewSpectator(s.conn, hostAddr[k], rollback.Config{
			NumPlayers: o.Peers, MaxInputSize: demo.InputSize, Seed: o.Seed*1000 + 500 + uint64(k), EndFrame: o.Frames,
		})
		if err != nil {
			return m, err
		}
		if s.game, err = demo.New(gcfg); err != nil {
			return m, err
		}
		// A spectator simulates confirmed frames only: every state is final.
		s.run, err = s.game.NewRunner(s.sess, runner.Config{Step: func(ctx *runner.Context) {
			if ctx.Frame%spectatorSumEvery == 0 {
				sum, err := s.game.Checksum()
				ctx.Fail(err)
				s.sums = append(s.sums, frameSum{ctx.Frame, sum})
			}
			s.game.Step(ctx)
		}})
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

// play runs every peer and spectator from this goroutine on wall-clock time
// until every one has finished the match (the sessions' EndFrame is
// o.Frames: all frames confirmed, compared, recorded and sent to the
// spectators), or the timeout passes, or ctx is done. It returns the time
// played.
func (m *match) play(ctx context.Context, sum *demoSummary, live io.Writer) (time.Duration, error) {
	o := m.o
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 3*time.Duration(o.Frames)*time.Second/60 + 30*time.Second
	}
	start := time.Now()
	last, nextStats := start, start.Add(o.StatsEvery)
	for {
		now := time.Now()
		dt := now.Sub(last)
		last = now
		done := true
		for _, p := range m.peers {
			if !p.run.Finished() {
				done = false
				if _, err := p.run.Update(dt); err != nil {
					return 0, fmt.Errorf("peer %d: %w", p.idx, err)
				}
			} else {
				p.sess.Poll() // keep answering: the others may not know yet
			}
			for _, ev := range p.sess.Events() {
				sum.event(live, fmt.Sprintf("peer %d", p.idx), ev)
			}
		}
		for k, s := range m.specs {
			if !s.run.Finished() {
				done = false
				if _, err := s.run.Update(dt); err != nil {
					return 0, fmt.Errorf("spectator %d: %w", k, err)
				}
			} else {
				s.sess.Poll()
			}
			for _, ev := range s.sess.Events() {
				sum.event(live, fmt.Sprintf("spectator %d", k), ev)
			}
		}
		switch {
		case done:
			return time.Since(start), nil
		case now.Sub(start) > timeout:
			fmt.Fprintf(live, "timed out after %v\n", timeout)
			return time.Since(start), nil
		case ctx.Err() != nil:
			sum.Interrupted = true
			return time.Since(start), nil
		}
		if o.StatsEvery > 0 && !now.Before(nextStats) {
			nextStats = nextStats.Add(o.StatsEvery)
			m.liveStats(live, now.Sub(start))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// close closes the sessions (which flushes peer 0's recording), the
// recording file and the proxies. The sockets close with the context.
func (m *match) close() error {
	var err error
	for _, p := range m.peers {
		if p.sess != nil {
			err = errors.Join(err, p.sess.Close())
		}
	}
	for _, s := range m.specs {
		if s.sess != nil {
			err = errors.Join(err, s.sess.Close())
		}
	}
	if m.rec != nil {
		err = errors.Join(err, m.rec.Close())
	}
	for _, p := range m.proxies {
		p.Close()
	}
	return err
}

// liveStats prints one line per peer and spectator.
func (m *match) liveStats(w io.Writer, at time.Duration) {
	for _, p := range m.peers {
		st := p.sess.Stats()
		sent := p.conn.Stats().BytesSent
		rate := float64(sent-p.sent) / m.o.StatsEvery.Seconds()
		p.sent = sent
		fmt.Fprintf(w, "[%5.1fs] peer %d: frame %4d confirmed %4d | rollbacks %3d max %2d | stalls %3d | %6.0f B/s out | desyncs %d%s\n",
			at.Seconds(), p.idx, st.Frame, st.Confirmed, st.Rollbacks, st.MaxRollback, st.Stalls, rate, st.Desyncs, pingString(pings(p)))
	}
	for k, s := range m.specs {
		fmt.Fprintf(w, "[%5.1fs] spectator %d: frame %4d, %d behind the host\n", at.Seconds(), k, s.sess.CurrentFrame(), s.sess.FramesBehindHost())
	}
}

// pings returns the smoothed round trip to each remote peer and spectator
// that has one yet.
func pings(p *demoPeer) map[string]float64 {
	m := map[string]float64{}
	for h, label := range p.remotes {
		if ns, err := p.sess.NetworkStats(h); err == nil {
			m[label] = ms(ns.Ping)
		}
	}
	return m
}
