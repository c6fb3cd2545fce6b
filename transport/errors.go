package transport

import "errors"

// Sentinel errors returned by the conns, networks and proxies in this package.
// Compare them with [errors.Is]; some are returned wrapped with more context.
var (
	// ErrClosed is returned when a conn, network or proxy is used after Close
	// or after the context that governs its lifetime was cancelled.
	ErrClosed = errors.New("transport: use of closed conn")

	// ErrTooLarge is returned by Send when the payload is longer than
	// MaxPacketSize. The datagram is not sent and is counted in
	// Stats.DroppedOversize.
	ErrTooLarge = errors.New("transport: payload larger than MaxPacketSize")

	// ErrInvalidAddr is returned when an address is not a valid IP address
	// and port, for example the zero netip.AddrPort passed to Send.
	ErrInvalidAddr = errors.New("transport: invalid address")

	// ErrAddrInUse is returned by Network.Listen when another SimConn already
	// listens on the requested address.
	ErrAddrInUse = errors.New("transport: address already in use")
)
