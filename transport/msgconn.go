package transport

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"
)

// Channel is one of the delivery guarantees a MessageConn offers. Every
// message is sent on one channel, and Receive reports which.
type Channel uint8

// The channels of a MessageConn.
const (
	// ReliableOrdered messages are delivered exactly once, in the order
	// they were sent. A message that is lost in transit and retransmitted
	// holds back the ones sent after it (head-of-line blocking). Use it for
	// state that must be applied in order, such as replication's structural
	// updates. At most MessageLimits.MaxMessageSize bytes.
	ReliableOrdered Channel = iota
	// ReliableUnordered messages are delivered exactly once, in any order:
	// a retransmitted message does not hold back the others. At most
	// MessageLimits.MaxMessageSize bytes.
	ReliableUnordered
	// Unreliable messages may be lost or reordered, and arrive at most once
	// (except on a MessageNetwork link configured with LinkConfig.Duplicate,
	// which duplicates them on purpose so that tests can prove a protocol
	// tolerates it). Use it for state that is resent until acknowledged or
	// superseded, such as replication's mutations. At most
	// MessageConn.MaxUnreliableSize bytes.
	Unreliable

	// NumChannels is the number of channels; valid channels are below it.
	NumChannels = 3
)

// String returns the channel's name, such as "reliable-ordered".
func (c Channel) String() string {
	switch c {
	case ReliableOrdered:
		return "reliable-ordered"
	case ReliableUnordered:
		return "reliable-unordered"
	case Unreliable:
		return "unreliable"
	}
	return fmt.Sprintf("channel(%d)", uint8(c))
}

// Reliable reports whether messages on c are retransmitted until delivered.
func (c Channel) Reliable() bool { return c == ReliableOrdered || c == ReliableUnordered }

// Valid reports whether c is one of the defined channels.
func (c Channel) Valid() bool { return c < NumChannels }

// MessageConn is a connection that carries whole messages (byte strings) on
// three channels: [ReliableOrdered], [ReliableUnordered] and [Unreliable].
// It is the client/server transport under server-authoritative replication.
//
// It is shaped for a game loop that polls once per tick: Send queues and
// returns at once, Receive returns the next waiting message or reports that
// none is waiting. Every queue is bounded ([MessageLimits]): a reliable send
// queue that is full makes Send fail with ErrQueueFull; an unreliable
// message that finds its queue full is dropped and counted; a peer whose
// reliable messages overflow the receive queue is disconnected with
// ErrReceiveOverflow rather than buffered without bound.
//
// Implementations: [MessageNetworkConn] (the deterministic in-process
// [MessageNetwork]), the QUIC conn of package transport/quic and the
// WebSocket conn of package transport/websocket.
//
// All methods are safe for concurrent use, but Receive hands out a buffer
// that belongs to the conn until the next Receive, so a conn should have
// one receiving goroutine.
type MessageConn interface {
	// Send queues a copy of msg on channel ch and returns without waiting
	// for it to be sent or delivered. Errors:
	//   - ErrTooLarge (as a *SizeError) when msg is longer than the
	//     channel's limit: MessageLimits.MaxMessageSize for the reliable
	//     channels, MaxUnreliableSize for Unreliable;
	//   - ErrQueueFull when ch is reliable and its bounded send queue is
	//     full: the network or the peer is not keeping up. Nothing is
	//     queued; the caller decides whether to retry later or disconnect;
	//   - ErrInvalidChannel for an undefined channel;
	//   - after the conn closed, the error Err returns (it matches
	//     ErrClosed).
	// An unreliable message that finds the send queue full is dropped and
	// counted (ChannelStats.DroppedSendQueue) and Send returns nil: to the
	// sender, that is the same as a loss.
	Send(ch Channel, msg []byte) error

	// Receive returns the oldest waiting message of any channel, in arrival
	// order, or ok == false at once when none is waiting. msg belongs to the
	// conn until the next Receive call; copy it to keep it longer. Messages
	// that arrived before the peer closed the conn can still be received
	// after Done is closed; after a local Close, Receive reports none.
	Receive() (ch Channel, msg []byte, ok bool)

	// WaitReceive blocks until a message is waiting (it returns nil; read
	// it with Receive), ctx is done (it returns ctx.Err()) or the conn is
	// closed with nothing left to receive (it returns Err()). It is for
	// goroutine-based servers and tests; a game loop polls Receive.
	WaitReceive(ctx context.Context) error

	// LocalAddr returns this end's address (synthetic for memory conns).
	LocalAddr() netip.AddrPort
	// RemoteAddr returns the peer's address (synthetic for memory conns).
	RemoteAddr() netip.AddrPort

	// Stats returns the conn's counters.
	Stats() MessageStats

	// MaxUnreliableSize returns the largest message Send accepts on the
	// Unreliable channel. It is at most MessageLimits.MaxUnreliableSize and
	// may be smaller on a QUIC path that cannot carry that much.
	MaxUnreliableSize() int

	// Close closes the conn without a reason; see CloseWithReason.
	Close() error
	// CloseWithReason closes the conn and tells the peer why: the peer's
	// Err returns a *CloseError with Remote set and this Reason (truncated
	// to MaxReasonLength bytes). Messages not yet delivered are discarded,
	// as with QUIC: put a final word in the reason rather than in a
	// message sent just before. It returns nil. On a conn that is already
	// closed (by either side) it only discards the messages left to
	// receive.
	CloseWithReason(reason string) error

	// Done returns a channel that is closed when the conn closes, by either
	// side or by the network (timeout, overflow, protocol violation).
	Done() <-chan struct{}
	// Err returns nil while the conn is open, and afterwards why it closed:
	// a *CloseError, which matches ErrClosed with errors.Is, and also the
	// cause when there is one (ErrTimeout, ErrReceiveOverflow,
	// ErrProtocol, ErrRefused or a context error).
	Err() error
}

