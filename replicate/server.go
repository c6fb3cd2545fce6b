package replicate

// The Server: its construction, public API and connection table; Send
// runs the tick, whose steps live in the files that ARCHITECTURE.md
// ("replicate: design notes", Source files) names.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// ClientID identifies a client of a Server (assigned at connection, from 1).
type ClientID uint64

// ServerEventKind is the kind of a ServerEvent.
type ServerEventKind uint8

const (
	// ClientConnected: a client passed the protocol check and authentication.
	ClientConnected ServerEventKind = iota + 1
	// ClientRejected: a connection failed the protocol check or
	// authentication, found the server full, sent no hello within
	// ServerConfig.HelloTimeout, or was the oldest waiting for its hello
	// when MaxPending newer ones arrived.
	ClientRejected
	// ClientDisconnected: a connected client left or was disconnected.
	ClientDisconnected
	// ClientDesync: a client's checksum report of Tick differs from the
	// server's in Types (ServerConfig.ChecksumInterval).
	ClientDesync
	// ClientResync: the client is sent a resync of kind Resync at Tick
	// (Server.Resync, ResyncEntities, ResyncRNG, a desync, a client's
	// request); Reason says why.
	ClientResync
)

func (k ServerEventKind) String() string {
	switch k {
	case ClientConnected:
		return "client-connected"
	case ClientRejected:
		return "client-rejected"
	case ClientDisconnected:
		return "client-disconnected"
	case ClientDesync:
		return "client-desync"
	case ClientResync:
		return "client-resync"
	}
	return fmt.Sprintf("ServerEventKind(%d)", uint8(k))
}

// ServerEvent reports a client's connection state change.
type ServerEvent struct {
	Kind   ServerEventKind
	Client ClientID
	Reason string
	// Tick and Types (ClientDesync): the server tick checked and the
	// names of the checksum parts that differ (Part.Name).
	Tick  tick.Tick
	Types []string
	// Resync is the kind of a ClientResync.
	Resync ResyncKind
}

// ConnectionStats describes one client's connection as the server sees it
// (Server.Stats). The client's own counters are ClientCounters.
type ConnectionStats struct {
	// RTT is the connection's smoothed round-trip time; PacketsLost the
	// transport's count of lost packets (QUIC) or transmission attempts
	// (memory network), a measure of the link's loss.
	RTT         time.Duration
	PacketsLost uint64
	// BytesOut and BytesIn count message bytes sent to and received from
	// the client; OutPerSec and InPerSec are rates over the last second.
	BytesOut, BytesIn   uint64
	OutPerSec, InPerSec float64
	// Out and In break BytesOut and BytesIn down by what the messages
	// carry; MessagesOut breaks Out.Messages down by message type (those
	// sent at least once, in registration order: package predict's inputs
	// and input reports are message types).
	Out, In     ByteCounts
	MessagesOut []MessageCount
	// WirePacketsOut, WireBytesOut, WirePacketsIn and WireBytesIn are the
	// transport's packets and bytes to and from the client, its headers,
	// acknowledgements and retransmissions included (QUIC: UDP payloads;
	// add 28 bytes a packet for UDP and IPv4 headers; zero in memory).
	// They show what packing messages costs on the wire.
	WirePacketsOut, WireBytesOut, WirePacketsIn, WireBytesIn uint64

	Entities         int    // entities spawned on the client
	MutationMessages uint64 // mutation messages sent
	Resent           uint64 // entity mutations resent after a timeout
	Violations       uint64 // protocol violations counted
	// ChecksumsChecked counts the client's checksum reports compared
	// (ServerConfig.ChecksumInterval), Desyncs those that differed, and
	// ChecksumsUnchecked those not compared: the client does not see
	// everything, the tick's checksum is no longer kept, or the report
	// names a tick no later than one it reported already.
	ChecksumsChecked, ChecksumsUnchecked, Desyncs uint64
	// ResyncsDeferred counts desyncs not answered with a resync because
	// the client's resync budget (ServerConfig.ResyncRequestInterval) was
	// spent; a desync that lasts is resynced at a later report.
	ResyncsDeferred uint64
	// Resyncs counts the resyncs sent, ResyncKinds by kind.
	Resyncs     uint64
	ResyncKinds ResyncCounts
	// ResyncRequests counts the client's resync requests honoured
	// (Client.RequestResync), ResyncRequestsRefused those refused by the
	// client's resync budget (ServerConfig.ResyncRequestInterval).
	ResyncRequests, ResyncRequestsRefused uint64
	UpdateTick, AckedTick                 tick.Tick
	// RetainedBytes is the memory the server keeps for this client: its
	// view of each entity (32 B per entity slot: visibility, acks,
	// priority), in-flight records, buffers, queued updates and mapping
	// claims, which the server frees when the client leaves. The
	// transport's own buffers are not counted, nor what the server keeps
	// once for all clients (per-entity encodings). It is bounded even
	// when the client stops acknowledging.
	RetainedBytes int
}

