package replicate

// The Client: its construction, connection, public API and the
// dispatch of received messages.

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// ClientState is a client's connection state.
type ClientState uint8

const (
	// Disconnected: no connection (initial, after a rejection or a disconnect).
	Disconnected ClientState = iota
	// Connecting: hello sent, waiting for the server's answer.
	Connecting
	// Connected: accepted; replication is flowing.
	Connected
)

func (s ClientState) String() string {
	return [...]string{"disconnected", "connecting", "connected"}[s]
}

// ClientEventKind is the kind of a ClientEvent.
type ClientEventKind uint8

const (
	// EventConnected: the server accepted the client.
	EventConnected ClientEventKind = iota + 1
	// EventRejected: the server refused the client (Reason says why).
	EventRejected
	// EventDisconnected: the connection ended; replicated entities were removed.
	EventDisconnected
	// EventDesync: the server found the client's checksum of Tick
	// different from its own in Types (ClientConfig.ChecksumInterval).
	EventDesync
	// EventResync: the client's replicated state (all of it, or the part
	// a resync of kind Resync replaces) was replaced by the server's at
	// Tick (Server.Resync, ResyncEntities, ResyncRNG); Reason says why.
	EventResync
)

// ClientEvent reports a change of the client's connection state.
type ClientEvent struct {
	Kind   ClientEventKind
	Reason string
	// Tick and Types (EventDesync): the server tick checked and the names
	// of the checksum parts that differ (Part.Name).
	Tick  tick.Tick
	Types []string
	// Resync is the kind of an EventResync.
	Resync ResyncKind
}

// ClientCounters counts what a Client received and sent (Client.Stats).
// The server's view of a client is ConnectionStats.
type ClientCounters struct {
	// BytesIn and BytesOut count message bytes received and sent.
	BytesIn, BytesOut uint64
	// Updates and Mutations count the update and mutation messages applied;
	// Stale the entities of mutation messages older than what the client
	// had; Buffered the messages held until their update arrived.
	Updates, Mutations, Stale, Buffered uint64
	// Malformed counts messages that did not decode; DroppedBuffered the
	// held or delivered messages dropped at their caps (MaxBuffered,
	// DefaultInboxMessages and DefaultInboxBytes); Unmatched the entity
	// mappings (Server.MapClientEntity) and adopt hooks
	// (ComponentHooks.Adopt) naming no free client entity.
	Malformed, DroppedBuffered, Unmatched uint64
	// Adopted counts the server entities that reached the client as an
	// entity it already had (a mapping or an adopt hook) instead of a
	// new one.
	Adopted uint64
	// ChecksumsSent counts the checksum reports sent
	// (ClientConfig.ChecksumInterval), ChecksumsChecked those the server
	// answered, and Desyncs those that differed.
	ChecksumsSent, ChecksumsChecked, Desyncs uint64
	// Resyncs counts the resyncs applied, ResyncKinds by kind, and
	// ResyncRequests the resync requests sent (Client.RequestResync).
	Resyncs        uint64
	ResyncKinds    ResyncCounts
	ResyncRequests uint64
	// DeltaMisses counts the mutation messages dropped (not acknowledged,
	// so resent absolute) because a delta in them named a baseline the
	// client no longer held.
	DeltaMisses uint64
}

// Client receives a server's replication into its World: it spawns an
// entity for each replicated server entity (or adopts a predicted one),
// applies updates atomically and in order, applies mutations once the
// update they depend on has arrived (newer values only), maps entity
// references from server to client entities, and delivers server messages.
type Client struct {
	cfg   ClientConfig
	w     *ecs.World
	p     *Protocol
	log   *slog.Logger
	comps []boundComponent
	rep   *ecs.Store[Replicated]
	// onceTypes are the components replicated Once by type (WithMode).
	onceTypes uint64
	// deltaMask: the components whose mutations may be deltas
	// (component.delta); jn the values received in the last ticks, their
	// baselines, keyed by record index and component (journal.go).
	deltaMask uint64
	jn        journal

	cliConn    // connection, state, events and counters
	cliOrder   // ordering: applied updates, held messages, acks, ticks
	cliRecords // server entity to client entity records (apply.go)
	cliScratch // buffers of one update or mutation message (apply.go)
	// replicated resources (resources.go)
	cliResources
	hooks   ClientHooks  // prediction hooks (hooks.go)
	desync  desyncClient // checksum reports (desync.go)
	resyncs cliResync    // a resync announced by the server (resync.go)

	hello helloWait // an unanswered hello (hellowait.go)
}

