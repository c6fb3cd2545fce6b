package replicate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// ClientID identifies a client of a Server (assigned at connection, from 1).
type ClientID uint64

const (
	tickRing          = 1024 // server ticks whose world tick is remembered
	maxRecords        = 512  // mutation messages awaiting an ack, per client
	maxRecordEntities = 1 << 16
	maxMappings       = 4096
	maxPacketsPerTick = 255
	minMessageSize    = 1 << 10 // least ServerConfig.MaxMessageSize
	// wholeRing is the number of ticks whose whole-segment sends a client
	// remembers; mutation messages older than wholeRing-wholeMargin ticks are
	// treated as lost, so every live message's tick is remembered.
	wholeRing   = 256
	wholeMargin = 8
)

// wholeTick records the segments a client took whole at tick: segment j
// (bit j of mask) went out in message base + (the number of lower bits set).
type wholeTick struct {
	tick tick.Tick
	base uint32
	mask uint32
}

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
)

func (k ServerEventKind) String() string {
	switch k {
	case ClientConnected:
		return "client-connected"
	case ClientRejected:
		return "client-rejected"
	case ClientDisconnected:
		return "client-disconnected"
	}
	return fmt.Sprintf("ServerEventKind(%d)", uint8(k))
}

// ServerEvent reports a client's connection state change.
type ServerEvent struct {
	Kind   ServerEventKind
	Client ClientID
	Reason string
}

// ClientStats describes one client as seen by the server.
type ClientStats struct {
	// RTT is the connection's smoothed round-trip time; PacketsLost the
	// transport's count of lost packets (QUIC) or transmission attempts
	// (memory network), a measure of the link's loss.
	RTT         time.Duration
	PacketsLost uint64
	// BytesOut and BytesIn count message bytes sent to and received from
	// the client; OutPerSec and InPerSec are rates over the last second.
	BytesOut, BytesIn     uint64
	OutPerSec, InPerSec   float64
	Entities              int    // entities spawned on the client
	MutationMessages      uint64 // mutation messages sent
	Resent                uint64 // entity mutations resent after a timeout
	Violations            uint64 // protocol violations counted
	UpdateTick, AckedTick tick.Tick
	// RetainedBytes is the memory the server keeps for this client: its
	// view of each entity (visibility, acks, priority), in-flight records
	// and buffers. It is bounded even when the client stops acknowledging.
	RetainedBytes int
}

// srvEnt is the server's replication state of one entity slot.
type srvEnt struct {
	e      ecs.Entity
	mask   uint64 // replicated components
	once   uint64 // of which replicated only once
	listed bool
	pos    int32
	touch  tick.Tick // dedupe of structural processing
	// structAt is the tick of the entity's last spawn or structural change.
	structAt tick.Tick
	chg      tick.Tick // tick at which a value changed (dedupe)
	ins      uint64    // components inserted this tick
	rem      uint64    // components removed this tick
	prio     float32
	// The entity's mutation block of this tick, shared by all clients.
	blkStamp       tick.Tick
	blkMask        uint64
	blkOff, blkLen uint32
	// This tick's shared block (the components that changed this tick), its
	// segment, and the latest change tick of its other live components.
	shOff, shLen uint32
	seg          int32
	others       tick.Tick
	hasOthers    bool
	// hist holds the last two ticks at which the entity's shared block went
	// out in a segment, newest first: clients that took the segment whole
	// learn those sends from here (catchUp), not from their own state.
	hist [2]histEntry
}

// histEntry: at tick, the entity's shared block was in segment seg-1 (seg 0:
// no entry).
type histEntry struct {
	tick tick.Tick
	seg  int32
}

// clientEnt is a client's view of one entity slot (32 bytes).
type clientEnt struct {
	gen       uint32
	ackedTick tick.Tick
	sentTick  tick.Tick
	sentSeq   uint32
	// prevTick and prevSeq are the send before the last: its late ack still
	// counts (a resend after a timeout must not make the first send's ack
	// worthless, or a queue that delays acks keeps everything resending).
	prevTick tick.Tick
	prevSeq  uint32
	acc      float32
	vis      uint8 // 0 default, 1 visible, 2 hidden
	flags    uint8
}

