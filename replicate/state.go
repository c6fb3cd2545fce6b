package replicate

// The server's replication state: per entity slot, per client and
// entity slot, and per client (grouped into parts by concern).

import (
	"slices"
	"time"
	"unsafe"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

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
	held     uint64    // components changed whose send interval is not due yet (WithSendEvery)
	prio     float32
	// The entity's mutation block of this tick, shared by all clients.
	blkStamp       tick.Tick
	blkMask        uint64
	blkOff, blkLen uint32
	blkBits        uint32    // the block body's length in bits (blkLen bytes hold them)
	blkBase        tick.Tick // the block's baseline (blkDelta: it has one)
	blkBase2       tick.Tick // its older baseline (= blkBase: none)
	blkDelta       bool
	// This tick's shared block (the components that changed this tick), its
	// segment, and the latest change tick of its other live components.
	shOff, shLen uint32
	shBits       uint32
	seg          int32
	others       tick.Tick
	hasOthers    bool
	// onceNew: the components replicated Once by rule changed this tick
	// (without a component inserted or removed): updates tell clients.
	onceNew bool
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

// clientEnt is a client's view of one entity slot (48 bytes).
type clientEnt struct {
	gen       uint32
	ackedTick tick.Tick
	sentTick  tick.Tick
	spawnTick tick.Tick // its last spawn on the client (shared delta blocks need it before their baseline)
	// pinTick and pinSeq are the first send after the last one
	// resolved, kept until its ack or loss is known: with a send every
	// tick and acks a round trip later, the last two sends are never
	// the acknowledged ones, and ackedTick (the baseline of deltas)
	// would stop moving.
	pinTick tick.Tick
	pinSeq  uint32
	// ackedPrev is the acknowledged tick before ackedTick: the client
	// holds the server's values at both (predicted deltas extrapolate
	// from the two).
	ackedPrev tick.Tick
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
	cePin      = 32 // pinSeq valid
)

// serverClient is the server's state of one connection, in parts by
// concern, each changed by the methods and steps of the files named
// beside it. The first part is the hot one, read for every changed entity
// of a tick: it stays first and together (BenchmarkServerSend with 64
// clients depends on it; the parts after it are read per tick or per
// message).
type serverClient struct {
	clientSend   // the tick's mutation messages (packing.go, segments.go, acks.go; spawn bookkeeping: visibility.go)
	clientLink   // identity, connection and admission (receive.go, conns.go)
	clientAcks   // messages awaiting acks, and resends (acks.go)
	clientUpdate // the update being built and the queued updates (update.go, parts.go)
	clientView   // visibility changes and priority deferrals (visibility.go)
	clientMeter  // statistics, rates and violations (state.go; counters bumped by the steps)
	// the resources the client was sent (resources.go)
	clientResources
	clientDesync // desync detection (desync.go)
	clientResync // a resync to send (resync.go)
}

// clientSend is the hot part of a client: its mutation messages of this
// tick and what the per-entity send loops read for every changed entity.
// Invariants: entRing[entStart:entEnd] (mod its power-of-two length)
// holds the entities of the records awaiting acks, in send order (acks.go
// grows and frees it); pkts[:nPkts] are this tick's messages, cur the
// record of the last (packing.go, segments.go); shown, newSpawns and the
// ceSpawned flags agree (markSpawned and its siblings, visibility.go);
// grp and col locate the client's column (entityTable).
type clientSend struct {
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
	wholeMsgs uint64     // messages sent as whole segments (tests)
	grp       *slotGroup // the group holding the client's entity states
	col       int        // the client's column in grp
	maxPkt    int        // the largest mutation message on its conn
	// deltaOK: the client holds every shown entity's values at this
	// tick's shared baseline, so it may take shared delta blocks
	// (chooseSharedBase); lastSpawn is the tick of its last spawn.
	deltaOK   bool
	lastSpawn tick.Tick
	spent     int // entity block bits written this tick (ServerConfig.BudgetPerTick)
	pkts      [][]byte
	// bw writes the open message, the last of pkts (open: there is one);
	// prev is the entity slot of its last block (-1: none yet).
	bw   bin.BitWriter
	prev int64
	open bool
}

// clientLink is a client's identity, connection and admission. Its
// lifecycle only moves forward: pending (waiting once its hello passed
// while MaxJoining clients join), then authed (fresh for its first
// tick), then proven at its first ack; gone is final. Its methods
// (receive.go: wait, admitLink, markProven, leave, takeFresh, refresh,
// joined, inboxed, taken) are the only writers of its fields but id
// (connTable.add); connTable counts clients by these states, so admit,
// proven and drop change both together.
type clientLink struct {
	id     ClientID
	conn   transport.MessageConn
	batch  transport.Batcher // conn, when it can pack a tick's messages (nil if not)
	authed bool
	fresh  bool // authorized this tick: gets everything visible
	gone   bool
	// Until authed (its hello was accepted; it then holds a slot), the
	// client is pending and is rejected if no hello came by helloBy, or
	// (waiting: its hello passed, MaxJoining clients are joining) if it
	// was not admitted by then.
	helloBy time.Time
	waiting bool
	// proven: the client acknowledged a mutation message, so its first
	// update arrived; until then it is joining, and is dropped JoinTimeout
	// after joinSent, when its first update was all handed to its conn.
	proven   bool
	joinSent time.Time
	// queued and queuedBytes: the client's game messages waiting in the
	// server's inboxes (its quota).
	queued, queuedBytes int
}

// clientAcks holds a client's mutation messages awaiting an ack (their
// entities are in clientSend.entRing) and the entities to resend.
// Invariants, kept by its methods (acks.go): recs is a ring of recLen
// records from recHead, oldest first, in send order; resend holds the
// entities found lost since the tick began, resend2 the ones being resent.
type clientAcks struct {
	recs    []sentRecord // ring, oldest first from recHead
	recHead int
	recLen  int
	ackRTT  time.Duration // smoothed time from sending a mutation message to its ack
	backoff uint          // timeout doublings after repeated losses
	resend  []uint32
	resend2 []uint32 // the other buffer, swapped every tick
}

// clientUpdate is a client's update of this tick, built in sections, and
// its queue of updates not sent yet. Invariants: each section's count
// (nMap, ...) is the number of its entries, all emptied at the start of
// sendClient and filled by update.go (appendInsert, spawnOn, despawnOn);
// backlog[backOff:] holds length-prefixed messages not sent yet
// (parts.go: sendUpdate, flushBacklog).
type clientUpdate struct {
	spawned    int // entities spawned on the client (markSpawned, visibility.go)
	lastUpdate tick.Tick
	claims     claimTable // MapClientEntity claims not sent yet (claims.go)

	secMap, secDesp, secRem, secIns []byte
	nMap, nDesp, nRem, nIns         int
	upd                             []byte
	// backlog holds update messages (parts of a large update, and the
	// updates after it) not sent yet, each length-prefixed; backOff is the
	// offset of the first unsent one.
	backlog []byte
	backOff int
}

// clientView holds a client's visibility changes for the next tick and the
// entities its priorities (or a full tick) deferred. Invariant, kept by
// its methods (visibility.go): visQueue is bounded (2^20), deferred holds
// this tick's deferrals, deferred2 last tick's being revisited.
type clientView struct {
	visQueue  []visChange
	deferred  []uint32
	deferred2 []uint32 // the other buffer, swapped every tick
}

// clientMeter is what the server measures of a client. Its methods (the
// only writers of its fields but stats, whose counters the steps bump)
// keep the byte counts and rates, and the violations of the current
// second (from violationStart).
type clientMeter struct {
	stats           ConnectionStats
	msgOut          []MessageCount // by message type id: server messages sent
	violations      int
	violationStart  time.Time
	rateStart       time.Time
	rateOut, rateIn uint64
}

type mapping struct {
	server, client ecs.Entity
}

// entityTable is the server's state per entity slot (ents, with the
// replicated ones listed) and per client and entity slot (groups).
//
// Invariants, kept by its methods below (the only code that grows, lists
// or unlists slots and lays out groups; the tick's steps read and update
// the states of slots in place): list holds each listed slot once, and
// ents[list[k]].pos == k; every group's table covers len(ents) slots, one
// column per member, and a member's grp and col say where its column is.
type entityTable struct {
	ents []srvEnt
	list []uint32
	// Per-client entity states, in groups of at most clientGroup
	// connected clients (slotGroup); a group's table holds exactly one
	// column per member, so the states follow the clients present.
	groups []*slotGroup
}

// slotGroup holds the entity states of up to clientGroup clients,
// entity-major: the states of entity slot i are tab[i*width :
// (i+1)*width], one per member in member order, so the members' states
// of a changed entity share cache lines (mutateChanged walks a group's
// members entity by entity). Invariant, kept by fit and relayout:
// len(tab) == width * the slots covered, and members[k].col == k.
type slotGroup struct {
	tab     []clientEnt
	width   int // len(members)
	members []*serverClient
}

// listEnt lists entity slot idx (grown, not listed) for entity e with its
// replicated components mask (once: of which replicated once), with no
// history of shared sends.
func (s *entityTable) listEnt(idx int, e ecs.Entity, mask, once uint64) {
	se := &s.ents[idx]
	se.e, se.mask, se.once, se.held = e, mask, once, 0
	se.listed = true
	se.hist = [2]histEntry{}
	se.pos = int32(len(s.list))
	s.list = append(s.list, uint32(idx))
}

// listed returns the state of e's slot if e is listed (replicated), else nil.
func (s *entityTable) listed(e ecs.Entity) *srvEnt {
	if i := int(e.Index()); i < len(s.ents) && s.ents[i].listed && s.ents[i].e == e {
		return &s.ents[i]
	}
	return nil
}

// unlist takes entity slot idx out of the list (its replicated entity is
// gone): the last listed slot takes its place.
func (s *entityTable) unlist(idx int) {
	se := &s.ents[idx]
	last := s.list[len(s.list)-1]
	s.list[se.pos] = last
	s.ents[last].pos = se.pos
	s.list = s.list[:len(s.list)-1]
	se.listed = false
	se.mask, se.once = 0, 0
}

// grow makes the table hold entity slot idx (new slots at priority 1,
// every group's table as long).
func (s *entityTable) grow(idx int) {
	if idx < len(s.ents) {
		return
	}
	for len(s.ents) <= idx {
		s.ents = append(s.ents, srvEnt{prio: 1})
	}
	for _, g := range s.groups {
		g.fit(len(s.ents))
	}
}

// ce returns client c's state of entity slot idx.
func (s *entityTable) ce(c *serverClient, idx int) *clientEnt { return c.ent(idx) }

// ent returns the client's state of entity slot idx, in its group's table.
func (c *clientSend) ent(idx int) *clientEnt {
	g := c.grp
	return &g.tab[idx*g.width+c.col]
}

// assignSlot gives c a column of entity states: in the fullest group
// with room, whose table is laid out again one column wider, or in a new
// group.
//
// Decision: a group's table has exactly one column per member, so the
// server's per-client state follows the clients present (a join or a
// departure lays out one group's table again: at most clientGroup
// columns, 25.6 MB at 100,000 entities), where one table doubling with
// the peak number of clients kept 32 B x entities x that peak for good.
func (s *entityTable) assignSlot(c *serverClient) {
	var g *slotGroup
	for _, o := range s.groups {
		if o.width < clientGroup && (g == nil || o.width > g.width) {
			g = o
		}
	}
	if g == nil {
		g = &slotGroup{}
		s.groups = append(s.groups, g)
	}
	g.relayout(len(s.ents), c, -1)
}

// freeSlot gives up c's column: its group's table is laid out again
// without it, and a group left empty is dropped.
func (s *entityTable) freeSlot(c *serverClient) {
	g := c.grp
	if g == nil || g.width == 0 {
		return
	}
	g.relayout(len(s.ents), nil, c.col)
	// Code still running for the departed client in this frame reads
	// and writes one scratch state (width 0) instead of a column.
	c.grp, c.col = &slotGroup{tab: make([]clientEnt, 1)}, 0
	if g.width == 0 {
		if i := slices.Index(s.groups, g); i >= 0 {
			s.groups = slices.Delete(s.groups, i, i+1)
		}
	}
}

// fit makes the group's table hold n entity slots (new ones zero).
func (g *slotGroup) fit(n int) {
	need := n * g.width
	if need <= len(g.tab) {
		return
	}
	old := len(g.tab)
	g.tab = slices.Grow(g.tab, need-old)[:need]
	clear(g.tab[old:])
}

// relayout lays out the group's table of n entity slots again with
// member add appended (a zero column), or without the member of column
// del (del >= 0), keeping the other members' states.
func (g *slotGroup) relayout(n int, add *serverClient, del int) {
	w := g.width
	nw := w + 1
	if del >= 0 {
		nw = w - 1
	}
	var nt []clientEnt
	if nw > 0 {
		nt = make([]clientEnt, n*nw)
		for i := range n {
			row, dst := g.tab[i*w:i*w+w], nt[i*nw:i*nw+nw]
			if del < 0 {
				copy(dst, row)
			} else {
				copy(dst[:del], row[:del])
				copy(dst[del:], row[del+1:])
			}
		}
	}
	g.tab, g.width = nt, nw
	if del >= 0 {
		g.members = slices.Delete(g.members, del, del+1)
		for k := del; k < len(g.members); k++ {
			g.members[k].col = k
		}
		return
	}
	add.grp, add.col = g, w
	g.members = append(g.members, add)
}

// countIn and countOut count a message of n bytes of the given kind (its
// first byte) received from and sent to the client.
func (m *clientMeter) countIn(kind byte, n int) {
	m.stats.BytesIn += uint64(n)
	m.stats.In.add(kind, n)
}

func (m *clientMeter) countOut(kind byte, n int) {
	m.stats.BytesOut += uint64(n)
	m.stats.Out.add(kind, n)
}

// countMessage counts a server message of type spec sent (n bytes, header
// included).
func (m *clientMeter) countMessage(spec *messageSpec, n int) {
	for len(m.msgOut) <= spec.id {
		m.msgOut = append(m.msgOut, MessageCount{})
	}
	mc := &m.msgOut[spec.id]
	mc.Name = spec.name
	mc.Messages++
	mc.Bytes += uint64(n)
}

// rates updates the byte rates once a second has passed since the last
// update.
func (m *clientMeter) rates(now time.Time) {
	if el := now.Sub(m.rateStart); el >= time.Second {
		m.stats.OutPerSec = float64(m.stats.BytesOut-m.rateOut) / el.Seconds()
		m.stats.InPerSec = float64(m.stats.BytesIn-m.rateIn) / el.Seconds()
		m.rateStart, m.rateOut, m.rateIn = now, m.stats.BytesOut, m.stats.BytesIn
	}
}

// violation counts a protocol violation at now and returns the count of
// the current second.
func (m *clientMeter) violation(now time.Time) int {
	m.stats.Violations++
	if now.Sub(m.violationStart) > time.Second {
		m.violationStart = now
		m.violations = 0
	}
	m.violations++
	return m.violations
}

// retained estimates the bytes of per-client replication state, with
// entity states for nEnts slots.
func (c *serverClient) retained(nEnts int) int {
	n := nEnts*int(unsafe.Sizeof(clientEnt{})) + cap(c.recs)*int(unsafe.Sizeof(sentRecord{})) + 4*cap(c.entRing)
	n += 4*(cap(c.resend)+cap(c.deferred)+cap(c.resend2)+cap(c.deferred2)+cap(c.slow)) + int(unsafe.Sizeof(visChange{}))*cap(c.visQueue) + c.claims.bytes()
	n += cap(c.secMap) + cap(c.secDesp) + cap(c.secRem) + cap(c.secIns) + cap(c.upd) + cap(c.backlog)
	for _, p := range c.pkts {
		n += cap(p)
	}
	n += 8*cap(c.shown) + 4*cap(c.newSpawns)
	return n + int(unsafe.Sizeof(*c)) + int(unsafe.Sizeof(*c.ackBits)) + int(unsafe.Sizeof(*c.whole))
}
