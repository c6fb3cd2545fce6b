package rollback

// The protocol endpoint (GGRS's network/protocol), shared by the P2P and
// spectator sessions: the per-address state machine (handshake, message
// dispatch, timers, disconnect), the netcore that owns the conn and the
// endpoints, and the event queue. Inputs on the wire are in
// protocol_input.go.

import (
	crand "crypto/rand"
	"encoding/binary"
	"log/slog"
	"math"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/rollback/internal/wire"
	"github.com/rewindgo/rewind/transport"
)

// Protocol timing and limits (GGRS values where GGRS has them).
const (
	syncRoundTrips         = 5
	syncRetry              = 200 * time.Millisecond
	resendInterval         = 200 * time.Millisecond
	minReportResend        = 50 * time.Millisecond // least wait before unacknowledged checksum reports go again
	keepAliveInterval      = 200 * time.Millisecond
	qualityInterval        = 200 * time.Millisecond
	partsRetry             = 100 * time.Millisecond
	partsTimeout           = 5 * time.Second
	timeSyncWindow         = 30
	minRecommendation      = 1  // frames ahead before EventWaitRecommendation (GGRS: 3)
	recommendationInterval = 20 // frames between two EventWaitRecommendation (GGRS: 60)
	remoteSumHistory       = 32 // check frames' reports kept per peer, and local ones kept for repeating in Input messages
	maxExchanges           = 8  // parts exchanges in flight per peer
	maxPollPackets         = 2048
	udpOverhead            = 28
	malformedBurst         = 50 // malformed datagrams tolerated per second before a peer is dropped
	floodPerFrameRatio     = 12 // datagrams per simulated frame a peer may send before the excess is dropped
)

// netcore is the part of a session that talks to the network: the conn, the
// endpoints, scratch buffers for encoding and decoding, and the event queue.
type netcore struct {
	cfg     *resolved
	conn    transport.PacketConn
	log     *slog.Logger
	rand    rng.Rand
	eps     []*endpoint
	byAddr  map[netip.AddrPort]*endpoint
	in, out wire.Message
	buf     []byte
	rec     []byte
	enc     wire.InputEncoder
	dec     wire.InputDecoder
	events  []Event
	evHead  int
	evLen   int
	evDrop  uint64
	unknown uint64
	start   time.Time
	now     time.Time
}

func (n *netcore) init(cfg *resolved, conn transport.PacketConn) {
	n.cfg = cfg
	n.conn = conn
	n.log = cfg.Logger
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	n.rand = rng.NewSeed(seed)
	n.byAddr = make(map[netip.AddrPort]*endpoint)
	n.events = make([]Event, cfg.MaxEvents)
	n.buf = make([]byte, 0, transport.MaxPacketSize)
	n.start = cfg.Now()
	n.now = n.start
}

func (n *netcore) maxRecord() int { return n.cfg.NumPlayers * (1 + n.cfg.MaxInputSize) }

func (n *netcore) addEndpoint(addr netip.AddrPort) *endpoint {
	if e := n.byAddr[addr]; e != nil {
		return e
	}
	e := &endpoint{
		epLink:      epLink{addr: addr},
		epHandshake: epHandshake{syncLeft: syncRoundTrips},
		epSend:      epSend{pending: newRecordRing(n.maxRecord()), lastAcked: NullFrame},
		epRecv: epRecv{recv: newRecordRing(n.maxRecord()), lastRecv: NullFrame, lastSeen: NullFrame,
			lastHeard: n.now, peerStatus: make([]wire.PeerStatus, n.cfg.NumPlayers)},
		epSums:   epSums{sumAcked: NullFrame, reportSent: NullFrame, sumRecv: NullFrame},
		epMeter:  newMeter(n.now, n.maxFlood()),
		epRejoin: epRejoin{sendLimit: NullFrame},
	}
	for e.magic == 0 {
		e.magic = uint16(n.rand.Uint64())
	}
	e.syncNonce = uint32(n.rand.Uint64())
	n.eps = append(n.eps, e)
	n.byAddr[addr] = e
	return e
}

// event queues ev, dropping the oldest when the queue is full.
func (n *netcore) event(ev Event) {
	if n.evLen == len(n.events) {
		n.evHead = (n.evHead + 1) % len(n.events)
		n.evLen--
		n.evDrop++
	}
	n.events[(n.evHead+n.evLen)%len(n.events)] = ev
	n.evLen++
	n.log.Debug("rollback event", "event", ev.String())
}

// drainEvents appends the queued events to dst.
func (n *netcore) drainEvents(dst []Event) []Event {
	for n.evLen > 0 {
		dst = append(dst, n.events[n.evHead])
		n.events[n.evHead] = Event{}
		n.evHead = (n.evHead + 1) % len(n.events)
		n.evLen--
	}
	return dst
}

