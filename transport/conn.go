package transport

import "net/netip"

// MaxPacketSize is the largest payload, in bytes, that a PacketConn sends or
// receives. 1200 bytes is the datagram size that QUIC (RFC 9000 §14) relies on
// reaching any Internet host unfragmented: it fits the IPv6 minimum MTU of
// 1280 bytes with IP and UDP headers. Rollback input packets are far smaller.
const MaxPacketSize = 1200

// PacketConn sends and receives unreliable datagrams without ever blocking the
// caller. It is the packet layer under peer-to-peer rollback sessions, which
// send a few small datagrams and poll for new ones once per frame.
//
// Implementations in this package: [UDPConn] (real UDP sockets) and [PacketNetworkConn]
// (the deterministic simulated [PacketNetwork]).
//
// All methods are safe for concurrent use, but Receive hands out a buffer
// that the next Receive call reuses, so a conn should have one polling
// goroutine.
type PacketConn interface {
	// Send queues one datagram for delivery to the address to and returns
	// without waiting for it to be delivered. The payload is copied (or
	// handed to the kernel) before Send returns, so the caller may reuse it.
	// It returns ErrTooLarge when len(payload) > MaxPacketSize, ErrClosed
	// after Close and ErrInvalidAddr for an invalid address. Delivery is not
	// guaranteed: a datagram may be lost, duplicated or reordered.
	Send(to netip.AddrPort, payload []byte) error

	// Receive returns the oldest datagram waiting in the receive queue, or
	// ok == false at once when none is waiting (and after Close). The
	// payload slice is owned by the conn: it stays valid until the next
	// Receive call, which may overwrite it. Copy it to keep it longer. In
	// steady state Receive allocates nothing.
	Receive() (from netip.AddrPort, payload []byte, ok bool)

	// LocalAddr returns the address peers send to in order to reach this conn.
	LocalAddr() netip.AddrPort

	// Stats returns the conn's traffic counters.
	Stats() Stats

	// Close releases the conn. Pending datagrams are discarded, and later
	// calls to Send return ErrClosed. Close is idempotent: calls after the
	// first return nil.
	Close() error
}

// Stats counts one conn's traffic since it was opened.
type Stats struct {
	// PacketsSent and BytesSent count the datagrams (and their payload bytes)
	// accepted by Send.
	PacketsSent, BytesSent uint64
	// PacketsReceived and BytesReceived count the datagrams (and their
	// payload bytes) placed in the receive queue.
	PacketsReceived, BytesReceived uint64
	// DroppedQueueFull counts datagrams that arrived while the receive queue
	// was full and were discarded.
	DroppedQueueFull uint64
	// DroppedOversize counts Send calls rejected with ErrTooLarge plus
	// received datagrams longer than MaxPacketSize, which are discarded.
	DroppedOversize uint64
	// SendErrors counts Send calls that failed for any other reason: a closed
	// conn, an invalid address, or a socket error.
	SendErrors uint64
}

// unmap normalises an address so that the same peer always gives the same map
// key: IPv4-mapped IPv6 addresses (as reported by dual-stack sockets) become
// plain IPv4.
func unmap(a netip.AddrPort) netip.AddrPort {
	if a.Addr().Is4In6() {
		return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
	}
	return a
}
