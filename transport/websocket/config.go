package websocket

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/rewindgo/rewind/transport"
)

// Subprotocol is the WebSocket subprotocol of rewind's conns
// (Sec-WebSocket-Protocol); a listener refuses a client that does not
// offer it. It versions the framing, as the ALPN "rewind/2" does for QUIC
// (a subprotocol is an HTTP token: browsers refuse a "/" in it).
const Subprotocol = "rewind.ws.v1"

// Defaults of Config.
const (
	// DefaultHandshakeTimeout is the default Config.HandshakeTimeout.
	DefaultHandshakeTimeout = 5 * time.Second
	// DefaultPingInterval is the default Config.PingInterval.
	DefaultPingInterval = time.Second
	// DefaultUnreliableBacklog is the default Config.UnreliableBacklog:
	// 8 messages, about two ticks of a replication server's mutations at
	// 60 Hz.
	DefaultUnreliableBacklog = 8
	// DefaultMaxPending is the default Config.MaxPending.
	DefaultMaxPending = 64
	// DefaultCloseTimeout is the default Config.CloseTimeout.
	DefaultCloseTimeout = time.Second
)

// Config configures Dial, Listen and NewListener. The zero value is
// usable.
type Config struct {
	// Limits bounds each conn's queues and messages (see the package
	// documentation for what UnreliableQueue means here).
	Limits transport.MessageLimits
	// UnreliableBacklog bounds the Unreliable messages waiting to be
	// written while the socket is backed up; when a new one finds the
	// backlog full, the oldest waiting one is dropped and counted
	// (ChannelStats.DroppedSendQueue): the newest state wins. Zero means
	// DefaultUnreliableBacklog; it is capped at Limits.UnreliableQueue.
	UnreliableBacklog int
	// HandshakeTimeout bounds, on the listener, the wait for the client's
	// hello after the WebSocket upgrade, and in Dial the wait for the
	// server's welcome. Zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a conn (with transport.ErrTimeout) when nothing
	// has been heard from the peer for that long. Zero means
	// transport.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// PingInterval is how often each side sends a ping, which keeps an
	// idle conn alive and measures the RTT (MessageStats.RTT). Zero means
	// DefaultPingInterval; it is capped at IdleTimeout/3.
	PingInterval time.Duration
	// CloseTimeout bounds the WebSocket closing handshake of a local
	// close; then the TCP connection is dropped. Zero means
	// DefaultCloseTimeout.
	CloseTimeout time.Duration
	// AcceptBacklog bounds the conns a Listener holds for Accept; more
	// are closed with transport.ErrRefused. Zero means
	// transport.DefaultAcceptBacklog.
	AcceptBacklog int
	// MaxPending bounds the upgraded connections a Listener holds while
	// it waits for their hello; more upgrade requests are answered 503.
	// Zero means DefaultMaxPending.
	MaxPending int
	// MaxBufferedBytes bounds, for a Listener, the received bytes its
	// conns hold together beyond the first 64 KiB of each, as
	// transport/quic's does; a conn that needs more is closed with
	// transport.ErrReceiveOverflow (an unreliable message is dropped
	// instead). Zero means 64 MiB. Dialed conns have no shared cap.
	MaxBufferedBytes int
	// OriginPatterns are the host patterns (path.Match syntax) of the
	// pages a Listener accepts browser connections from, besides its own
	// host; see github.com/coder/websocket's AcceptOptions. Nil means the
	// listener's own host only, which is what a page served by the same
	// HTTP server needs.
	OriginPatterns []string
	// HTTPClient and Header are Dial's HTTP client (TLS settings, a
	// proxy) and extra headers of the upgrade request. Nil means
	// defaults. Both are ignored under GOOS=js, where the browser dials.
	HTTPClient *http.Client
	Header     http.Header
	// Logger receives diagnostic messages. Nil means silent.
	Logger *slog.Logger
}

const defaultMaxBufferedBytes = 64 << 20

func (c Config) withDefaults() Config {
	c.Limits = c.Limits.WithDefaults()
	if c.UnreliableBacklog <= 0 {
		c.UnreliableBacklog = DefaultUnreliableBacklog
	}
	c.UnreliableBacklog = min(c.UnreliableBacklog, c.Limits.UnreliableQueue)
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = transport.DefaultIdleTimeout
	}
	if c.PingInterval <= 0 {
		c.PingInterval = DefaultPingInterval
	}
	c.PingInterval = min(c.PingInterval, c.IdleTimeout/3)
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	if c.AcceptBacklog <= 0 {
		c.AcceptBacklog = transport.DefaultAcceptBacklog
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxBufferedBytes <= 0 {
		c.MaxBufferedBytes = defaultMaxBufferedBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