// Server replicates a World to its clients: each tick (Send), one reliable,
// ordered, atomic update message per client with what changed in structure
// (spawns, despawns, inserted and removed components, entity mappings), and
// unreliable mutation messages with the latest values that changed, each
// acknowledged by the client and resent (latest value) when the ack does not
// come in time. Component values are encoded once per tick and shared by all
// clients. A Server is driven from one goroutine; AddConn and Serve may be
// called from others.
//
// Server orchestrates: its state is in parts (embedded below), each
// declared with the methods that keep its invariant in the file named
// beside it; the tick's steps read the parts and change them through
// those methods.
type Server struct {
	cfg   ServerConfig
	w     *ecs.World
	p     *Protocol
	log   *slog.Logger
	comps []boundComponent
	// onceTypes are the components replicated Once by their type
	// (WithMode): clients leave them out of checksums by type. Once by a
	// rule's Mode is per entity, and updates tell clients (appendInsert).
	onceTypes uint64
	rules     []resolvedRule
	rep       *ecs.Store[Replicated]
	now       time.Time
	evs       []ServerEvent
	// received: Receive ran since the last send phase.
	received bool
	// unmarkedChecked: warnUnmarked ran (once, with the first client).
	unmarkedChecked bool

	serverTicks                // the last tick sent and the world tick it saw (server.go)
	entityTable                // per-entity and per-client-and-entity state (state.go)
	worldChanges               // this tick's changes of the world (changes.go)
	encodings                  // values and blocks encoded once per tick (changes.go)
	segmenter                  // this tick's shared segments (segments.go)
	connTable                  // connections and clients (conns.go)
	messageQueues              // game messages both ways (messages.go)
	resourceTable              // replicated resources (resources.go)
	desync        desyncServer // checksums of report ticks (desync.go)
}

// serverTicks is the server tick of the last send and the world's change
// tick it saw. Invariant, kept by its methods (the only writers): tick
// only increases from one send to the next, and world changes after
// prevWorld are the next send's.
type serverTicks struct {
	tick      tick.Tick
	prevWorld uint64
}

// checkNext reports whether t may be the next tick sent (ErrTick if not).
func (st *serverTicks) checkNext(t tick.Tick) error {
	if !t.After(st.tick) {
		return fmt.Errorf("%w: tick %v, last sent %v", ErrTick, t, st.tick)
	}
	return nil
}

// advance starts the send of tick t, which checkNext accepted.
func (st *serverTicks) advance(t tick.Tick) { st.tick = t }

// sent notes that the send saw the world's changes up to world tick wt.
func (st *serverTicks) sent(wt uint64) { st.prevWorld = wt }