const (
	ceSpawned  = 1
	ceResend   = 2
	ceDeferred = 4
	ceSeen     = 8  // sentSeq valid
	cePrev     = 16 // prevSeq valid
)

type sentRecord struct {
	seq    uint32
	tick   tick.Tick
	first  int // index in entRing (absolute count)
	n      int
	acked  bool
	sentAt time.Time
}

type serverClient struct {
	// The fields read for every changed entity come first, together.
	active   bool  // taking part in this tick's send
	seg      int32 // 1 + index of the segment whose message is open, or 0
	seq      uint32
	nPkts    int
	cur      *sentRecord
	entRing  []uint32 // power-of-two ring of entity slots of the records
	entStart int      // absolute index of entRing's oldest entry
	entEnd   int
	ackBits  *[ackWindow / 64]uint64
	slow     []uint32 // changed entities to visit after the segments
	whole    *[wholeRing]wholeTick
	// shown has a bit per entity slot spawned on the client before this
	// tick (newSpawns: spawned this tick, shown at the end of it).
	shown     []uint64
	newSpawns []uint32
	// dirty: since an irregularity (a lost message, a deferral for lack
	// of messages) the client may owe values older than its
	// acknowledged ticks; it clears once everything sent up to settle is
	// acknowledged.
	dirty     bool
	settle    tick.Tick
	wholeMsgs uint64 // messages sent as whole segments (tests)

	slot   int // column of the client in Server.cstate
	nEnts  int // entity slots covered (for RetainedBytes)
	maxPkt int
	id     ClientID
	conn   transport.MessageConn
	authed bool
	fresh  bool // authorized this tick: gets everything visible
	gone   bool

	// Until authed (its hello was accepted; it then holds a slot), the
	// client is pending and is rejected if no hello came by helloBy.
	helloBy time.Time
	// queued and queuedBytes: the client's game messages waiting in the
	// server's inboxes (its quota).
	queued, queuedBytes int

	spawned    int
	lastUpdate tick.Tick
	recs       []sentRecord // ring, oldest first from recHead
	recHead    int
	recLen     int
	ackRTT     time.Duration // smoothed time from sending a mutation message to its ack
	backoff    uint          // timeout doublings after repeated losses
	resend     []uint32
	deferred   []uint32
	resend2    []uint32 // the other buffer of each list, swapped every tick
	deferred2  []uint32
	visQueue   []visChange
	maps       []mapping

	secMap, secDesp, secRem, secIns []byte
	nMap, nDesp, nRem, nIns         int
	upd                             []byte
	pkts                            [][]byte
	// backlog holds update messages (parts of a large update, and the
	// updates after it) not sent yet, each length-prefixed; backOff is the
	// offset of the first unsent one.
	backlog []byte
	backOff int

	stats           ClientStats
	violations      int
	violationStart  time.Time
	rateStart       time.Time
	rateOut, rateIn uint64
}

type visChange struct {
	e   ecs.Entity
	vis uint8
}

type mapping struct {
	server, client ecs.Entity
}

type queuedMsg struct {
	spec *messageSpec
	to   Target
	off  int
	n    int
}

