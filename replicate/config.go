package replicate

// Configuration of Server and Client, and their defaults.

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Defaults of ServerConfig: a zero field takes its default.
const (
	DefaultMaxClients         = 256
	DefaultMaxPending         = 64
	DefaultHelloTimeout       = 5 * time.Second
	DefaultMaxJoining         = 16
	DefaultJoinTimeout        = 10 * time.Second
	DefaultTickRate           = 60
	DefaultMaxMessagesPerTick = 256
	DefaultMaxBytesPerTick    = 64 << 10
	DefaultMaxViolations      = 32
	// DefaultMaxUpdateBacklog is the default ServerConfig.MaxUpdateBacklog:
	// 256 MiB, as the client's DefaultMaxUpdateBytes.
	DefaultMaxUpdateBacklog = 256 << 20
	// DefaultMaxUnrepairedResyncs is the default
	// ServerConfig.MaxUnrepairedResyncs.
	DefaultMaxUnrepairedResyncs = 3
)

// Defaults of ClientConfig: a zero field takes its default.
const (
	// DefaultMaxBuffered is the default ClientConfig.MaxBuffered.
	DefaultMaxBuffered = 1024
	// DefaultMaxUpdateBytes is the default ClientConfig.MaxUpdateBytes:
	// 256 MiB, a first update of several million entities.
	DefaultMaxUpdateBytes = 256 << 20
)

// Fixed caps of a client's inbox of each server message type (messages
// beyond them are dropped and counted in ClientCounters.DroppedBuffered).
const (
	DefaultInboxMessages = 4096
	DefaultInboxBytes    = 4 << 20
)