// NewServer returns a Server for cfg.World with cfg.Protocol (which is frozen:
// registering more types afterwards is an error).
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.World == nil || cfg.Protocol == nil {
		return nil, fmt.Errorf("%w: World and Protocol are required", ErrRegistered)
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	p := cfg.Protocol
	if err := p.checkRules(); err != nil {
		return nil, err
	}
	p.freeze()
	s := &Server{cfg: cfg, w: cfg.World, p: p, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for i, c := range p.comps {
		s.comps = append(s.comps, c.bind(s.w))
		if c.mode == Once {
			s.onceTypes |= 1 << uint(i)
		}
		if c.delta != nil {
			s.deltaMask |= 1 << uint(i)
		}
	}
	s.jn = newJournal(deltaWindow)
	s.rules = p.bindRules(s.w)
	s.bindResources()
	s.rep = ecs.Register[Replicated](s.w)
	s.inboxes = make([]msgQueue, len(p.msgs))
	s.observe(s.w)
	s.sent(s.w.Tick())
	s.now = cfg.Now()
	return s, nil
}

// Close stops observing the world and closes every client connection.
func (s *Server) Close() error {
	s.stopObserving()
	s.closeAll()
	return nil
}

// AddConn hands the server a new client connection (safe from any
// goroutine). The client must say hello (protocol check, token) before it
// gets anything.
func (s *Server) AddConn(conn transport.MessageConn) {
	s.handOver(conn)
}

// Serve accepts connections from l until ctx ends or l fails, handing each
// to AddConn. Run it in its own goroutine.
func (s *Server) Serve(ctx context.Context, l transport.MessageListener) error {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		s.AddConn(c)
	}
}

// Tick is the server tick of the last send phase (0 before the first).
func (s *Server) Tick() tick.Tick { return s.tick }

// Events returns and clears the queued connection events.
func (s *Server) Events() []ServerEvent {
	ev := s.evs
	s.evs = nil
	return ev
}