// cliConn is a client's connection and what it reports.
type cliConn struct {
	conn   transport.MessageConn
	state  ClientState
	id     ClientID
	err    error
	events []ClientEvent
	stats  ClientCounters
	out    []byte
}

// cliOrder puts what arrives in order: the last update applied, messages
// held until their update arrives, the parts of a large update, acks to
// send, each tick's completeness, and the server messages to deliver.
type cliOrder struct {
	applied tick.Tick
	hasUpd  bool
	buf     []buffered
	parts   updateParts
	acks    ackSet
	ticks   [64]tickTrack
	inboxes []msgQueue
}

// NewClient returns a Client for cfg.World (not yet connected).
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.World == nil || cfg.Protocol == nil {
		return nil, fmt.Errorf("%w: World and Protocol are required", ErrRegistered)
	}
	if len(cfg.Token) > maxTokenLen {
		return nil, fmt.Errorf("%w: token longer than %d bytes", ErrTooLarge, maxTokenLen)
	}
	cfg.setDefaults()
	p := cfg.Protocol
	if err := p.checkRules(); err != nil {
		return nil, err
	}
	p.freeze()
	c := &Client{cfg: cfg, w: cfg.World, p: p, log: cfg.Logger}
	c.bySrv, c.byCli, c.byIdx = map[ecs.Entity]int32{}, map[ecs.Entity]int32{}, map[uint32]int32{}
	c.refs.byRef = map[ecs.Entity][]refEntry{}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	for i, pc := range p.comps {
		c.comps = append(c.comps, pc.bind(c.w))
		if pc.mode == Once {
			c.onceTypes |= 1 << uint(i)
		}
		if pc.delta != nil {
			c.deltaMask |= 1 << uint(i)
		}
	}
	c.jn = newJournal(clientWindow)
	c.rep = ecs.Register[Replicated](c.w)
	c.resources()
	c.inboxes = make([]msgQueue, len(p.msgs))
	c.mapper.c = c
	c.rmapper.c = c
	return c, nil
}

// Connect starts the handshake over conn: the hello carries the protocol
// hash and the token. Update drives the rest.
func (c *Client) Connect(conn transport.MessageConn) error {
	if c.state != Disconnected {
		return fmt.Errorf("%w: already %v", ErrRegistered, c.state)
	}
	c.conn = conn
	c.state = Connecting
	c.err = nil
	c.hello = helloWait{sent: c.cfg.Now()}
	b := appendHello(c.out[:0], c.p.hash, c.cfg.Token)
	c.out = b
	return c.send(transport.ReliableOrdered, b)
}

// Hold makes the client's conn keep what the client sends from now until
// Flush, when the conn can pack a burst of messages into fewer packets
// (transport.Batcher; a no-op on other conns). A client frame that holds
// before Update and flushes after sending its input puts the frame's
// acknowledgements and input in one packet, halving the packets the
// server receives and so the acknowledgements it sends back.
// predict.ClientFrame does this.
func (c *Client) Hold() {
	if b, ok := c.conn.(transport.Batcher); ok {
		b.Hold()
	}
}

// Flush ends Hold: the conn sends what it kept, together.
func (c *Client) Flush() {
	if b, ok := c.conn.(transport.Batcher); ok {
		b.Flush()
	}
}

func (c *Client) send(ch transport.Channel, b []byte) error {
	if c.conn == nil {
		return ErrNotConnected
	}
	if err := c.conn.Send(ch, b); err != nil {
		return err
	}
	c.stats.BytesOut += uint64(len(b))
	return nil
}

// State is the connection state.
func (c *Client) State() ClientState { return c.state }

// ID is the client's id on the server (0 before Connected).
func (c *Client) ID() ClientID { return c.id }

// Err says why the client is disconnected (errors.Is ErrRejected or
// ErrProtocolMismatch after a rejection), nil while connected.
func (c *Client) Err() error { return c.err }

