package rollback

import (
	"time"
)

// NetworkStats describes the connection to one remote peer or spectator.
type NetworkStats struct {
	// Ping is the smoothed round-trip time.
	Ping time.Duration
	// SendQueueLen is the number of local input frames sent but not yet
	// acknowledged by the peer.
	SendQueueLen int
	// KbpsSent is the rate actually put on the wire towards the peer, in
	// kilobits per second, counting each datagram's payload plus 28 bytes of
	// IPv4 and UDP headers, averaged since the peer synchronized.
	KbpsSent float64
	// BytesSent and PacketsSent count UDP payload bytes and datagrams sent
	// to the peer; BytesReceived and PacketsReceived those received from it.
	BytesSent, PacketsSent         uint64
	BytesReceived, PacketsReceived uint64
	// LocalFramesBehind is how many frames this session is behind the peer
	// (negative: ahead), from this side's measurement; RemoteFramesBehind is
	// the peer's own measurement of how far it is behind this session.
	LocalFramesBehind, RemoteFramesBehind int
	// Malformed counts datagrams from the peer that failed to decode or made
	// no sense; Dropped counts datagrams dropped for flooding.
	Malformed, Dropped uint64
}

// stats fills NetworkStats for e.
func (n *netcore) stats(e *endpoint) (NetworkStats, error) {
	if e.state == stateSyncing {
		return NetworkStats{}, ErrNotSynchronized
	}
	el := n.now.Sub(e.syncedAt)
	if el < time.Second {
		return NetworkStats{}, ErrNotEnoughData
	}
	st := NetworkStats{
		Ping: e.rtt, BytesSent: e.bytesSent, PacketsSent: e.packetsSent,
		BytesReceived: e.bytesRecv, PacketsReceived: e.packetsRecv,
		LocalFramesBehind: e.localAdv, RemoteFramesBehind: e.remoteAdv,
		Malformed: e.malformed, Dropped: e.dropped,
	}
	if !e.pending.empty() {
		st.SendQueueLen = int(e.pending.last - e.lastAcked)
	}
	st.KbpsSent = float64(e.bytesSent+udpOverhead*e.packetsSent) * 8 / 1000 / el.Seconds()
	return st, nil
}
