package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	pionwebrtc "github.com/pion/webrtc/v4"

	"github.com/rewindgo/rewind/contrib/webrtc"
	"github.com/rewindgo/rewind/examples/boxgame/sim"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/transport"
)

// match is this process's part of a game: the simulation, the session that
// drives it (P2P, spectator or SyncTest), the runner, and what the HUD and
// the summary show. It has no display code.
type match struct {
	o    options
	game *sim.Game
	run  *runner.Runner
	conn transport.PacketConn // nil in SyncTest

	p2p  *rollback.P2PSession
	spec *rollback.SpectatorSession
	sync *rollback.SyncTestSession

	local   []rollback.PlayerHandle // local players, in key-set order
	remotes []peerInfo              // remote peers and spectators (P2P), the host (spectator)
	readKey func(local int) byte    // the keyboard; nil in scripted and headless runs

	digest   sim.Digest
	finished time.Time // when the match finished with frames 0..Frames in the digest (zero before)
	events   []string  // notable events, newest last (HUD)
	desyncs  []string  // every EventDesyncDetected (summary)
	alarm    string    // the first desync, short (HUD banner)
	start    time.Time
	rate     rateMeter
}

// peerInfo is one remote address of the session, for the HUD.
type peerInfo struct {
	label  string
	handle rollback.PlayerHandle
	addr   netip.AddrPort
}

