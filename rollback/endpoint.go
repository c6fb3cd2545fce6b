package rollback

import (
	"math"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/rollback/internal/wire"
)

type endpointState uint8

const (
	stateSyncing endpointState = iota
	stateRunning
	stateDisconnected
)

// endpoint is the protocol state towards one remote address: a peer (players
// behind it), a spectator this session hosts, or the host a spectator
// follows. It is grouped into parts by concern; their fields are promoted,
// so code reads e.lastAcked rather than e.epSend.lastAcked.
type endpoint struct {
	epLink      // who is behind the address, and where the link stands
	epHandshake // the sync handshake (protocol.go)
	epSend      // the inputs we send and their acknowledgements (protocol_input.go)
	epRecv      // the inputs and statuses received (protocol_input.go, p2p_peers.go)
	epTimeSync  // round trip and frame advantages (timesync.go)
	epSums      // desync detection: checksum reports and parts exchanges (p2p_desync.go)
	epMeter     // traffic counters and the allowances against hostile traffic (protocol.go)
}

// epLink is who is behind an endpoint's address and the state of the link.
type epLink struct {
	addr      netip.AddrPort
	handles   []PlayerHandle // players behind a peer's address, in handle order
	spectator bool           // a spectator this session hosts
	host      bool           // the host of a spectator session
	state     endpointState
	// done: the peer said it confirmed its whole match (wire Done flag).
	done bool
}

// epHandshake is the sync handshake: syncRoundTrips request/reply round
// trips with a fresh nonce each, then each side knows the other's magic
// and drops datagrams with another.
type epHandshake struct {
	// magic is ours towards this endpoint (never 0), remoteMagic the
	// peer's (0 until its first reply).
	magic, remoteMagic uint16
	// syncLeft counts the round trips still to do, syncNonce is the nonce
	// of the request in flight, sent at lastSyncSend (resent after
	// syncRetry).
	syncLeft     int
	syncNonce    uint32
	lastSyncSend time.Time
	// versionReported: EventVersionMismatch was raised for this address
	// (once).
	versionReported bool
}

// epSend is what we send the endpoint: input records until acknowledged,
// and when the timers last sent.
type epSend struct {
	// pending holds the frames not yet acknowledged (and the last
	// acknowledged one, the base of the delta encoding); lastAcked is the
	// newest frame the peer acknowledged.
	pending   *recordRing
	lastAcked Frame
	// lastSend is when any datagram was last sent (keep-alives),
	// lastInput when an Input message was (resends), lastQuality when a
	// quality report was (round-trip measurement).
	lastSend, lastInput, lastQuality time.Time
	inputDirty                       bool // new frames to send
	ackDue                           bool // frames received that no message acknowledged yet
	disconnectRq                     bool // tell the peer we dropped it
}

// epRecv is what the endpoint sent us.
type epRecv struct {
	// recv holds the input records received and not yet taken; lastRecv
	// is the newest frame stored (acknowledged), lastSeen the newest the
	// peer has sent (stored or not).
	recv     *recordRing
	lastRecv Frame
	lastSeen Frame
	// lastHeard is when a datagram last arrived; interrupt: the silence
	// since passed DisconnectNotifyDelay (EventNetworkInterrupted raised,
	// EventNetworkResumed due when it speaks again).
	lastHeard time.Time
	interrupt bool
	// peerStatus is the players' connection statuses as the peer last
	// gossiped them (hasStatus: at least once).
	peerStatus []wire.PeerStatus
	hasStatus  bool
}

// epTimeSync is the round trip and the frame advantages of time sync: the
// last timeSyncWindow frames' local and remote advantages, averaged by
// framesAhead.
type epTimeSync struct {
	rtt          time.Duration
	remoteAdv    int // the peer's advantage over us, as it reported it
	localAdv     int // our advantage over the peer, as estimated here
	localWindow  [timeSyncWindow]int
	remoteWindow [timeSyncWindow]int
	syncedAt     time.Time // end of the handshake (rates in NetworkStats)
}

// framesAhead is the averaged number of frames this session is ahead of e:
// half the difference of the averaged remote and local advantages (each
// side measures the gap once), rounded to the nearest frame, halves away
// from zero. GGRS truncates toward zero instead, which hides up to a whole
// frame of lead in either direction: two peers 0.9 frames apart would both
// read 0 and neither would slow down.
func (e *epTimeSync) framesAhead() int {
	var l, r int
	for i := range e.localWindow {
		l += e.localWindow[i]
		r += e.remoteWindow[i]
	}
	return int(float64(r-l)/float64(2*timeSyncWindow) + 0.5*sign(r-l))
}

