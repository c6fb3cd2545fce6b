package transport

import (
	"log/slog"
	"time"
)

// The configuration of every transport: each config struct with its
// defaults. Zero values are usable configurations.
// Defaults applied to zero fields of a LinkConfig.
const (
	// DefaultReorderDelay is the extra delay given to a packet picked by
	// LinkConfig.Reorder when LinkConfig.ReorderDelay is zero.
	DefaultReorderDelay = 20 * time.Millisecond
	// DefaultQueueBytes is the bandwidth queue bound used when
	// LinkConfig.QueueBytes is zero.
	DefaultQueueBytes = 64 << 10
)

// LinkConfig describes the conditions on one direction of a link: what happens
// to a datagram between the moment it is sent and the moment it arrives. The
// zero value is a perfect link: no delay, no loss, unlimited bandwidth.
//
// A datagram goes through the conditions in this order: Down (and partitions)
// drop it; the bandwidth queue delays or drops it; Loss drops it; it is then
// delayed by Latency ± Jitter, plus ReorderDelay when Reorder picks it; and
// Duplicate may deliver a second copy with its own jitter.
//
// Probabilities are clamped to [0, 1]; NaN and negative values mean 0.
// Negative durations and sizes mean 0 (and so the default, where one exists).
type LinkConfig struct {
	// Latency is the one-way delay of every datagram.
	Latency time.Duration
	// Jitter adds a delay drawn uniformly from [-Jitter, +Jitter] to each
	// datagram (the total delay never goes below zero). Each datagram draws
	// independently, so jitter larger than the gap between sends reorders.
	Jitter time.Duration
	// Loss is the probability that a datagram is dropped.
	Loss float64
	// Duplicate is the probability that a datagram is delivered twice. The
	// copy gets its own jitter draw.
	Duplicate float64
	// Reorder is the probability that a datagram is held back by an extra
	// ReorderDelay, so that datagrams sent after it overtake it.
	Reorder float64
	// ReorderDelay is the extra delay of a datagram picked by Reorder.
	// Zero means DefaultReorderDelay.
	ReorderDelay time.Duration
	// BandwidthBytesPerSec caps the link's throughput, counting payload
	// bytes. A datagram waits until the link has finished serialising the
	// ones before it, then takes len(payload)/BandwidthBytesPerSec seconds
	// to serialise, and then travels with Latency. Zero means unlimited.
	BandwidthBytesPerSec int64
	// QueueBytes bounds the payload bytes waiting to be serialised when
	// BandwidthBytesPerSec is set; a datagram that would exceed it is
	// dropped (a full router buffer). Zero means DefaultQueueBytes.
	QueueBytes int64
	// Down drops every datagram, like a cut cable. Datagrams already in
	// flight are still delivered.
	Down bool
}

// UDPConfig configures ListenUDP. The zero value is a usable configuration.
type UDPConfig struct {
	// ReceiveQueue is the capacity, in datagrams, of the receive queue that
	// the background reader fills. Datagrams arriving while it is full are
	// dropped and counted in Stats.DroppedQueueFull. Zero means
	// DefaultReceiveQueue.
	ReceiveQueue int
	// Logger receives diagnostic messages, such as unexpected socket read
	// errors. Nil means silent.
	Logger *slog.Logger
}

// DefaultReceiveQueue is the default capacity, in datagrams, of a conn's
// receive queue.
const DefaultReceiveQueue = 1024

// PacketNetworkConfig configures a simulated PacketNetwork. The zero value is a usable
// configuration: seed 0, perfect links, default queue sizes, no logging.
type PacketNetworkConfig struct {
	// Seed seeds the random decisions (loss, duplication, reordering,
	// jitter). With the same seed and the same sends at the same (virtual)
	// times, a PacketNetwork delivers the same datagrams in the same order at the
	// same times. Each link direction draws from its own PCG generator
	// derived from Seed and the two addresses, so traffic on one link does
	// not change the fate of datagrams on another.
	Seed uint64
	// Default is the LinkConfig of every link not configured with SetLink.
	Default LinkConfig
	// ReceiveQueue is the capacity, in datagrams, of each PacketNetworkConn's receive
	// queue. Zero means DefaultReceiveQueue.
	ReceiveQueue int
	// MaxInFlight bounds the datagrams travelling through the network at
	// once; more are dropped and counted in LinkStats.DroppedQueue. Zero
	// means DefaultMaxInFlight.
	MaxInFlight int
	// Logger receives diagnostic messages. Nil means silent.
	Logger *slog.Logger
}