// Events returns and clears the queued events.
func (c *Client) Events() []ClientEvent {
	ev := c.events
	c.events = nil
	return ev
}

// Stats returns the client's counters.
func (c *Client) Stats() ClientCounters { return c.stats }

// UpdateTick is the server tick of the last update applied.
func (c *Client) UpdateTick() tick.Tick { return c.applied }

// ClientEntity returns the client entity replicating server entity e.
func (c *Client) ClientEntity(e ecs.Entity) (ecs.Entity, bool) {
	i, ok := c.bySrv[e]
	if !ok {
		return 0, false
	}
	return c.ents[i].client, true
}

// recordOf returns the record of client entity e.
func (c *Client) recordOf(e ecs.Entity) (*cliEnt, bool) {
	i, ok := c.byCli[e]
	if !ok {
		return nil, false
	}
	return &c.ents[i], true
}

// ServerEntity returns the server entity that client entity e replicates.
func (c *Client) ServerEntity(e ecs.Entity) (ecs.Entity, bool) {
	i, ok := c.byCli[e]
	if !ok {
		return 0, false
	}
	return c.ents[i].server, true
}

// Entities is the number of replicated entities on the client.
func (c *Client) Entities() int { return len(c.bySrv) }

// ConfirmHistory returns the newest server tick at which client entity e
// received authoritative data, and a mask of the 64 ticks up to it (bit i set:
// data at last-i).
func (c *Client) ConfirmHistory(e ecs.Entity) (last tick.Tick, mask uint64, ok bool) {
	i, ok := c.byCli[e]
	if !ok {
		return 0, 0, false
	}
	r := c.ents[i]
	return r.histTick, r.hist, true
}

// TickComplete reports whether the update and every mutation message of
// server tick t have arrived and been applied (for the last 64 ticks; needs
// the server's tick tracking, on by default).
func (c *Client) TickComplete(t tick.Tick) bool {
	tr := c.ticks[int(t)%len(c.ticks)]
	return tr.seen && tr.tick == t && tr.done
}

// Update receives the server's messages: the welcome or rejection, updates
// (applied at once), mutations (applied once their update is there, newer
// values only, then acknowledged) and server messages. Call it once per
// client frame.
func (c *Client) Update() {
	if c.conn == nil || c.state == Disconnected {
		return
	}
	n := 0
	for ; n < 1<<16; n++ {
		ch, msg, ok := c.conn.Receive()
		if !ok {
			break
		}
		c.stats.BytesIn += uint64(len(msg))
		c.handle(ch, msg)
		if c.state == Disconnected {
			return
		}
		c.reportChecksum()
	}
	c.received(n > 0)
	c.waitHello()
	if c.acks.repeat > 0 && c.state == Connected {
		b := appendAcks(c.out[:0], c.acks.newest, c.acks.n, c.acks.mask)
		c.out = b
		_ = c.send(transport.Unreliable, b)
		c.acks.repeat--
	}
	select {
	case <-c.conn.Done():
		reason := "connection closed"
		var ce *transport.CloseError
		if err := c.conn.Err(); errors.As(err, &ce) && ce.Reason != "" {
			reason = ce.Reason
		} else if err != nil {
			reason = err.Error()
		}
		var rejected error
		if code, text, ok := parseReject(reason); ok {
			reason = text
			rejected = fmt.Errorf("%w: %s", ErrRejected, text)
			if code == rejectProtocol {
				// The server says "protocol mismatch: client H, server H"
				// and what it registers; the sentinel says the first part
				// already, and the client names the first difference.
				rejected = fmt.Errorf("%w: %s", ErrProtocolMismatch, c.p.explainMismatch(strings.TrimPrefix(text, "protocol mismatch: ")))
			}
		}
		c.disconnected(reason, rejected)
	default:
	}
}

// Close ends the connection and removes the replicated entities.
func (c *Client) Close() error {
	if c.conn != nil {
		_ = c.conn.Close()
	}
	if c.state != Disconnected {
		c.disconnected("closed", nil)
	}
	return nil
}