func sign(x int) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

// epSums is desync detection with one peer. Checksum reports ride on Input
// messages (wire version 2) and are acknowledged by SumAck in Input and
// InputAck.
type epSums struct {
	// remoteSums holds the peer's reports by check frame.
	remoteSums [remoteSumHistory]sumEntry
	// sumAcked is the newest check frame of ours the peer acknowledged
	// (Input messages repeat newer reports until it does, at most once per
	// reportResend); reportSent and reportAt are the newest report sent
	// and when reports were last sent.
	sumAcked   Frame
	reportSent Frame
	reportAt   time.Time
	// sumRecv is the newest of the peer's reports received here (our
	// SumAck); sumAckDue: a report arrived since a message carried it.
	sumRecv   Frame
	sumAckDue bool
	// exchanges are the parts exchanges in flight (at most maxExchanges).
	exchanges []exchange
	// dumps are the desync dump exchanges in flight (at most
	// maxExchanges; p2p_dump.go).
	dumps []dumpXfer
	// dumped: a dump exchange with the peer was started (one per peer).
	dumped bool
}

// sumAck is the SumAck of the next message to e: the newest of its
// reports received here when one arrived since the last message carried
// it, else -1 (nothing to acknowledge; the peer repeats a report whose
// acknowledgement was lost, which makes it due again). Acknowledging in
// every message cost 3 bytes per Input message, most of the checks' cost.
func (e *epSums) sumAck() int32 {
	if !e.sumAckDue {
		return -1
	}
	return int32(e.sumRecv)
}

// takeSumAck is sumAck for a message that is sent at once.
func (e *epSums) takeSumAck() int32 {
	a := e.sumAck()
	e.sumAckDue = false
	return a
}

// exchange returns the index of the parts exchange about frame f, or -1.
func (e *epSums) exchange(f Frame) int {
	for i := range e.exchanges {
		if e.exchanges[i].frame == f {
			return i
		}
	}
	return -1
}

// sumEntry is a checksum report of a check frame.
type sumEntry struct {
	frame Frame
	sum   uint64
	ok    bool
	done  bool // compared (remote reports)
}

// epMeter counts the endpoint's traffic and holds its allowances against
// hostile traffic: token buckets of malformed datagrams (malformedBurst a
// second, saved up to malformedBurst: below 0 the peer is dropped) and of
// datagrams (maxFlood a second, saved up to maxFlood: the excess is
// dropped unread). Invariant: each budget is at most its burst; refill
// keeps it, as the only way budgets grow, and chargeMalformed and admit
// are the only ways they shrink.
type epMeter struct {
	bytesSent, packetsSent, bytesRecv, packetsRecv uint64
	malformed, dropped                             uint64
	malformedBudget, floodBudget                   float64
	lastBudget                                     time.Time
}

// newMeter returns the counters of a new endpoint at now, its allowances
// full.
func newMeter(now time.Time, maxFlood float64) epMeter {
	return epMeter{lastBudget: now, malformedBudget: malformedBurst, floodBudget: maxFlood}
}

// refill adds the allowances earned since the last refill, up to their
// bursts.
func (m *epMeter) refill(now time.Time, maxFlood float64) {
	dt := now.Sub(m.lastBudget).Seconds()
	if dt <= 0 {
		return
	}
	m.lastBudget = now
	m.malformedBudget = math.Min(malformedBurst, m.malformedBudget+dt*malformedBurst)
	m.floodBudget = math.Min(maxFlood, m.floodBudget+dt*maxFlood)
}

// chargeMalformed counts a malformed datagram against the allowance and
// reports whether the allowance is exhausted (the peer is to be dropped).
func (m *epMeter) chargeMalformed() (exhausted bool) {
	m.malformed++
	m.malformedBudget--
	return m.malformedBudget < 0
}

// admit takes one datagram from the flood allowance; with none left it
// counts the datagram as dropped and reports false.
func (m *epMeter) admit() bool {
	if m.floodBudget < 1 {
		m.dropped++
		return false
	}
	m.floodBudget--
	return true
}