// DefaultMaxInFlight is the default limit on datagrams travelling through a
// PacketNetwork or a Proxy at once.
const DefaultMaxInFlight = 4096

// DefaultProxyMaxDatagram is the default ProxyConfig.MaxDatagramSize: an
// Ethernet MTU, enough for QUIC and any other protocol that probes the path.
const DefaultProxyMaxDatagram = 1500

// ProxyConfig configures a Proxy.
type ProxyConfig struct {
	// Listen is the UDP address clients send to. Empty means
	// "127.0.0.1:0" (a free loopback port; see Proxy.Addr).
	Listen string
	// Target is the UDP address ("host:port") datagrams are forwarded to.
	// Required.
	Target string
	// Upstream is the local UDP address the proxy sends to Target from, and
	// so the address Target sees and replies to. Empty means ":0" (a free
	// port on every interface; see Proxy.UpstreamAddr).
	Upstream string
	// Up conditions datagrams from the client to Target.
	Up LinkConfig
	// Down conditions datagrams from Target back to the client.
	Down LinkConfig
	// Seed seeds the random decisions of both directions.
	Seed uint64
	// MaxDatagramSize is the largest datagram forwarded; longer ones are
	// dropped and counted in ProxyStats.DroppedOversize. Zero means
	// DefaultProxyMaxDatagram.
	MaxDatagramSize int
	// MaxInFlight bounds the datagrams held by the proxy at once; more are
	// dropped and counted in LinkStats.DroppedQueue. Zero means
	// DefaultMaxInFlight.
	MaxInFlight int
	// Logger receives diagnostic messages. Nil means silent.
	Logger *slog.Logger
}

// ConditionConfig configures Condition.
type ConditionConfig struct {
	// Link conditions every datagram sent: latency, jitter, loss,
	// duplication, reordering, bandwidth. The zero value is a perfect link.
	Link LinkConfig
	// Seed seeds the link's random decisions.
	Seed uint64
	// MaxInFlight bounds the datagrams held back at once; more are dropped
	// and counted in LinkStats.DroppedQueue. Zero means DefaultMaxInFlight.
	MaxInFlight int
}

// Defaults of MessageNetworkConfig.
const (
	// DefaultMinRTO is the default MessageNetworkConfig.MinRTO: 10 ms,
	// a floor for near-zero-latency links (QUIC's timer granularity is
	// 1 ms; quic-go adds the peer's max_ack_delay, 25 ms by default, to
	// its probe timeout, but with traffic every tick it detects a loss
	// sooner, 9/8 RTT after sending, from the ack of a later packet).
	DefaultMinRTO = 10 * time.Millisecond
	// DefaultAcceptBacklog is the default number of connections a listener
	// holds for Accept.
	DefaultAcceptBacklog = 128
)

// MessageNetworkConfig configures a MessageNetwork. The zero value is a usable
// configuration: seed 0, perfect links, default limits, no logging.
type MessageNetworkConfig struct {
	// Seed seeds the random decisions (loss, jitter, duplication,
	// reordering). With the same seed and the same calls at the same
	// (virtual) times, a MessageNetwork delivers the same messages in the
	// same order at the same times. Each link direction draws from its own
	// generator derived from Seed and its two addresses.
	Seed uint64
	// Default is the LinkConfig of every link not configured with SetLink.
	Default LinkConfig
	// Limits bounds each conn's queues and messages.
	Limits MessageLimits
	// IdleTimeout is how long a connection survives a broken path (its two
	// ends partitioned, a direction Down or with Loss >= 1) before both
	// ends close with ErrTimeout. Zero means DefaultIdleTimeout; negative
	// means never.
	IdleTimeout time.Duration
	// MinRTO is the smallest retransmission timeout of reliable messages.
	// A transmission attempt lost to LinkConfig.Loss is retried after
	// QUIC's probe timeout (RFC 9002, 6.2.1) on the connection's current
	// conditions, smoothed_rtt + 4*rttvar: max(MinRTO, L1+L2 +
	// 2*(J1+J2)) for latencies L and jitters J of its two directions
	// (80 ms + 40 ms = 120 ms at 40 ms ± 10 ms each way). Each attempt
	// waits the same timeout (no exponential backoff: a connection with
	// steady traffic keeps receiving acks, which is how QUIC detects
	// those losses). Zero means DefaultMinRTO.
	MinRTO time.Duration
	// MaxInFlight bounds the unreliable messages travelling through the
	// network at once; more are dropped and counted in
	// LinkStats.DroppedQueue. (Reliable messages are bounded by each
	// conn's send queue.) Zero means DefaultMaxInFlight.
	MaxInFlight int
	// AcceptBacklog bounds the connections each listener holds for Accept;
	// a dial that finds the backlog full is refused. Zero means
	// DefaultAcceptBacklog.
	AcceptBacklog int
	// Logger receives diagnostic messages. Nil means silent.
	Logger *slog.Logger
}