// ServerConfig configures a Server. Zero fields take the documented defaults.
type ServerConfig struct {
	// World holds the entities to replicate; Protocol lists the types.
	World    *ecs.World
	Protocol *Protocol
	// Authenticate checks a connecting client's token before anything is
	// replicated to it; a non-nil error rejects the client with the error's
	// text. Nil accepts every client whose protocol matches.
	Authenticate func(id ClientID, token []byte) error
	// HiddenByDefault makes entities invisible to a client until
	// SetVisible(client, entity, true). Default: visible.
	HiddenByDefault bool
	// Priority, if set, gives each client its own send priority of each
	// entity's mutations: it multiplies the entity's priority
	// (SetPriority) for that client. The usual one falls with the distance
	// to the client's focus (interest.Grid.Priority): near entities are
	// updated every tick, far ones every few ticks. A product of 1 or more
	// sends every change; below 1 accumulates, tick by tick, until it
	// reaches 1, so an entity is at most ceil(1/p) ticks stale and none
	// starves. Values that are not positive or NaN count as 1. It is
	// called for each changed entity and client, on the goroutine that
	// calls Send; clients then take no whole segments (every client visits
	// every changed entity: see BenchmarkServerSendPriority). Nil: the
	// entity's priority for every client.
	Priority func(client ClientID, e ecs.Entity) float32
	// BudgetPerTick, if positive, bounds the entity block bytes of each
	// client's mutation messages per tick (at least one block goes out a
	// tick, whatever its size). What does not fit waits and goes first
	// the next tick, in the order it waited (resends of lost messages,
	// then values held back longest), so with a budget of 1/k of what
	// changes a value is at most about k ticks stale and none starves.
	// Structure (spawns, despawns, inserts, removals) travels in the
	// updates and is never held back. As with Priority, clients then take
	// no whole segments. 0: no budget.
	BudgetPerTick int
	// NoDeltas sends every mutation absolute. By default a mutation of a
	// component with a fixed-size encoding (plain data, WithWireForm, a
	// FixedSizer codec such as quant.Codec) is sent as its fieldwise
	// change from the value the client acknowledged (delta.go,
	// journal.go): an unchanged field costs one bit. The server keeps the
	// values of the last 64 ticks for this, one copy for all clients
	// (at most 32 MiB), and nothing more per client; a client, those it
	// received in the last 96 ticks (at most 32 MiB). A baseline older
	// than 56 ticks (about a second at 60 Hz) is not used: the value goes
	// absolute.
	NoDeltas bool
	// NoTickTracking stops sending an (empty) mutation message on ticks
	// without mutations. Clients then cannot tell when all data of a tick
	// has arrived (Client.TickComplete), which client prediction needs.
	NoTickTracking bool
	// ChecksumInterval, when positive, makes the server keep its checksum
	// (Server.Checksum) of every tick that is a multiple of it, for the
	// last 16 such ticks, and check the clients' reports of those ticks
	// (ClientConfig.ChecksumInterval, the same value): a report that
	// differs raises a ClientDesync event naming the client, the tick and
	// the differing types, and the client is told (EventDesync). Only
	// clients that see every entity and resource are checked (no
	// SetVisible(false), HiddenByDefault or FilterResource); others'
	// reports are counted as unchecked. Default 0: off.
	ChecksumInterval int
	// ResyncOnDesync makes a desync detected by ChecksumInterval resync
	// the client, the reason naming the tick and types. The kind follows
	// the differing parts: RNG-only when they are all RNG state
	// (RNGState); partial, over every entity of the client with a
	// differing component type and the differing resources, when the
	// entities part is the same; full when it differs, when no server
	// entity has a differing type (the client has a component the server
	// has not), or when the client's previous resync was partial or
	// RNG-only and no report came back clean since.
	ResyncOnDesync bool
	// ResyncRequestInterval is each client's resync budget: the least
	// time between two resyncs the server sends a client on its own
	// account, whatever the cause (the client's requests,
	// Client.RequestResync, and desyncs with ResyncOnDesync together). A
	// request beyond it is refused and counted
	// (ConnectionStats.ResyncRequestsRefused); a desync beyond it waits
	// for a later report (ConnectionStats.ResyncsDeferred). Resyncs the
	// game asks for (Server.Resync, ResyncEntities, ResyncRNG) are not
	// limited. Negative refuses every request (desyncs then keep the
	// default interval). Default DefaultResyncRequestInterval (1 s).
	ResyncRequestInterval time.Duration
	// MaxUnrepairedResyncs disconnects a client whose checksum reports
	// (ChecksumInterval) still differ after this many resyncs in a row
	// with no clean report in between, the reason saying so ("desync
	// persists after N resyncs"): a client that lies about its checksums,
	// or cannot keep the server's state, would otherwise be resynced
	// forever. Reports of ticks before the last resync do not count.
	// Negative: never. Default DefaultMaxUnrepairedResyncs (3).
	MaxUnrepairedResyncs int
	// TickRate is the server's ticks per second (for timeouts). Default 60.
	TickRate int
	// MutationTimeout is how long a mutation message may go unacknowledged
	// before its entities' latest values are resent. Default: adaptive,
	// 1.5 round trips plus two ticks (at least 50 ms). Whatever the timeout,
	// a message unacknowledged for 248 ticks counts as lost.
	MutationTimeout time.Duration
	// MaxClients caps connected clients: those that passed the protocol
	// check and authentication. A client whose hello would exceed it is
	// rejected as full. Default 256.
	MaxClients int
	// MaxPending caps the connections that have not said hello yet,
	// counted apart from MaxClients (they hold no client slot). A new
	// connection beyond it closes the oldest pending one ("server
	// busy"), so connections that stay silent cannot keep an honest
	// client, which says hello within a round trip, from connecting.
	// Default 64.
	MaxPending int
	// HelloTimeout is how long a new connection may take to send its
	// hello; a connection still silent then is rejected ("hello
	// timeout"), one whose hello still waits for admission (MaxJoining)
	// as busy. Default 5 s.
	HelloTimeout time.Duration
	// MaxJoining caps the connected clients that have not proven
	// themselves yet: their hello was accepted, but no acknowledgement
	// has shown that their first update (the whole world they may see)
	// arrived. Each holds its entity states (32 B per entity) and its
	// queued first update (about the world's encoded size), so the cap
	// bounds what connections that join and vanish can pin. A client
	// whose hello passes beyond it waits, holding neither, and is
	// admitted (ClientConnected) when a joining client proves itself or
	// leaves; it is rejected as busy if that does not happen within
	// HelloTimeout. Default DefaultMaxJoining (16).
	MaxJoining int
	// JoinTimeout disconnects a joining client that has not acknowledged
	// anything this long after its first update was all handed to its
	// connection ("join timeout"). Default DefaultJoinTimeout (10 s).
	JoinTimeout time.Duration
	// MaxMessageSize is the largest reliable message the server sends: a
	// server message (MessageType.SendToClients) that would not fit is
	// refused with ErrTooLarge. Set it to the conns'
	// transport.MessageLimits.MaxMessageSize when they use a smaller one.
	// Updates larger than it (or than 64 KiB) travel in parts. At least
	// 1 KiB. Default transport.DefaultMaxMessageSize (1 MiB).
	MaxMessageSize int
	// MaxMessagesPerTick and MaxBytesPerTick are each client's own quota:
	// the messages (and bytes) read from one client per tick, and its
	// game messages waiting in the server's inboxes until
	// ReceiveFromClients takes them. Reading stops at either (the message
	// that crosses MaxBytesPerTick is still read); the rest waits in the
	// client's connection, whose bounded queue disconnects that client
	// alone if it keeps sending faster. What one client sends therefore
	// never delays or disconnects another, and the inboxes hold at most
	// MaxMessagesPerTick messages and MaxBytesPerTick bytes plus one
	// message per client. Messages of a type the game never reads count against
	// their sender's quota until it does. Defaults 256 and 64 KiB.
	MaxMessagesPerTick int
	MaxBytesPerTick    int
	// MaxUpdateBacklog caps the update bytes queued for one client and not
	// yet sent: an update larger than 64 KiB (a late joiner's first update
	// holds the whole world it may see) goes out in parts, at most 1 MiB per
	// tick, and the updates of later ticks queue behind it. A client whose
	// queue would exceed the cap is disconnected as not keeping up, so it
	// also bounds the size of one update. Default DefaultMaxUpdateBacklog.
	MaxUpdateBacklog int
	// MaxViolations is how many protocol violations (bad bytes, unknown
	// messages, references to entities it cannot see) a client may commit
	// per second before it is disconnected.
	// Default 32.
	MaxViolations int
	// Now is the server's clock for timeouts and rates. Default time.Now
	// (virtualised by testing/synctest).
	Now func() time.Time
	// Logger receives diagnostics. Nil is silent.
	Logger *slog.Logger
}