// send encodes n.out with the endpoint's magic and sends it.
func (n *netcore) send(e *endpoint) {
	n.out.Version = wire.Version
	n.out.Magic = e.magic
	b, err := n.out.Append(n.buf[:0])
	if err != nil {
		n.log.Error("rollback: encoding a message failed", "kind", n.out.Kind, "err", err)
		return
	}
	n.buf = b
	if err := n.conn.Send(e.addr, b); err != nil {
		n.log.Debug("rollback: send failed", "addr", e.addr, "err", err)
		return
	}
	e.bytesSent += uint64(len(b))
	e.packetsSent++
	e.lastSend = n.now
}

// msg resets the outgoing message to kind k (keeping slice capacity) and
// returns it for the caller to fill and send.
func (n *netcore) msg(k wire.Kind) *wire.Message {
	n.out = wire.Message{Kind: k, Status: n.out.Status[:0], Reports: n.out.Reports[:0], Parts: n.out.Parts[:0]}
	return &n.out
}

// sendSync sends a sync request with the endpoint's current nonce.
func (n *netcore) sendSync(e *endpoint) {
	n.msg(wire.KindSyncRequest).Nonce = e.syncNonce
	n.send(e)
	e.lastSyncSend = n.now
}

// budget refills the per-peer allowances for malformed and flood traffic.
func (n *netcore) budget(e *endpoint) { e.refill(n.now, n.maxFlood()) }

// maxFlood is the flood allowance of a peer: datagrams per second, and the
// most it may save up.
func (n *netcore) maxFlood() float64 { return float64(floodPerFrameRatio * n.cfg.FPS) }

// handler is what a session does with decoded traffic.
type handler interface {
	// onRecord receives the input record of frame f from e; false refuses
	// it (no room): it and later frames are not acknowledged.
	onRecord(e *endpoint, f Frame, rec []byte) bool
	// onMessage handles the message kinds the netcore does not (parts
	// requests and parts of a desync exchange).
	onMessage(e *endpoint, m *wire.Message)
	// dropEndpoint disconnects e for misbehaviour or by the peer's request.
	dropEndpoint(e *endpoint, reason string)
	// synchronized is called when e finishes its handshake.
	synchronized(e *endpoint)
	// onInputMeta handles the session part of an Input message from a peer
	// (its Done flag and checksum reports), before its inputs.
	onInputMeta(e *endpoint, m *wire.Message)
	// owes reports whether e is owed something besides inputs that only a
	// new Input message delivers (unacknowledged checksum reports, the end
	// of the match), so that the resend timer sends one.
	owes(e *endpoint) bool
	// fill fills the session part of an Input message to e: statuses,
	// checksum reports and the Done flag.
	fill(e *endpoint, m *wire.Message)
}

// poll receives waiting datagrams (at most maxPollPackets) and runs the
// endpoint timers.
func (n *netcore) poll(h handler) {
	n.now = n.cfg.Now()
	for i := 0; i < maxPollPackets; i++ {
		from, payload, ok := n.conn.Receive()
		if !ok {
			break
		}
		e := n.byAddr[from]
		if e == nil {
			n.unknown++
			continue
		}
		n.handle(h, e, payload)
	}
	for _, e := range n.eps {
		n.timers(h, e)
	}
}

func (n *netcore) malformedFrom(h handler, e *endpoint, what string, err error) {
	exhausted := e.chargeMalformed()
	n.log.Debug("rollback: malformed datagram", "addr", e.addr, "what", what, "err", err)
	if exhausted && e.state != stateDisconnected {
		e.banned = true
		h.dropEndpoint(e, "sent too many malformed datagrams")
	}
}