func (c *Client) disconnected(reason string, err error) {
	kind := EventDisconnected
	if err != nil {
		kind = EventRejected
		c.err = err
	} else if c.err == nil {
		c.err = fmt.Errorf("%w: %s", ErrNotConnected, reason)
	}
	c.state = Disconnected
	c.events = append(c.events, ClientEvent{Kind: kind, Reason: reason})
	c.clearReplicated()
	c.buf, c.acks = c.buf[:0], ackSet{}
	c.resyncs = cliResync{msg: resyncMsg{entries: c.resyncs.msg.entries[:0]}}
	c.hasUpd, c.applied = false, 0
	c.ticks = [64]tickTrack{}
	c.parts.done()
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// clearReplicated despawns the replicated entities, in creation order,
// and removes the replicated resources.
func (c *Client) clearReplicated() {
	for _, o := range c.order {
		r := &c.ents[o.idx]
		if r.alive && r.born == o.born {
			_ = c.w.Despawn(r.client)
		}
	}
	clear(c.bySrv)
	clear(c.byCli)
	c.ents, c.free, c.order, c.dead = c.ents[:0], c.free[:0], c.order[:0], 0
	c.refs.reset()
	c.clearResources()
}

func (c *Client) handle(ch transport.Channel, msg []byte) {
	if len(msg) == 0 {
		c.stats.Malformed++
		return
	}
	switch msg[0] {
	case kindWelcome:
		id, _, err := readWelcome(msg[1:]) // the server's tick is not needed yet
		if err != nil || c.state != Connecting {
			c.stats.Malformed++
			return
		}
		c.id = id
		c.state = Connected
		c.events = append(c.events, ClientEvent{Kind: EventConnected})
	case kindUpdate, kindUpdatePart:
		if c.state != Connected {
			c.stats.Malformed++
			return
		}
		body, err := msg[1:], error(nil)
		if msg[0] == kindUpdate && c.parts.total != 0 {
			err = fmt.Errorf("%w: update inside the parts of another", errRange)
		} else if msg[0] == kindUpdatePart {
			var whole []byte
			if whole, err = c.parts.add(msg[1:], c.cfg.MaxUpdateBytes); err == nil && whole == nil {
				return // more parts to come
			}
			body = whole[min(1, len(whole)):]
		}
		if err == nil {
			c.beforeUpdate(body)
			err = c.applyUpdate(body)
		}
		if msg[0] == kindUpdatePart {
			c.parts.done()
		}
		if err != nil {
			c.stats.Malformed++
			c.log.Warn("replicate: malformed update from server", "err", err)
			c.disconnected("malformed update from server", nil)
			return
		}
		c.release()
	case kindMutations:
		c.mutations(ch, msg)
	case kindServerMsg:
		id, req, payload, err := readServerMsg(msg[1:])
		if err != nil {
			c.stats.Malformed++
			return
		}
		spec, ok := c.p.checkMessage(id, ServerToClient)
		if !ok {
			c.stats.Malformed++
			return
		}
		if req != 0 && !spec.independent && (!c.hasUpd || req.After(c.applied)) {
			c.hold(req, ch, msg)
			return
		}
		if !c.inboxes[id].push(0, payload, DefaultInboxMessages, DefaultInboxBytes) {
			c.stats.DroppedBuffered++
		}
	case kindVerdict:
		c.checksumVerdict(msg[1:])
	case kindResync:
		c.resyncMsg(msg[1:])
	default:
		c.stats.Malformed++
	}
}

type buffered struct {
	required tick.Tick
	ch       transport.Channel
	data     []byte
}

func (c *Client) hold(req tick.Tick, ch transport.Channel, msg []byte) {
	if len(c.buf) >= c.cfg.MaxBuffered {
		c.buf = c.buf[1:]
		c.stats.DroppedBuffered++
	}
	c.stats.Buffered++
	c.buf = append(c.buf, buffered{required: req, ch: ch, data: append([]byte(nil), msg...)})
}

// release handles held messages whose update has arrived, in arrival order.
func (c *Client) release() {
	k := 0
	held := c.buf
	c.buf = c.buf[len(c.buf):]
	for _, b := range held {
		if b.required.After(c.applied) {
			held[k] = b
			k++
			continue
		}
		c.handle(b.ch, b.data)
	}
	c.buf = append(held[:k], c.buf...)
}

type tickTrack struct {
	tick       tick.Tick
	n, got     int
	done, seen bool
	have       [4]uint64 // packet indices received
}