// minMessageSize is the least ServerConfig.MaxMessageSize.
const minMessageSize = 1 << 10

// setDefaults fills the zero fields of cfg with their defaults and checks
// the limits.
func (cfg *ServerConfig) setDefaults() error {
	if cfg.TickRate == 0 {
		cfg.TickRate = DefaultTickRate
	}
	if cfg.MaxClients == 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.MaxMessagesPerTick == 0 {
		cfg.MaxMessagesPerTick = DefaultMaxMessagesPerTick
	}
	if cfg.MaxPending == 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.HelloTimeout == 0 {
		cfg.HelloTimeout = DefaultHelloTimeout
	}
	if cfg.MaxJoining == 0 {
		cfg.MaxJoining = DefaultMaxJoining
	}
	if cfg.JoinTimeout == 0 {
		cfg.JoinTimeout = DefaultJoinTimeout
	}
	if cfg.MaxMessageSize == 0 {
		cfg.MaxMessageSize = transport.DefaultMaxMessageSize
	}
	if cfg.MaxBytesPerTick == 0 {
		cfg.MaxBytesPerTick = DefaultMaxBytesPerTick
	}
	if cfg.MaxViolations == 0 {
		cfg.MaxViolations = DefaultMaxViolations
	}
	if cfg.MaxUpdateBacklog == 0 {
		cfg.MaxUpdateBacklog = DefaultMaxUpdateBacklog
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ResyncRequestInterval == 0 {
		cfg.ResyncRequestInterval = DefaultResyncRequestInterval
	}
	if cfg.MaxUnrepairedResyncs == 0 {
		cfg.MaxUnrepairedResyncs = DefaultMaxUnrepairedResyncs
	}
	if cfg.TickRate < 1 || cfg.MaxClients < 1 || cfg.MaxPending < 1 || cfg.MaxJoining < 1 || cfg.JoinTimeout < 0 || cfg.HelloTimeout < 0 || cfg.MaxMessagesPerTick < 1 || cfg.MaxBytesPerTick < 1 || cfg.MaxViolations < 1 || cfg.MaxMessageSize < minMessageSize || cfg.MutationTimeout < 0 || cfg.MaxUpdateBacklog < 1 {
		return fmt.Errorf("%w: negative or zero limits in ServerConfig", ErrRegistered)
	}
	return nil
}

// ClientConfig configures a Client.
type ClientConfig struct {
	// World receives the replicated entities; Protocol must equal the server's.
	World    *ecs.World
	Protocol *Protocol
	// Token is sent to the server's Authenticate hook.
	Token []byte
	// TickComplete, if set, is called (during Update) for each server tick
	// whose update and every mutation message have arrived and been applied:
	// the signal a prediction layer waits for before comparing.
	TickComplete func(t tick.Tick)
	// MaxBuffered caps messages held until the update they depend on
	// arrives. Default DefaultMaxBuffered.
	MaxBuffered int
	// MaxUpdateBytes caps the size of one update (a late joiner's first
	// update holds the whole visible world; large updates arrive in parts
	// and are buffered until complete). A server that announces a larger
	// update is disconnected as malformed. Default DefaultMaxUpdateBytes.
	MaxUpdateBytes int
	// ChecksumInterval, when positive, makes the client report the
	// checksum of its replicated state (Client.Checksum) at every server
	// tick that is a multiple of it, once it has applied all of that tick
	// and nothing newer (tick tracking, on by default, is needed). It must
	// equal the server's ServerConfig.ChecksumInterval. The client must
	// not write replicated values itself; a prediction layer that holds
	// predicted values in the World supplies the parts of its types
	// itself (HoldChecksums, ReportChecksum: predict.Attach and
	// predict.NewClientFrame install it, summing the predicted types'
	// history at the report's tick). A value still being resent after a
	// loss, or held back by a priority below 1, can show as a desync at
	// the tick. Default 0: off.
	ChecksumInterval int
	// ResyncAfterSilence, when positive, makes a client that received
	// nothing from the server for at least this long ask for a full
	// resync (Client.RequestResync) as soon as something arrives again:
	// a network interruption. Servers with tick tracking (the default)
	// send every client a message each tick, so a silence of a few ticks
	// already means a broken path; a server with NoTickTracking may be
	// silent while nothing changes. Default 0: off.
	ResyncAfterSilence time.Duration
	// ResyncRequestInterval is how long an unanswered resync request
	// keeps the client from sending another. Default
	// DefaultResyncRequestInterval (1 s).
	ResyncRequestInterval time.Duration
	// Now is the client's clock for ResyncAfterSilence and
	// ResyncRequestInterval. Default time.Now (virtualised by
	// testing/synctest).
	Now func() time.Time
	// Logger receives diagnostics. Nil is silent.
	Logger *slog.Logger
}

// setDefaults fills the zero fields of cfg with their defaults.
func (cfg *ClientConfig) setDefaults() {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ResyncRequestInterval <= 0 {
		cfg.ResyncRequestInterval = DefaultResyncRequestInterval
	}
	if cfg.MaxBuffered == 0 {
		cfg.MaxBuffered = DefaultMaxBuffered
	}
	if cfg.MaxUpdateBytes <= 0 {
		cfg.MaxUpdateBytes = DefaultMaxUpdateBytes
	}
}
