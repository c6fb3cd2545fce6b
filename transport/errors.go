package transport

import (
	"errors"
	"fmt"
	"strings"
)

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

	// ErrAddrInUse is returned by PacketNetwork.Listen when another PacketNetworkConn already
	// listens on the requested address.
	ErrAddrInUse = errors.New("transport: address already in use")
)

// Errors of message conns, in addition to ErrClosed and ErrTooLarge.
var (
	// ErrQueueFull is returned by MessageConn.Send when the send queue of
	// the reliable channels is full (see MessageLimits.SendQueueMessages).
	ErrQueueFull = errors.New("transport: send queue full")

	// ErrInvalidChannel is returned by MessageConn.Send for a channel that
	// is not one of the defined Channel constants.
	ErrInvalidChannel = errors.New("transport: invalid channel")

	// ErrTimeout is the cause of a conn closed because its peer could not
	// be reached for the idle timeout (or a handshake took too long).
	ErrTimeout = errors.New("transport: connection timed out")

	// ErrReceiveOverflow is the cause of a conn closed because reliable
	// messages arrived faster than the application received them and
	// overflowed the receive queue (see MessageLimits). The side that
	// overflowed closes the conn; its peer sees the same cause.
	ErrReceiveOverflow = errors.New("transport: receive queue overflow")

	// ErrProtocol is the cause of a conn closed because the peer broke the
	// protocol: malformed framing, a message over the limit, a stream it
	// had no right to open.
	ErrProtocol = errors.New("transport: protocol violation")

	// ErrRefused is returned by Dial, or is the cause of a conn closed
	// early, when no listener accepts connections at the address or its
	// accept backlog is full.
	ErrRefused = errors.New("transport: connection refused")
)

// SizeError is the error Send returns for a message over its channel's
// limit. It matches ErrTooLarge with errors.Is.
type SizeError struct {
	Channel Channel // the channel of the refused message
	Size    int     // its length in bytes
	Limit   int     // the channel's limit when Send was called
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("transport: %v message of %d bytes exceeds the limit of %d bytes", e.Channel, e.Size, e.Limit)
}

// Unwrap returns ErrTooLarge.
func (e *SizeError) Unwrap() error { return ErrTooLarge }

// CloseError says why a MessageConn closed. It matches ErrClosed with
// errors.Is, and Err too when it is set.
type CloseError struct {
	// Remote is true when the peer closed the conn (Reason and Err are the
	// ones it sent), false when this side did, or the network or a timer.
	Remote bool
	// Reason is the reason given to CloseWithReason, or a description of
	// the cause. It may be empty.
	Reason string
	// Err is the cause when it is not a plain close: ErrTimeout,
	// ErrReceiveOverflow, ErrProtocol, ErrRefused, or the error of a
	// context that ended the conn. Nil for Close and CloseWithReason.
	Err error
}

func (e *CloseError) Error() string {
	var b strings.Builder
	b.WriteString("transport: connection closed")
	if e.Remote {
		b.WriteString(" by peer")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "transport: "))
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, ": %q", e.Reason)
	}
	return b.String()
}

// Unwrap returns ErrClosed and Err.
func (e *CloseError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrClosed}
	}
	return []error{ErrClosed, e.Err}
}