// Defaults of MessageLimits and of the message networks.
const (
	// DefaultMaxMessageSize is the default limit on a reliable message: 1 MiB.
	DefaultMaxMessageSize = 1 << 20
	// DefaultMaxUnreliableSize is the default limit on an unreliable
	// message: the largest QUIC datagram payload that fits a 1200-byte UDP
	// datagram (RFC 9000's minimum path MTU) with a maximal short header
	// and authentication tag, so that it fits on any path QUIC works on.
	DefaultMaxUnreliableSize = 1160
	// DefaultSendQueueMessages is the default MessageLimits.SendQueueMessages.
	DefaultSendQueueMessages = 4096
	// DefaultSendQueueBytes is the default MessageLimits.SendQueueBytes: 8 MiB.
	DefaultSendQueueBytes = 8 << 20
	// DefaultReceiveQueueMessages is the default
	// MessageLimits.ReceiveQueueMessages.
	DefaultReceiveQueueMessages = 4096
	// DefaultReceiveQueueBytes is the default
	// MessageLimits.ReceiveQueueBytes: 8 MiB.
	DefaultReceiveQueueBytes = 8 << 20
	// DefaultUnreliableQueue is the default MessageLimits.UnreliableQueue.
	DefaultUnreliableQueue = 256
	// DefaultIdleTimeout is the default time after which a connection whose
	// peer cannot be reached is closed with ErrTimeout.
	DefaultIdleTimeout = 10 * time.Second
	// MaxReasonLength is the longest close reason sent to a peer, in bytes;
	// longer reasons are truncated.
	MaxReasonLength = 256
)

// MessageLimits bounds the memory one MessageConn may use. Zero and negative
// fields mean the default.
type MessageLimits struct {
	// MaxMessageSize is the largest message on the reliable channels.
	// Default DefaultMaxMessageSize. A peer that announces a longer message
	// is disconnected with ErrProtocol.
	MaxMessageSize int
	// MaxUnreliableSize is the largest message on the Unreliable channel.
	// Default DefaultMaxUnreliableSize. A QUIC conn also never exceeds
	// what its path can carry in one datagram.
	MaxUnreliableSize int
	// SendQueueMessages and SendQueueBytes bound the reliable messages
	// (both reliable channels together) that Send accepted and the conn
	// has not finished with: not yet handed to QUIC, or for a MessageNetworkConn
	// not yet delivered to the peer. Send fails with ErrQueueFull beyond
	// them. Defaults DefaultSendQueueMessages and DefaultSendQueueBytes;
	// SendQueueBytes is raised to MaxMessageSize if smaller.
	SendQueueMessages int
	SendQueueBytes    int
	// ReceiveQueueMessages and ReceiveQueueBytes bound the reliable
	// messages received and not yet returned by Receive (for QUIC,
	// including the buffers of messages still being read, which grow with
	// the bytes that arrived, not with the announced length). A reliable
	// message that would exceed them closes the conn with
	// ErrReceiveOverflow, and the peer is told so. Defaults DefaultReceiveQueueMessages and
	// DefaultReceiveQueueBytes; ReceiveQueueBytes is raised to
	// MaxMessageSize if smaller.
	ReceiveQueueMessages int
	ReceiveQueueBytes    int
	// UnreliableQueue bounds the unreliable messages waiting in the receive
	// queue, and for QUIC also in the send queue; more are dropped and
	// counted. Default DefaultUnreliableQueue.
	UnreliableQueue int
}