func (n *netcore) handle(h handler, e *endpoint, payload []byte) {
	n.budget(e)
	e.bytesRecv += uint64(len(payload))
	e.packetsRecv++
	if e.state == stateDisconnected {
		// A disconnected peer may come back with a new session (a new
		// magic) when rejoining is allowed.
		if !n.cfg.allowsRejoin() || e.spectator || e.host || e.banned || !e.admit() {
			return
		}
		m := &n.in
		if m.Decode(payload) != nil || m.Kind != wire.KindSyncRequest || m.Magic == e.remoteMagic {
			return
		}
		n.resync(e, m.Magic)
	}
	if !e.admit() {
		return
	}
	m := &n.in
	if err := m.Decode(payload); err != nil {
		if m.Version != wire.Version && len(payload) > 0 {
			if !e.versionReported {
				e.versionReported = true
				n.event(Event{Kind: EventVersionMismatch, Addr: e.addr, Version: m.Version})
			}
			e.malformed++
			return
		}
		n.malformedFrom(h, e, "decode", err)
		return
	}
	switch m.Kind {
	case wire.KindSyncRequest:
		// Always answer: the peer may have lost our replies.
		nonce := m.Nonce
		if e.remoteMagic == 0 {
			e.remoteMagic = m.Magic
		} else if m.Magic != e.remoteMagic {
			e.dropped++
			return
		}
		n.heard(e)
		n.msg(wire.KindSyncReply).Nonce = nonce
		n.send(e)
		return
	case wire.KindSyncReply:
		if e.remoteMagic == 0 {
			e.remoteMagic = m.Magic
		} else if m.Magic != e.remoteMagic {
			e.dropped++
			return
		}
		n.heard(e)
		if e.state != stateSyncing || m.Nonce != e.syncNonce {
			return
		}
		e.syncLeft--
		if e.syncLeft > 0 {
			n.event(Event{Kind: EventSynchronizing, Addr: e.addr, Count: syncRoundTrips - e.syncLeft, Total: syncRoundTrips})
			e.syncNonce = uint32(n.rand.Uint64())
			n.sendSync(e)
			return
		}
		e.state = stateRunning
		e.syncedAt = n.now
		e.lastQuality = n.now
		n.event(Event{Kind: EventSynchronized, Addr: e.addr})
		h.synchronized(e)
		return
	}
	// Everything else needs the handshake to have told us the peer's magic.
	if e.remoteMagic == 0 || m.Magic != e.remoteMagic {
		e.dropped++
		return
	}
	n.heard(e)
	switch m.Kind {
	case wire.KindInput:
		n.onInput(h, e, m)
	case wire.KindInputAck:
		n.ack(e, Frame(m.AckFrame))
		e.sumAcked = max(e.sumAcked, Frame(m.SumAck))
	case wire.KindQualityReport:
		e.remoteAdv = int(m.Advantage)
		ping := m.Ping
		n.msg(wire.KindQualityReply).Ping = ping
		n.send(e)
	case wire.KindQualityReply:
		now := uint64(n.now.Sub(n.start).Microseconds())
		if m.Ping <= now {
			sample := time.Duration(now-m.Ping) * time.Microsecond
			if e.rtt == 0 {
				e.rtt = sample
			} else {
				e.rtt = (e.rtt*7 + sample) / 8
			}
		}
	case wire.KindKeepAlive:
	default:
		h.onMessage(e, m)
	}
}

func (n *netcore) heard(e *endpoint) {
	e.lastHeard = n.now
	if e.interrupt {
		e.interrupt = false
		n.event(Event{Kind: EventNetworkResumed, Addr: e.addr})
	}
}

// timers runs retries, keep-alives, quality reports and disconnect detection.
func (n *netcore) timers(h handler, e *endpoint) {
	switch e.state {
	case stateDisconnected:
		return
	case stateSyncing:
		if n.now.Sub(e.lastSyncSend) >= syncRetry {
			n.sendSync(e)
		}
		return
	}
	silent := n.now.Sub(e.lastHeard)
	if silent >= n.cfg.DisconnectTimeout {
		h.dropEndpoint(e, "timed out")
		return
	}
	if silent >= n.cfg.DisconnectNotifyDelay && !e.interrupt {
		e.interrupt = true
		n.event(Event{Kind: EventNetworkInterrupted, Addr: e.addr, Timeout: n.cfg.DisconnectTimeout - silent})
	}
	if n.now.Sub(e.lastQuality) >= qualityInterval {
		e.lastQuality = n.now
		adv := e.localAdv
		if adv > math.MaxInt16 {
			adv = math.MaxInt16
		} else if adv < math.MinInt16 {
			adv = math.MinInt16
		}
		m := n.msg(wire.KindQualityReport)
		m.Advantage = int16(adv)
		m.Ping = uint64(n.now.Sub(n.start).Microseconds())
		n.send(e)
	}
	if ((!e.pending.empty() && e.pending.last > e.lastAcked) || h.owes(e)) && n.now.Sub(e.lastInput) >= resendInterval {
		e.inputDirty = true
	}
	if n.now.Sub(e.lastSend) >= keepAliveInterval && (!e.inputDirty || e.hold) {
		n.msg(wire.KindKeepAlive)
		n.send(e)
	}
}

// disconnect marks e disconnected (and tells the peer so, once).
func (n *netcore) disconnect(e *endpoint, reason string) bool {
	if e.state == stateDisconnected {
		return false
	}
	if e.state == stateRunning {
		e.disconnectRq = true
		n.sendInput(e, nil)
	}
	e.state = stateDisconnected
	n.event(Event{Kind: EventDisconnected, Addr: e.addr, Reason: reason})
	return true
}