// Server replicates a World to its clients: each tick (Send), one reliable,
// ordered, atomic update message per client with what changed in structure
// (spawns, despawns, inserted and removed components, entity mappings), and
// unreliable mutation messages with the latest values that changed, each
// acknowledged by the client and resent (latest value) when the ack does not
// come in time. Component values are encoded once per tick and shared by all
// clients. A Server is driven from one goroutine; AddConn and Serve may be
// called from others.
type Server struct {
	cfg   ServerConfig
	w     *ecs.World
	p     *Protocol
	log   *slog.Logger
	comps []boundComponent
	rules []resolvedRule
	rep   *ecs.Store[Replicated]

	tick       tick.Tick
	worldTicks [tickRing]uint64
	prevWorld  uint64

	ents []srvEnt
	list []uint32
	// Per-client entity states, entity-major: the states of entity slot i
	// are cstate[i*slotCap : (i+1)*slotCap], one column per client slot, so
	// the clients' states of a changed entity share cache lines.
	cstate  []clientEnt
	slotCap int
	slotOf  []*serverClient
	cancel  func()
	touched []ecs.Entity

	spawnedNow   []uint32
	despawnedNow []ecs.Entity
	structNow    []uint32
	changedNow   []uint32
	shared       []uint32 // changed entities in this tick's segments
	unshared     []uint32 // changed entities every client visits
	segs         []segment
	noWhole      bool // no whole segments (tests compare both paths)
	// raised: an entity's priority was raised to 1 or more; what it held
	// back goes out at raiseSettle.
	raised      bool
	raiseSettle tick.Tick

	cache      []cacheEntry
	cacheBuf   []byte
	blockBuf   []byte
	compTicks  []tick.Tick // per entity slot and component: server tick of the last change
	cacheStamp tick.Tick

	mu       sync.Mutex
	newConns []transport.MessageConn

	clients map[ClientID]*serverClient
	order   []*serverClient
	nextID  ClientID
	pending int // clients in order that have not said hello

	inboxes []msgQueue
	out     []queuedMsg
	outBuf  []byte
	scratch []byte
	evs     []ServerEvent
	now     time.Time
}