// Batcher is implemented by MessageConns that can send a burst of messages
// in fewer packets. Between Hold and Flush, Send queues as usual but hands
// nothing to the network; Flush hands everything over at once, packing the
// unreliable messages into as few datagrams as their size allows, so that a
// tick's messages share packets (and the packets' headers and
// acknowledgements) instead of each going out in one of its own.
//
// A game loop that sends a tick's messages from one goroutine calls Hold
// before them and Flush after; replicate.Server does this in SendTick. A
// conn without it sends each message as soon as it can. Hold and Flush
// change no delivery guarantee: messages keep their channel and, on
// ReliableOrdered, their order.
//
// The QUIC conn of package transport/quic implements it.
type Batcher interface {
	// Hold makes the conn keep what Send queues from now until Flush.
	Hold()
	// Flush ends the hold and hands what Send queued to the network.
	Flush()
}

// MessageListener accepts MessageConns from clients.
type MessageListener interface {
	// Accept waits for the next connection. It returns ctx.Err() when ctx
	// is done and ErrClosed after Close.
	Accept(ctx context.Context) (MessageConn, error)
	// Addr returns the address clients dial.
	Addr() netip.AddrPort
	// Close stops accepting and closes every conn the listener created,
	// accepted or not, with the reason "listener closed". Close is
	// idempotent.
	Close() error
}

// MessageStats counts one MessageConn's traffic since it was opened.
type MessageStats struct {
	// RTT is the smoothed round-trip time. QUIC measures it; a
	// MessageNetworkConn reports the sum of the configured one-way latencies.
	RTT time.Duration
	// Channels holds the counters of each channel, indexed by Channel.
	Channels [NumChannels]ChannelStats
	// PacketsLost counts packets the transport declared lost: for QUIC,
	// quic-go's count (it can go down when a packet declared lost arrives
	// late); for a MessageNetworkConn, the transmission attempts of this side's
	// messages dropped by LinkConfig.Loss.
	PacketsLost uint64
	// WirePacketsSent and WireBytesSent count the packets the transport
	// put on the network and their bytes, its own headers, acknowledgements
	// and retransmissions included (for QUIC: the UDP payloads; add the
	// UDP and IP headers, 28 bytes a packet over IPv4, for the link's
	// bytes); WirePacketsReceived and WireBytesReceived the same received.
	// Zero for a transport that does not know (MessageNetworkConn).
	WirePacketsSent, WireBytesSent         uint64
	WirePacketsReceived, WireBytesReceived uint64
}

// ChannelStats counts one channel's traffic on one MessageConn.
type ChannelStats struct {
	// Sent and SentBytes count the messages (and bytes) Send accepted (it
	// returned nil), including unreliable ones lost or dropped afterwards.
	Sent, SentBytes uint64
	// Received and ReceivedBytes count the messages (and bytes) placed in
	// the receive queue.
	Received, ReceivedBytes uint64
	// DroppedSendQueue counts, on a reliable channel, the Send calls that
	// failed with ErrQueueFull; on Unreliable, the messages dropped because
	// the send queue was full.
	DroppedSendQueue uint64
	// DroppedReceiveQueue counts unreliable messages dropped on arrival
	// because the receive queue held MessageLimits.UnreliableQueue of them.
	// (Reliable messages never drop: overflowing the receive queue closes
	// the conn.)
	DroppedReceiveQueue uint64
	// DroppedOversize counts Send calls that failed with ErrTooLarge; for
	// QUIC also unreliable messages the path could no longer carry when
	// their turn to be sent came, and received unreliable messages longer
	// than MessageLimits.MaxUnreliableSize, which are discarded.
	DroppedOversize uint64
	// DroppedMalformed counts received datagrams that did not parse (for
	// QUIC, a datagram whose packed messages overrun it): each is
	// discarded whole.
	DroppedMalformed uint64
}

// WithDefaults returns l with zero and negative fields replaced by their
// defaults and the byte caps raised to at least MaxMessageSize.
func (l MessageLimits) WithDefaults() MessageLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxMessageSize, DefaultMaxMessageSize)
	def(&l.MaxUnreliableSize, DefaultMaxUnreliableSize)
	def(&l.SendQueueMessages, DefaultSendQueueMessages)
	def(&l.SendQueueBytes, DefaultSendQueueBytes)
	def(&l.ReceiveQueueMessages, DefaultReceiveQueueMessages)
	def(&l.ReceiveQueueBytes, DefaultReceiveQueueBytes)
	def(&l.UnreliableQueue, DefaultUnreliableQueue)
	l.SendQueueBytes = max(l.SendQueueBytes, l.MaxMessageSize)
	l.ReceiveQueueBytes = max(l.ReceiveQueueBytes, l.MaxMessageSize)
	return l
}

// TruncateReason shortens a close reason to at most MaxReasonLength bytes
// without splitting a UTF-8 sequence, and replaces invalid UTF-8, so that a
// reason received from the network is safe to log.
func TruncateReason(r string) string {
	if len(r) > 4*MaxReasonLength { // bound the work on hostile input
		r = r[:4*MaxReasonLength]
	}
	r = strings.ToValidUTF8(r, "\uFFFD")
	if len(r) > MaxReasonLength {
		i := MaxReasonLength
		for i > 0 && !utf8.RuneStart(r[i]) {
			i--
		}
		r = r[:i]
	}
	return r
}