// Clients lists the connected (authenticated) clients in connection order.
func (s *Server) Clients() []ClientID {
	var ids []ClientID
	for _, c := range s.order {
		if c.authed {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// Stats returns a connected client's statistics.
func (s *Server) Stats(id ClientID) (ConnectionStats, error) {
	c := s.client(id)
	if c == nil {
		return ConnectionStats{}, ErrNotConnected
	}
	st := c.stats
	cs := c.conn.Stats()
	st.RTT, st.PacketsLost = cs.RTT, cs.PacketsLost
	st.WirePacketsOut, st.WireBytesOut = cs.WirePacketsSent, cs.WireBytesSent
	st.WirePacketsIn, st.WireBytesIn = cs.WirePacketsReceived, cs.WireBytesReceived
	for _, mc := range c.msgOut {
		if mc.Messages > 0 {
			st.MessagesOut = append(st.MessagesOut, mc)
		}
	}
	st.Entities = c.spawned
	st.UpdateTick = c.lastUpdate
	st.RetainedBytes = c.retained(len(s.ents))
	return st, nil
}

// Disconnect closes a client's connection with a reason.
func (s *Server) Disconnect(id ClientID, reason string) error {
	c := s.client(id)
	if c == nil {
		return ErrNotConnected
	}
	s.drop(c, reason)
	return nil
}

// MapClientEntity tells client id that server entity se is its predicted
// entity ce: when se reaches the client, the client adopts ce instead of
// spawning a new entity. A newer claim of se replaces the older one. A
// claim waits at most 10 s for se to reach the client, then it is
// dropped; at most 4,096 wait per client (more: ErrTooLarge).
func (s *Server) MapClientEntity(id ClientID, se, ce ecs.Entity) error {
	c := s.client(id)
	if c == nil {
		return ErrNotConnected
	}
	if !c.claims.add(se, ce, s.now) {
		return fmt.Errorf("%w: too many pending mappings", ErrTooLarge)
	}
	return nil
}

// Receive is the receive phase of a server frame: it accepts new
// connections and reads the clients' messages (hellos, acks, game
// messages), which the game then takes from its inboxes before simulating
// the tick. Calling it again before the send phase reads what arrived
// since.
func (s *Server) Receive() {
	s.now = s.cfg.Now()
	s.accept()
	s.receive()
	s.admitWaiting()
	s.received = true
}

// Send runs one whole server frame with the tick after the last one:
// Receive (unless it already ran since the last send) then SendTick. It
// is the convenience for loops that do not need the messages of this
// frame before simulating it; a game that reads client messages for tick
// F before simulating F calls Receive, simulates, then SendTick(F).
func (s *Server) Send() { _ = s.SendTick(s.tick + 1) }

// SendTick is the send phase of the server frame of tick t, the game's
// simulation tick: it sends each authenticated client its update and
// mutation messages for what changed in the world since the previous send
// (the values after simulating t, which a client takes as the server's
// state at the end of t), and the server messages queued since. It runs
// Receive first if that did not run since the last send. Ticks must
// increase from one send to the next (gaps are allowed) and the first is
// after 0: an older tick gives ErrTick and sends nothing. It advances the
// world's change tick.
func (s *Server) SendTick(t tick.Tick) error {
	if err := s.checkNext(t); err != nil {
		return err
	}
	if !s.received {
		s.Receive()
	}
	s.received = false
	s.advance(t)
	s.hold()
	wt := s.w.Tick()
	s.warnUnmarked()
	s.structural(t)
	s.valueChanges(t)
	s.encodings.begin(t)
	s.recordValues(t)
	for i := 0; i < len(s.order); i++ {
		c := s.order[i]
		c.active = false
		if c.authed && !c.gone {
			s.sendClient(c, t)
			c.active = !c.gone
		}
		if c.gone {
			i--
		}
	}
	s.mutateChanged(t)
	for _, c := range s.order {
		if c.active {
			s.finishClient(c, t)
		}
	}
	s.flushMessages()
	s.flush()
	s.recordChecksum(t)
	s.shrink()
	s.sent(wt)
	s.w.AdvanceTick()
	s.worldChanges.reset()
	return nil
}

// batcher returns conn as a transport.Batcher, or nil.
func batcher(conn transport.MessageConn) transport.Batcher {
	b, _ := conn.(transport.Batcher)
	return b
}

// hold makes the clients' conns keep the tick's messages until flush, which
// hands them to the network together (transport.Batcher): the tick's
// unreliable messages (mutations, forwarded inputs, reports) share a
// datagram, and its reliable ones go out with them.
func (s *Server) hold() {
	for _, c := range s.order {
		if c.batch != nil && !c.gone {
			c.batch.Hold()
		}
	}
}

// flush ends hold.
func (s *Server) flush() {
	for _, c := range s.order {
		if c.batch != nil {
			c.batch.Flush()
		}
	}
}

func (s *Server) event(ev ServerEvent) { s.evs = append(s.evs, ev) }

func (s *Server) drop(c *serverClient, reason string) {
	if !c.leave() {
		return
	}
	c.active = false
	if c.authed {
		s.freeSlot(c)
	}
	_ = c.conn.CloseWithReason(reason)
	s.remove(c)
	if c.authed {
		s.event(ServerEvent{Kind: ClientDisconnected, Client: c.id, Reason: reason})
	}
	s.log.Debug("replicate: client dropped", "client", c.id, "reason", reason)
}

func (s *Server) sendTo(c *serverClient, ch transport.Channel, b []byte) bool {
	return s.afterSend(c, ch, b[0], len(b), c.conn.Send(ch, b))
}

// afterSend accounts for an n-byte message that c's conn took (err nil) or
// refused: a refused reliable message drops the client.
func (s *Server) afterSend(c *serverClient, ch transport.Channel, kind byte, n int, err error) bool {
	if err != nil {
		switch {
		case errors.Is(err, transport.ErrQueueFull):
			s.drop(c, "not keeping up (send queue full)")
		case ch != transport.Unreliable:
			// A reliable message that cannot be sent leaves the client
			// behind for good (its state here assumes it was sent).
			s.drop(c, "send failed: "+err.Error())
		}
		return false
	}
	c.countOut(kind, n)
	return true
}