type cacheEntry struct {
	stamp tick.Tick
	off   uint32
	n     uint32
}

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
	s := &Server{cfg: cfg, w: cfg.World, p: p, log: cfg.Logger, clients: map[ClientID]*serverClient{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, c := range p.comps {
		s.comps = append(s.comps, c.bind(s.w))
	}
	s.rules = p.bindRules(s.w)
	s.rep = ecs.Register[Replicated](s.w)
	s.inboxes = make([]msgQueue, len(p.msgs))
	s.cancel = s.w.Observe(func(ev ecs.Event) {
		s.touched = append(s.touched, ev.Entity)
	})
	// Entities that exist already.
	for e := range s.w.Entities() {
		s.touched = append(s.touched, e)
	}
	s.prevWorld = s.w.Tick()
	s.now = cfg.Now()
	return s, nil
}

// Close stops observing the world and closes every client connection.
func (s *Server) Close() error {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	for _, c := range s.order {
		_ = c.conn.Close()
	}
	s.mu.Lock()
	for _, c := range s.newConns {
		_ = c.Close()
	}
	s.newConns = nil
	s.mu.Unlock()
	return nil
}

// AddConn hands the server a new client connection (safe from any
// goroutine). The client must say hello (protocol check, token) before it
// gets anything.
func (s *Server) AddConn(conn transport.MessageConn) {
	s.mu.Lock()
	s.newConns = append(s.newConns, conn)
	s.mu.Unlock()
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

// Tick is the server tick of the last Send.
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
func (s *Server) Stats(id ClientID) (ClientStats, error) {
	c := s.clients[id]
	if c == nil {
		return ClientStats{}, ErrNotConnected
	}
	st := c.stats
	cs := c.conn.Stats()
	st.RTT, st.PacketsLost = cs.RTT, cs.PacketsLost
	st.Entities = c.spawned
	st.UpdateTick = c.lastUpdate
	c.nEnts = len(s.ents)
	st.RetainedBytes = c.retained()
	return st, nil
}

// Disconnect closes a client's connection with a reason.
func (s *Server) Disconnect(id ClientID, reason string) error {
	c := s.clients[id]
	if c == nil {
		return ErrNotConnected
	}
	s.drop(c, reason)
	return nil
}

// SetVisible shows or hides entity e to client id from the next Send. An
// entity that becomes visible is sent whole; one that becomes hidden is
// despawned on that client.
func (s *Server) SetVisible(id ClientID, e ecs.Entity, visible bool) error {
	c := s.clients[id]
	if c == nil {
		return ErrNotConnected
	}
	v := uint8(2)
	if visible {
		v = 1
	}
	if len(c.visQueue) >= 1<<20 {
		return fmt.Errorf("%w: visibility queue full", ErrTooLarge)
	}
	c.visQueue = append(c.visQueue, visChange{e: e, vis: v})
	return nil
}

// SetPriority sets the send priority of entity e's mutations (default 1):
// changes are sent when priority × ticks since the last send reaches 1, so
// 0.25 sends at most every 4th tick; low priorities never starve.
func (s *Server) SetPriority(e ecs.Entity, priority float32) {
	if priority <= 0 || math.IsNaN(float64(priority)) {
		priority = 1
	}
	idx := int(e.Index())
	s.grow(idx)
	if s.ents[idx].prio < 1 && priority >= 1 {
		// Values the entity's priority held back go out next tick: no
		// client takes whole segments until that tick is acknowledged.
		s.raised, s.raiseSettle = true, s.tick+1
	}
	s.ents[idx].prio = priority
}

// MapClientEntity tells client id that server entity se is its predicted
// entity ce: when se reaches the client, the client adopts ce instead of
// spawning a new entity.
func (s *Server) MapClientEntity(id ClientID, se, ce ecs.Entity) error {
	c := s.clients[id]
	if c == nil {
		return ErrNotConnected
	}
	if len(c.maps) >= maxMappings {
		return fmt.Errorf("%w: too many pending mappings", ErrTooLarge)
	}
	c.maps = append(c.maps, mapping{server: se, client: ce})
	return nil
}

func (s *Server) grow(idx int) {
	for len(s.ents) <= idx {
		s.ents = append(s.ents, srvEnt{prio: 1})
		s.cstate = append(s.cstate, make([]clientEnt, s.slotCap)...)
	}
}

// ce returns client c's state of entity slot idx.
func (s *Server) ce(c *serverClient, idx int) *clientEnt {
	return &s.cstate[idx*s.slotCap+c.slot]
}

// assignSlot gives c a column of cstate, widening the table when full.
func (s *Server) assignSlot(c *serverClient) {
	for k, o := range s.slotOf {
		if o == nil {
			s.slotOf[k], c.slot = c, k
			return
		}
	}
	old := s.slotCap
	n := max(4, 2*old)
	ns := make([]clientEnt, len(s.ents)*n)
	for i := range s.ents {
		copy(ns[i*n:i*n+old], s.cstate[i*old:i*old+old])
	}
	s.cstate, s.slotCap = ns, n
	s.slotOf = append(s.slotOf, make([]*serverClient, n-old)...)
	s.slotOf[old], c.slot = c, old
}

// freeSlot clears c's column for the next client.
func (s *Server) freeSlot(c *serverClient) {
	for i := range s.ents {
		s.cstate[i*s.slotCap+c.slot] = clientEnt{}
	}
	s.slotOf[c.slot] = nil
}

func (s *Server) event(ev ServerEvent) { s.evs = append(s.evs, ev) }

func (s *Server) drop(c *serverClient, reason string) {
	if c.gone {
		return
	}
	c.gone = true
	c.active = false
	if c.authed {
		s.freeSlot(c)
	} else {
		s.pending--
	}
	_ = c.conn.CloseWithReason(reason)
	delete(s.clients, c.id)
	for i, o := range s.order {
		if o == c {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	if c.authed {
		s.event(ServerEvent{Kind: ClientDisconnected, Client: c.id, Reason: reason})
	}
	s.log.Debug("replicate: client dropped", "client", c.id, "reason", reason)
}

func (s *Server) violation(c *serverClient, what string) {
	c.stats.Violations++
	if s.now.Sub(c.violationStart) > time.Second {
		c.violationStart = s.now
		c.violations = 0
	}
	c.violations++
	s.log.Debug("replicate: client violation", "client", c.id, "what", what)
	if c.violations > s.cfg.MaxViolations {
		s.drop(c, "protocol violations: "+what)
	}
}

func (s *Server) queueMessage(spec *messageSpec, to Target, payload []byte) error {
	if len(s.out) >= 1<<16 {
		return fmt.Errorf("%w: outgoing message queue full", ErrTooLarge)
	}
	if err := s.checkMessageSize(spec, to, len(payload)); err != nil {
		return err
	}
	off := len(s.outBuf)
	s.outBuf = append(s.outBuf, payload...)
	s.out = append(s.out, queuedMsg{spec: spec, to: to, off: off, n: len(payload)})
	return nil
}

// checkMessageSize refuses a server message that would not fit the channel
// of a client it is sent to: its header (kind, type id, update tick) and
// payload must fit MaxMessageSize on the reliable channels, and the
// unreliable limit of every targeted connected client on Unreliable.
func (s *Server) checkMessageSize(spec *messageSpec, to Target, n int) error {
	size := 1 + uvarintLen(uint64(spec.id)) + binary.MaxVarintLen32 + n
	limit := s.cfg.MaxMessageSize
	if spec.ch == transport.Unreliable {
		limit = transport.DefaultMaxUnreliableSize
		first := true
		for _, c := range s.order {
			if c.authed && !c.gone && to.includes(c.id) {
				if m := c.conn.MaxUnreliableSize(); first || m < limit {
					limit, first = m, false
				}
			}
		}
	}
	if size > limit {
		return fmt.Errorf("%w: server message %s of %d bytes (%d with its header) over the %v limit of %d bytes: %w",
			ErrTooLarge, spec.name, n, size, spec.ch, limit, &transport.SizeError{Channel: spec.ch, Size: size, Limit: limit})
	}
	return nil
}

// uvarintLen is the length of v's uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func (s *Server) inbox(id int) *msgQueue { return &s.inboxes[id] }

// accept moves new connections into the client table.
func (s *Server) accept() {
	s.mu.Lock()
	pend := s.newConns
	s.newConns = nil
	s.mu.Unlock()
	for _, conn := range pend {
		if s.pending >= s.cfg.MaxPending {
			for _, o := range s.order { // the oldest pending connection
				if !o.authed {
					s.reject(o, rejectFull, fmt.Sprintf("server busy: %d connections waiting for their hello", s.cfg.MaxPending))
					break
				}
			}
		}
		s.nextID++
		c := &serverClient{id: s.nextID, conn: conn, violationStart: s.now, rateStart: s.now, helloBy: s.now.Add(s.cfg.HelloTimeout)}
		s.clients[c.id] = c
		s.order = append(s.order, c)
		s.pending++
	}
}

// receive reads each client's messages (at most MaxMessagesPerTick).
func (s *Server) receive() {
	for i := 0; i < len(s.order); i++ {
		c := s.order[i]
		select {
		case <-c.conn.Done():
			s.drop(c, "connection closed")
			i--
			continue
		default:
		}
		for n, read := 0, 0; s.quotaLeft(c, n, read); n++ {
			ch, msg, ok := c.conn.Receive()
			if !ok {
				break
			}
			read += len(msg)
			c.stats.BytesIn += uint64(len(msg))
			s.handle(c, ch, msg)
		}
		if !c.authed && !c.gone && !s.now.Before(c.helloBy) {
			s.reject(c, rejectTimeout, fmt.Sprintf("hello timeout: no hello within %v", s.cfg.HelloTimeout))
		}
		if c.gone {
			i--
		}
	}
}

func (s *Server) handle(c *serverClient, ch transport.Channel, msg []byte) {
	if len(msg) == 0 {
		s.violation(c, "empty message")
		return
	}
	r := reader{b: msg[1:]}
	switch msg[0] {
	case kindHello:
		if c.authed {
			s.violation(c, "second hello")
			return
		}
		ver := r.uvarint()
		hash := r.u64()
		token := r.bytes(maxTokenLen)
		if r.end() != nil {
			s.reject(c, rejectVersion, "malformed hello")
			return
		}
		if ver != wireVersion {
			s.reject(c, rejectVersion, fmt.Sprintf("wire version %d, server speaks %d", ver, wireVersion))
			return
		}
		if hash != s.p.hash {
			s.reject(c, rejectProtocol, fmt.Sprintf("protocol mismatch: client %016x, server %016x", hash, s.p.hash))
			return
		}
		if s.cfg.Authenticate != nil {
			if err := s.cfg.Authenticate(c.id, token); err != nil {
				s.reject(c, rejectAuth, "authentication failed: "+err.Error())
				return
			}
		}
		if s.authed() >= s.cfg.MaxClients {
			s.reject(c, rejectFull, "server full")
			return
		}
		c.ackBits, c.whole = new([ackWindow / 64]uint64), new([wholeRing]wholeTick)
		s.assignSlot(c)
		s.pending--
		c.authed, c.fresh = true, true
		b := append(s.scratch[:0], kindWelcome)
		b = binary.AppendUvarint(b, uint64(c.id))
		b = binary.AppendUvarint(b, uint64(s.tick))
		s.scratch = b
		s.sendTo(c, transport.ReliableOrdered, b)
		s.event(ServerEvent{Kind: ClientConnected, Client: c.id})
	case kindAcks:
		if !c.authed {
			s.violation(c, "acks before hello")
			return
		}
		n := r.count(maxAcks)
		for i := 0; i < n; i++ {
			s.ack(c, r.u32())
		}
		if r.end() != nil {
			s.violation(c, "malformed acks")
		}
	case kindClientMsg:
		if !c.authed {
			s.violation(c, "message before hello")
			return
		}
		id := int(r.uvarint())
		if r.err != nil {
			s.violation(c, "malformed message header")
			return
		}
		spec, ok := s.p.checkMessage(id, ClientToServer)
		if !ok {
			s.violation(c, "unknown message type")
			return
		}
		if ch != spec.ch && !(spec.ch == transport.Unreliable) {
			// Reliable types must arrive on their channel.
			s.violation(c, "message on the wrong channel")
			return
		}
		if err := s.checkClientMessage(c, id, r.b); err != nil {
			s.violation(c, err.Error())
			return
		}
		s.inboxes[id].add(c.id, r.b)
		c.queued++
		c.queuedBytes += len(r.b)
	default:
		s.violation(c, "unknown message kind")
	}
}

// quotaLeft reports whether more may be read from c this tick, having read
// n messages of read bytes: its per-tick quota and its quota of messages
// waiting in the inboxes both have room.
func (s *Server) quotaLeft(c *serverClient, n, read int) bool {
	return !c.gone && n < s.cfg.MaxMessagesPerTick && read < s.cfg.MaxBytesPerTick &&
		c.queued < s.cfg.MaxMessagesPerTick && c.queuedBytes < s.cfg.MaxBytesPerTick
}

// unqueued gives a message taken from an inbox back to its sender's quota.
func (s *Server) unqueued(m rawMessage) {
	if c := s.clients[m.client]; c != nil {
		c.queued--
		c.queuedBytes -= len(m.data)
	}
}

// authed counts the connected clients (those past their hello).
func (s *Server) authed() int { return len(s.order) - s.pending }

// checkClientMessage decodes a client message to validate it (the typed
// decode happens again when the game reads it).
func (s *Server) checkClientMessage(c *serverClient, id int, payload []byte) error {
	m := &clientRefMapper{s: s, c: c}
	if err := s.p.msgs[id].validate(payload, m); err != nil {
		return err
	}
	if m.bad {
		return errors.New("message refers to an entity the client cannot see")
	}
	return nil
}

// reject refuses a client. The reason travels in the connection's close
// reason (messages queued before a close may be discarded), prefixed with
// the code: "reject/1 protocol mismatch: ...".
func (s *Server) reject(c *serverClient, code byte, reason string) {
	s.event(ServerEvent{Kind: ClientRejected, Client: c.id, Reason: reason})
	s.drop(c, fmt.Sprintf("reject/%d %s", code, reason))
}

func (s *Server) sendTo(c *serverClient, ch transport.Channel, b []byte) bool {
	return s.afterSend(c, ch, len(b), c.conn.Send(ch, b))
}

// afterSend accounts for an n-byte message that c's conn took (err nil) or
// refused: a refused reliable message drops the client.
func (s *Server) afterSend(c *serverClient, ch transport.Channel, n int, err error) bool {
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
	c.stats.BytesOut += uint64(n)
	return true
}

// clientRefMapper checks that entity references in a client's message are
// entities spawned on that client. The zero Entity (none: an empty
// reference) is valid data and maps to itself.
type clientRefMapper struct {
	s   *Server
	c   *serverClient
	bad bool
}

func (m *clientRefMapper) MapEntity(e ecs.Entity) ecs.Entity {
	if e.IsZero() {
		return e
	}
	idx := int(e.Index())
	if idx >= len(m.s.ents) {
		m.bad = true
		return 0
	}
	if ce := m.s.ce(m.c, idx); ce.flags&ceSpawned == 0 || ce.gen != e.Generation() {
		m.bad = true
		return 0
	}
	return e
}