// newMatch opens the socket (wrapped in the link conditioner when link
// conditions are set) and builds the session, the game and the runner.
func newMatch(ctx context.Context, o options) (*match, error) {
	m := &match{o: o, start: time.Now()}
	var err error
	if o.Mode != modeSyncTest {
		if m.conn, err = m.openConn(ctx); err != nil {
			return nil, err
		}
		o = m.o              // a WebRTC room fills in the players
		m.start = time.Now() // the match starts once every peer is there
	}
	players := o.NumPlayers
	if o.Mode == modeP2P {
		players = len(o.Players)
	}
	if m.game, err = sim.New(sim.Config{Players: players}); err != nil {
		m.close()
		return nil, err
	}
	cfg := rollback.Config{
		NumPlayers: players, InputDelay: o.InputDelay, MaxInputSize: sim.InputSize,
		DesyncInterval: o.DesyncInterval, CheckDistance: o.CheckDistance,
		EndFrame: o.Frames, // 0: endless
	}
	rcfg := runner.Config{ReadInput: m.readInput, ChecksumAll: true, Confirmed: m.confirmed}
	var sess runner.Session
	switch o.Mode {
	case modeP2P:
		for h, p := range o.Players {
			pl := rollback.Player{Handle: rollback.PlayerHandle(h), Kind: rollback.Local}
			if p.IsValid() {
				pl.Kind, pl.Addr = rollback.Remote, p
				m.remotes = append(m.remotes, peerInfo{fmt.Sprintf("P%d", h+1), pl.Handle, p}) // as its box is labelled
			} else {
				m.local = append(m.local, pl.Handle)
			}
			cfg.Players = append(cfg.Players, pl)
		}
		for k, a := range o.Spectators {
			h := rollback.PlayerHandle(players + k)
			cfg.Players = append(cfg.Players, rollback.Player{Handle: h, Kind: rollback.Spectator, Addr: a})
			m.remotes = append(m.remotes, peerInfo{fmt.Sprintf("s%d", k), h, a})
		}
		m.p2p, err = rollback.NewP2P(m.conn, cfg)
		sess = m.p2p
	case modeSpectator:
		m.remotes = append(m.remotes, peerInfo{"host", -1, o.Host})
		m.spec, err = rollback.NewSpectator(m.conn, o.Host, cfg)
		sess = m.spec
		// A spectator simulates confirmed frames only: every state is
		// final. The state after frame f is that of frame f+1, so frames
		// 0..N need the host's inputs up to N-1 only.
		rcfg.Step = func(ctx *runner.Context) {
			if ctx.Frame == 0 {
				m.confirmChecksum(ctx, 0)
			}
			m.game.Step(ctx)
			m.confirmChecksum(ctx, ctx.Frame+1)
		}
	case modeSyncTest:
		for h := range players {
			m.local = append(m.local, rollback.PlayerHandle(h))
		}
		m.sync, err = rollback.NewSyncTest(cfg)
		sess = m.sync
	}
	if err != nil {
		m.close()
		return nil, err
	}
	if rcfg.Step != nil {
		m.run, err = runner.New(runner.Config{World: m.game.World(), Registry: m.game.Registry(), Session: sess,
			Step: rcfg.Step, ReadInput: rcfg.ReadInput})
	} else {
		m.run, err = m.game.NewRunner(sess, rcfg)
	}
	if err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

// openConn opens the conn of a P2P or spectator match: WebRTC data
// channels to the members of the room o.Signal (conn_webrtc.go), or a UDP
// socket on o.Port (conn_udp.go; not in a browser); wrapped in the link
// conditioner when link conditions are set.
func (m *match) openConn(ctx context.Context) (transport.PacketConn, error) {
	var conn transport.PacketConn
	var err error
	seed := m.o.Seed + uint64(m.o.Port)
	if m.o.Signal != "" {
		var rc *webrtc.Conn
		if rc, err = dialRoom(ctx, m.o); err != nil {
			return nil, err
		}
		// Players in room order: this peer is its index.
		m.o.Players = make([]netip.AddrPort, rc.N())
		for h := range m.o.Players {
			if h != rc.Index() {
				m.o.Players[h] = webrtc.PeerAddr(h)
			}
		}
		conn, seed = rc, m.o.Seed+uint64(rc.Index())
	} else if conn, err = listenUDP(ctx, m.o.Port); err != nil {
		return nil, err
	}
	if m.o.Link != (transport.LinkConfig{}) {
		conn = transport.Condition(conn, transport.ConditionConfig{Link: m.o.Link, Seed: seed})
	}
	return conn, nil
}

// dialRoom joins the WebRTC room o.Signal and waits for its other members
// (giving up after o.Timeout in a --frames run).
func dialRoom(ctx context.Context, o options) (*webrtc.Conn, error) {
	if o.Frames > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	cfg := webrtc.Config{}
	for _, u := range o.ICE {
		cfg.ICEServers = append(cfg.ICEServers, pionwebrtc.ICEServer{URLs: []string{u}})
	}
	for {
		c, err := webrtc.Dial(ctx, o.Signal, cfg)
		if err == nil {
			return c, nil
		}
		// The host may not serve yet (two players started together):
		// try again every second.
		if !refused(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("webrtc room %s: %w", o.Signal, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("webrtc room %s: %w (%w)", o.Signal, ctx.Err(), err)
		case <-time.After(time.Second):
		}
	}
}

// readInput is the runner's ReadInput: scripted inputs, or the keys of the
// local player's key set.
func (m *match) readInput(h rollback.PlayerHandle) []byte {
	if m.readKey == nil || m.o.Script {
		return []byte{sim.Script(m.currentFrame()+rollback.Frame(m.o.InputDelay), h)}
	}
	return []byte{m.readKey(slices.Index(m.local, h))}
}

// confirmed folds the checksum of each final state into the digest (the
// runner reports frames 0..o.Frames, in order, each once).
func (m *match) confirmed(f rollback.Frame, sum uint64) { m.digest.Add(f, sum) }

// confirmChecksum passes the checksum of the world, the state of frame f,
// to confirmed.
func (m *match) confirmChecksum(ctx *runner.Context, f rollback.Frame) {
	sum, err := m.game.Checksum()
	ctx.Fail(err)
	m.confirmed(f, sum)
}

// complete reports whether the match reached o.Frames and is over for
// every peer: each state 0..o.Frames is final, checked and in the digest
// (SyncTest: reached o.Frames with every re-simulation checked).
func (m *match) complete() bool { return !m.finished.IsZero() }

// update runs the frames due after elapsed wall time. Once the session is
// Finished (rollback.Config.EndFrame) the runner only polls, answering
// peers that may not know yet.
func (m *match) update(elapsed time.Duration) error {
	if _, err := m.run.Update(elapsed); err != nil {
		return err
	}
	// A SyncTest session reports its last CheckDistance frames as never
	// confirmed, so its digest stops short of o.Frames; it has no peer to
	// compare with anyway.
	if m.finished.IsZero() && m.run.Finished() && (m.sync != nil || m.digest.Frames() == m.o.Frames+1) {
		m.finished = time.Now()
	}
	m.drainEvents()
	m.rate.sample(time.Now(), m.bytesSent())
	return nil
}

func (m *match) drainEvents() {
	var evs []rollback.Event
	switch {
	case m.p2p != nil:
		evs = m.p2p.Events()
	case m.spec != nil:
		evs = m.spec.Events()
	}
	for _, ev := range evs {
		switch ev.Kind {
		case rollback.EventSynchronizing, rollback.EventWaitRecommendation:
			continue
		case rollback.EventDesyncDetected:
			m.desyncs = append(m.desyncs, ev.String())
			if m.alarm == "" {
				m.alarm = fmt.Sprintf("at frame %d with %v, differing: %s", ev.Frame, ev.Addr, shortTypes(ev.Types))
			}
		}
		line := fmt.Sprintf("[%5.1fs] %v", time.Since(m.start).Seconds(), ev)
		if len(line) > hudColumns {
			line = line[:hudColumns-3] + "..."
		}
		m.events = append(m.events, line)
		if len(m.events) > hudEvents {
			m.events = m.events[1:]
		}
	}
}

// The HUD shows the last hudEvents events, cut to hudColumns characters.
const (
	hudEvents  = 3
	hudColumns = 104
)

// shortTypes names types without their package path ("sim.Box"), once each.
func shortTypes(types []string) string {
	var out []string
	for _, t := range types {
		if i := strings.LastIndexByte(t, '/'); i >= 0 {
			t = t[i+1:]
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return "unknown types"
	}
	return strings.Join(out, ", ")
}

// currentFrame is the frame the session simulates next.
func (m *match) currentFrame() rollback.Frame {
	switch {
	case m.p2p != nil:
		return m.p2p.CurrentFrame()
	case m.spec != nil:
		return m.spec.CurrentFrame()
	}
	return m.sync.CurrentFrame()
}

// running reports whether the session has synchronized with its peers.
func (m *match) running() bool {
	switch {
	case m.p2p != nil:
		return m.p2p.Running()
	case m.spec != nil:
		return m.spec.Running()
	}
	return true
}

func (m *match) bytesSent() uint64 {
	if m.conn == nil {
		return 0
	}
	return m.conn.Stats().BytesSent
}

// isLocal reports whether this process plays handle h.
func (m *match) isLocal(h rollback.PlayerHandle) bool { return slices.Contains(m.local, h) }

// stats are the session's counters (zero for a spectator).
func (m *match) stats() rollback.SessionStats {
	if m.p2p != nil {
		return m.p2p.Stats()
	}
	// SyncTest: every load is a check, which goes back CheckDistance
	// frames (fewer at the start) and re-simulates them: the frames
	// simulated beyond the current one are the re-simulated ones.
	st := rollback.SessionStats{Frame: m.currentFrame(), Rollbacks: m.run.Loads()}
	st.RollbackFrames = max(0, m.run.Frames()-int(st.Frame))
	if m.sync != nil {
		st.Confirmed = m.sync.ConfirmedFrame()
		if st.Rollbacks > 0 {
			st.MaxRollback = min(m.o.CheckDistance, int(st.Frame))
		}
	}
	return st
}

// ping returns the round trip to a remote peer, spectator or host.
func (m *match) ping(p peerInfo) (time.Duration, bool) {
	var ns rollback.NetworkStats
	var err error
	switch {
	case m.p2p != nil:
		ns, err = m.p2p.NetworkStats(p.handle)
	case m.spec != nil:
		ns, err = m.spec.NetworkStats()
	default:
		return 0, false
	}
	return ns.Ping, err == nil
}

// framesAhead is how far this peer runs ahead of the slowest peer (P2P), or
// behind the host (negative, spectator).
func (m *match) framesAhead() int {
	switch {
	case m.p2p != nil:
		return m.p2p.FramesAhead()
	case m.spec != nil:
		return -m.spec.FramesBehindHost()
	}
	return 0
}

func (m *match) close() error {
	var err error
	switch {
	case m.p2p != nil:
		err = m.p2p.Close()
	case m.spec != nil:
		err = m.spec.Close()
	}
	if m.conn != nil {
		err = errors.Join(err, m.conn.Close())
	}
	return err
}

// pingString lists the pings for the HUD.
func (m *match) pingString() string {
	var b strings.Builder
	for _, p := range m.remotes {
		if d, ok := m.ping(p); ok {
			fmt.Fprintf(&b, " %s %dms", p.label, d.Milliseconds())
		} else {
			fmt.Fprintf(&b, " %s -", p.label)
		}
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}

// rateMeter measures bytes per second over the last second.
type rateMeter struct {
	at    time.Time
	bytes uint64
	rate  float64
}

func (r *rateMeter) sample(now time.Time, bytes uint64) {
	if r.at.IsZero() {
		r.at, r.bytes = now, bytes
		return
	}
	if d := now.Sub(r.at); d >= time.Second {
		r.rate = float64(bytes-r.bytes) / d.Seconds()
		r.at, r.bytes = now, bytes
	}
}
