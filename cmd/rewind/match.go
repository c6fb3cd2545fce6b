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
	names   map[netip.AddrPort]string        // remote address -> name in verdicts
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
	ops     *matchOps // the --dashboard's recorders (nil: none)
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
	if err := m.startDashboard(ctx, "rewind demo p2p", live); err != nil {
		m.close()
		return nil, err
	}
	sum := o.newSummary("p2p")
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

// newSummary starts the summary of a match played with o in mode.
func (o *demoOptions) newSummary(mode string) *demoSummary {
	return &demoSummary{
		Mode: mode, Frames: o.Frames, Peers: o.Peers, Spectators: o.Spectators,
		Events: map[string]int{}, Record: o.Record, Running: true, dumpDir: o.DumpDir,
		running: map[string]bool{}, answered: map[string]map[netip.AddrPort]bool{}, rejoinable: o.RejoinBytes > 0,
		Link: linkSummary{LatencyMS: ms(o.Latency), JitterMS: ms(o.Jitter), Loss: o.Loss, Dup: o.Dup},
	}
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
	for i, p := range m.peers {
		var specs []netip.AddrPort
		var rec io.Writer
		if i == 0 {
			specs = specAddr
			if m.rec != nil {
				rec = m.rec
			}
		}
		if err := p.start(&o, p.conn, addr[i], specs, rec); err != nil {
			return m, err
		}
	}
	gcfg := o.gameConfig()
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

// gameConfig is the configuration of the demo game every peer and
// spectator of a match with o plays.
func (o *demoOptions) gameConfig() demo.Config {
	return demo.Config{Players: o.Peers, NPCs: o.NPCs, Seed: o.Seed}
}

// start creates p's session on conn, its game and its runner, which keeps
// the checksum of every confirmed frame. addrs[h] is where p reaches player
// h (p's own entry is unused), specs where it reaches the spectators it
// hosts; rec, if not nil, is where p records the match.
func (p *demoPeer) start(o *demoOptions, conn transport.PacketConn, addrs, specs []netip.AddrPort, rec io.Writer) error {
	p.names = map[netip.AddrPort]string{}
	cfg := rollback.Config{
		NumPlayers: o.Peers, InputDelay: o.InputDelay, DesyncInterval: o.DesyncInterval,
		MaxInputSize: demo.InputSize, Seed: o.Seed*1000 + uint64(p.idx) + 1, EndFrame: o.Frames,
		RejoinBytes: o.RejoinBytes, Rejoin: o.Rejoin,
	}
	if o.Rejoin {
		cfg.Seed += 1 << 20 // a new session: a new magic
	}
	if o.DumpDir != "" {
		cfg.DesyncDumpBytes = 256 << 10 // the peers exchange their dumps too
	}
	for j := range o.Peers {
		pl := rollback.Player{Handle: rollback.PlayerHandle(j), Kind: rollback.Local}
		if j != p.idx {
			pl.Kind, pl.Addr = rollback.Remote, addrs[j]
			p.remotes[pl.Handle] = fmt.Sprintf("p%d", j)
			p.names[addrs[j]] = fmt.Sprintf("peer %d at %v", j, addrs[j])
		}
		cfg.Players = append(cfg.Players, pl)
	}
	for k, a := range specs {
		h := rollback.PlayerHandle(o.Peers + k)
		cfg.Players = append(cfg.Players, rollback.Player{Handle: h, Kind: rollback.Spectator, Addr: a})
		p.remotes[h] = fmt.Sprintf("s%d", k)
		p.names[a] = fmt.Sprintf("spectator %d at %v", k, a)
	}
	gcfg := o.gameConfig()
	if rec != nil {
		cfg.Record, cfg.RecordMeta = rec, gcfg.AppendMeta(nil)
	}
	var err error
	if p.sess, err = rollback.NewP2P(conn, cfg); err != nil {
		return err
	}
	if p.game, err = demo.New(gcfg); err != nil {
		return err
	}
	rcfg := runner.Config{
		ChecksumAll: true,
		Confirmed:   func(f rollback.Frame, sum uint64) { p.sums = append(p.sums, frameSum{f, sum}) },
	}
	if o.DumpDir != "" {
		// Dumps of the last 8 checked frames: a desync is found a round
		// trip after its frame, well within 8 desync intervals.
		rcfg.Dumps, rcfg.DumpLabel = 8, fmt.Sprintf("peer %d", p.idx)
	}
	if o.Corrupt > 0 && p.idx == o.Peers-1 {
		// A deliberate desync (--corrupt): the last peer moves player 0
		// one unit further at that frame, in every simulation of it.
		rcfg.Step = func(ctx *runner.Context) {
			p.game.Step(ctx)
			if ctx.Frame == rollback.Frame(o.Corrupt) {
				p.game.Corrupt()
			}
		}
	}
	p.run, err = p.game.NewRunner(p.sess, rcfg)
	return err
}

// play runs every peer and spectator from this goroutine on wall-clock time
// until every one has finished the match (the sessions' EndFrame is
// o.Frames: all frames confirmed, compared, recorded and sent to the
// spectators) and the dumps of a desync were exchanged (--dump-dir), or
// the timeout passes, or ctx is done. It returns the time played.
func (m *match) play(ctx context.Context, sum *demoSummary, live io.Writer) (time.Duration, error) {
	var doneAt time.Time
	return m.loop(ctx, sum, live, func(now time.Time, dt time.Duration) (bool, error) {
		done := true
		for _, p := range m.peers {
			finished, err := advance(p.run, dt, fmt.Sprintf("peer %d", p.idx), p.names, sum, live)
			if err != nil {
				return false, err
			}
			done = done && finished
		}
		for k, s := range m.specs {
			finished, err := advance(s.run, dt, fmt.Sprintf("spectator %d", k), nil, sum, live)
			if err != nil {
				return false, err
			}
			done = done && finished
		}
		if done && sum.awaitingDumps() {
			// A desync's dumps are still on their way between the peers
			// (--dump-dir): keep the sessions answering for them, at
			// most dumpGrace after the match.
			if doneAt.IsZero() {
				doneAt = now
			}
			done = now.Sub(doneAt) > dumpGrace
		}
		return done, nil
	})
}

// dumpGrace bounds how long a finished match waits for the peers'
// exchange of desync dumps (the session gives up on one after 10 s).
const dumpGrace = 10 * time.Second

// advance updates run by dt, or once it is finished only polls its session
// (keep answering: the others may not know yet), and counts the session's
// events as who's (names labels its remotes). It reports whether run was
// finished before this call.
func advance(run *runner.Runner, dt time.Duration, who string, names map[netip.AddrPort]string, sum *demoSummary, live io.Writer) (bool, error) {
	finished := run.Finished()
	if !finished {
		if _, err := run.Update(dt); err != nil {
			return false, fmt.Errorf("%s: %w", who, err)
		}
	} else {
		run.Session().Poll()
	}
	for _, ev := range run.Session().Events() {
		sum.event(live, who, ev, run, names)
	}
	return finished, nil
}

// loop calls step with the time and the time since its last call, every
// 2 ms on wall-clock time, until step reports the match over (then it
// returns at once), the timeout passes (o.Timeout, 0: 3x the match plus
// 30s) or ctx is done; it prints live statistics every o.StatsEvery. It
// returns the time played.
func (m *match) loop(ctx context.Context, sum *demoSummary, live io.Writer, step func(now time.Time, dt time.Duration) (over bool, err error)) (time.Duration, error) {
	o := m.o
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 3*time.Duration(o.Frames)*time.Second/60 + 30*time.Second
	}
	start := time.Now()
	last, nextStats := start, start.Add(o.StatsEvery)
	for {
		now := time.Now()
		over, err := step(now, now.Sub(last))
		if err != nil {
			return 0, err
		}
		last = now
		m.ops.sample()
		switch {
		case over:
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
