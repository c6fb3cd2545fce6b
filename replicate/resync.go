package replicate

// Resync: the server sends a client the replicated state again and the
// client replaces its own with it, atomically with an update. Three kinds:
// full, partial (named entities) and RNG-only.
//
// Decision (full): the server forgets what it believes the client has
// (its view of every entity slot and resource, visibility kept) and marks
// it fresh, so the ordinary late-join path builds the update (in parts
// when large). A Resync message (kind 17) on the reliable-ordered channel
// names the tick of that update; the client clears its replicated state
// when it applies the update of that tick, within the same call, so the
// game never sees the state in between. Mutations sent before the resync
// are older than the update and count as stale.
//
// Decision (partial, RNG-only): the Resync message also carries the
// resync's scope (the component types replaced) and its entries: each
// entity replaced and the components of the scope the server has on it
// (or that the server has no such entity). The update of the same tick
// carries, for each entry, the values of those components (and every
// value of the entity the client has not acknowledged, so older
// mutations are stale as after any update); the client first removes the
// components of the scope the entry does not list, and despawns the
// entities the server does not have. Resources in the resync are resent
// (or their removal) in the update's resource section. Everything else on
// the client is left as it is. An RNG-only resync's scope is the RNG
// types (RNGState) and its entries every entity with one.

import (
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// ResyncKind is the kind of a resync.
type ResyncKind uint8

const (
	// ResyncFull replaces the client's whole replicated state with the
	// server's whole visible world (Server.Resync).
	ResyncFull ResyncKind = iota + 1
	// ResyncPartial replaces named entities only (Server.ResyncEntities):
	// their replicated components, their existence, and any resources
	// named with them.
	ResyncPartial
	// ResyncRNG replaces the RNG state only (Server.ResyncRNG): the
	// components and resources registered as RNGState, on every entity
	// that has one.
	ResyncRNG
)

func (k ResyncKind) String() string {
	switch k {
	case ResyncFull:
		return "full"
	case ResyncPartial:
		return "partial"
	case ResyncRNG:
		return "rng"
	}
	return fmt.Sprintf("ResyncKind(%d)", uint8(k))
}

// ResyncCounts counts resyncs by kind.
type ResyncCounts struct {
	Full, Partial, RNG uint64
}

// Total is the number of resyncs of every kind.
func (r ResyncCounts) Total() uint64 { return r.Full + r.Partial + r.RNG }

func (r *ResyncCounts) add(k ResyncKind) {
	switch k {
	case ResyncFull:
		r.Full++
	case ResyncPartial:
		r.Partial++
	case ResyncRNG:
		r.RNG++
	}
}

// RNGState marks a replicated component or resource type as RNG state (a
// random generator such as rng.Rand, or a struct holding one): it is in
// the scope of an RNG-only resync (Server.ResyncRNG), and a desync that
// names only RNG types is repaired by one (ServerConfig.ResyncOnDesync).
// The type rng.Rand itself is RNG state without the option. The mark is
// part of the protocol hash.
func RNGState() ComponentOption { return func(s *componentSpec) { s.rng = true } }

const (
	// maxResyncReason bounds the reason a Resync message carries.
	maxResyncReason = 256
	// maxResyncEntities bounds the entities a partial resync names (more:
	// a full resync instead).
	maxResyncEntities = 1 << 16
)

// clientResync is a client's pending resync on the server, and its
// resync history. Its fields are written in this file only (queueResync,
// startResync, desyncDetected, reportedClean, resyncBudget); sendClient
// reads forcing to send an update that is a resync even when empty.
type clientResync struct {
	resync  bool
	kind    ResyncKind
	reason  string
	ents    []ecs.Entity  // partial: the entities named
	resMask uint64        // partial: the resources named
	entries []resyncEntry // scratch of appendPartial
	forcing bool          // this tick's update is a resync: send it even if empty
	// escalate: the last resync was partial or RNG-only and no report
	// came back clean since: the next desync gets a full resync.
	escalate bool
	// lastAuto is when the server last granted a resync from the
	// client's resync budget (a request or a desync; hasAuto: it did).
	lastAuto time.Time
	hasAuto  bool
	// resyncTick is the tick of the last resync sent (hasResynced: one
	// was): a report of an earlier tick describes the state it replaced.
	resyncTick  tick.Tick
	hasResynced bool
	// unrepaired counts the resyncs sent since the client's last clean
	// checksum report (ServerConfig.MaxUnrepairedResyncs).
	unrepaired int
}

// reportedClean notes a clean checksum report of tick t: the next desync
// is answered by its own kind again, and if t is not before the last
// resync, that resync repaired the client.
func (r *clientResync) reportedClean(t tick.Tick) {
	r.escalate = false
	if !r.hasResynced || !t.Before(r.resyncTick) {
		r.unrepaired = 0
	}
}

// Resync makes the server send client id its whole visible world in the
// update of the next Send, as to a client that just joined (in parts if
// large), and the client replace its replicated state with it atomically:
// entities the server no longer has are despawned, values and resources
// restored. reason travels with it: ServerEvent ClientResync and ClientEvent
// EventResync carry it with the kind ResyncFull, and ConnectionStats and
// ClientCounters count resyncs by kind. Resyncs asked for before the same
// Send merge: two of the same kind make one (a partial one of both sets of
// entities), two of different kinds a full one.
func (s *Server) Resync(id ClientID, reason string) error {
	return s.queueResync(id, ResyncFull, nil, 0, reason)
}

// ResyncEntities makes the server send client id the replicated state of
// the server entities ents in the update of the next Send, and the client
// replace its copies of them, and only them, atomically with that update: each
// one's replicated components (those the server no longer replicates on
// it removed), and the entity itself (spawned if the client lost it,
// despawned if the server has no such entity or the client may not see
// it). Events and stats say ResyncPartial. A partial resync whose list
// would not fit one message (more than 65,536 entities, or over
// ServerConfig.MaxMessageSize) is sent as a full one.
func (s *Server) ResyncEntities(id ClientID, ents []ecs.Entity, reason string) error {
	return s.queueResync(id, ResyncPartial, ents, 0, reason)
}

// ResyncRNG makes the server send client id its RNG state (the components
// and resources registered as RNGState, or of type rng.Rand) in the
// update of the next Send, and the client replace its RNG state, and only
// that, with it atomically. Events and stats say ResyncRNG.
func (s *Server) ResyncRNG(id ClientID, reason string) error {
	return s.queueResync(id, ResyncRNG, nil, 0, reason)
}

func (s *Server) queueResync(id ClientID, kind ResyncKind, ents []ecs.Entity, res uint64, reason string) error {
	c := s.client(id)
	if c == nil || !c.authed || c.gone {
		return ErrNotConnected
	}
	if len(reason) > maxResyncReason {
		reason = reason[:maxResyncReason]
	}
	switch {
	case !c.resync:
		c.kind, c.ents, c.resMask = kind, append(c.ents[:0], ents...), res
	case c.kind != kind:
		c.kind = ResyncFull
	case kind == ResyncPartial:
		c.ents = append(c.ents, ents...)
		c.resMask |= res
	}
	if c.kind == ResyncPartial && len(c.ents) > maxResyncEntities {
		c.kind = ResyncFull
	}
	c.resync, c.reason = true, reason
	return nil
}

// desyncDetected answers a desync of c's report of tick t in parts ids.
// A report of a tick before c's last resync, or while one is queued,
// describes state that resync replaces: nothing more is done. Otherwise
// a client still desynced after MaxUnrepairedResyncs resyncs in a row is
// disconnected; and with ServerConfig.ResyncOnDesync the client is
// resynced (the kind chosen as ServerConfig.ResyncOnDesync says)
// when its resync budget allows, else the desync waits for a later
// report (ConnectionStats.ResyncsDeferred).
func (s *Server) desyncDetected(c *serverClient, t tick.Tick, ids []uint8, types []string) {
	if c.resync || c.hasResynced && t.Before(c.resyncTick) {
		return
	}
	if lim := s.cfg.MaxUnrepairedResyncs; lim > 0 && c.unrepaired >= lim {
		s.drop(c, fmt.Sprintf("desync persists after %d resyncs (tick %v: %v)", c.unrepaired, t, types))
		return
	}
	if !s.cfg.ResyncOnDesync {
		return
	}
	if !s.resyncBudget(c, false) {
		c.stats.ResyncsDeferred++
		return
	}
	kind, ents, res := s.resyncFor(c, ids)
	_ = s.queueResync(c.id, kind, ents, res, fmt.Sprintf("desync at tick %v: %v", t, types))
}

// resyncBudget reports whether c may be sent a resync the server decides
// on its own account (a client's request, a desync), and if so spends the
// budget: one such resync per ServerConfig.ResyncRequestInterval, for
// every cause together. A negative interval refuses every request; a
// desync then keeps DefaultResyncRequestInterval.
func (s *Server) resyncBudget(c *serverClient, request bool) bool {
	iv := s.cfg.ResyncRequestInterval
	if iv < 0 {
		if request {
			return false
		}
		iv = DefaultResyncRequestInterval
	}
	if c.hasAuto && s.now.Sub(c.lastAuto) < iv {
		return false
	}
	c.lastAuto, c.hasAuto = s.now, true
	return true
}

// resyncFor chooses the resync that repairs a desync in parts ids: full
// when the entities part differs, a partial or RNG-only resync just
// failed to repair the client, or no entity of the server has a
// differing component; RNG-only when every differing part is RNG state;
// otherwise partial, over every entity on the client with a differing
// component, and the differing resources.
func (s *Server) resyncFor(c *serverClient, ids []uint8) (ResyncKind, []ecs.Entity, uint64) {
	var comps, res uint64
	onlyRNG := true
	for _, id := range ids {
		switch {
		case id == 0:
			return ResyncFull, nil, 0
		case int(id) < resPartBase:
			comps |= 1 << uint(id-1)
			onlyRNG = onlyRNG && s.p.comps[id-1].rng
		default:
			res |= 1 << uint(int(id)-resPartBase)
			onlyRNG = onlyRNG && s.p.res[int(id)-resPartBase].rng
		}
	}
	if c.escalate {
		return ResyncFull, nil, 0
	}
	if onlyRNG {
		return ResyncRNG, nil, 0
	}
	var ents []ecs.Entity
	for _, idx := range s.list {
		se := &s.ents[idx]
		if se.mask&comps != 0 && s.onClient(c, int(idx)) {
			ents = append(ents, se.e)
		}
	}
	if comps != 0 && len(ents) == 0 {
		return ResyncFull, nil, 0
	}
	return ResyncPartial, ents, res
}

// onClient reports whether entity slot idx is spawned on c.
func (s *Server) onClient(c *serverClient, idx int) bool {
	ce := s.ce(c, idx)
	return ce.flags&ceSpawned != 0 && ce.gen == s.ents[idx].e.Generation()
}

// rngMasks returns the component and resource masks of the RNG types.
func (p *Protocol) rngMasks() (comps, res uint64) {
	for i, c := range p.comps {
		if c.rng {
			comps |= 1 << uint(i)
		}
	}
	for j, r := range p.res {
		if r.rng {
			res |= 1 << uint(j)
		}
	}
	return comps, res
}

// startResync, at the start of c's send of tick t, sends the Resync
// message of c's pending resync and prepares the update of t: a full
// resync forgets what c has; a partial or RNG-only one puts the state of
// its entries in the update's insertions and marks its resources unsent.
func (s *Server) startResync(c *serverClient, t tick.Tick) {
	c.forcing = false
	if !c.resync {
		return
	}
	c.resync = false
	kind := c.kind
	var b []byte
	if kind != ResyncFull {
		var ok bool
		if b, ok = s.appendPartial(c, t); !ok {
			kind = ResyncFull
		}
	}
	if kind == ResyncFull {
		for i := range s.ents {
			ce := s.ce(c, i)
			*ce = clientEnt{vis: ce.vis}
		}
		c.forgetSpawns()
		c.forgetResources()
		c.refresh()
		b = appendResync(s.scratch[:0], t, c.reason, ResyncFull, 0, nil)
	}
	c.forcing = true
	c.escalate = kind != ResyncFull
	s.scratch = b
	if !s.sendTo(c, transport.ReliableOrdered, b) {
		return
	}
	c.resyncTick, c.hasResynced = t, true
	c.unrepaired++
	c.stats.Resyncs++
	c.stats.ResyncKinds.add(kind)
	s.event(ServerEvent{Kind: ClientResync, Client: c.id, Tick: t, Reason: c.reason, Resync: kind})
}

func b2u8(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// resyncEntry is one entity of a partial or RNG-only resync: the
// components of the scope the server has on it, or gone.
type resyncEntry struct {
	e    ecs.Entity
	gone bool
	mask uint64
}

// appendPartial lays out c's partial or RNG-only Resync message of tick t
// and, when it fits a message (ok), adds the state of its entries to c's
// update of t.
func (s *Server) appendPartial(c *serverClient, t tick.Tick) (b []byte, ok bool) {
	rngComps, rngRes := s.p.rngMasks()
	scope, res := uint64(1)<<uint(len(s.comps))-1, c.resMask
	entries := c.entries[:0]
	if c.kind == ResyncRNG {
		scope, res = rngComps, rngRes
		for _, idx := range s.list {
			if s.ents[idx].mask&scope != 0 && s.onClient(c, int(idx)) {
				entries = append(entries, resyncEntry{e: s.ents[idx].e})
			}
		}
	} else {
		slices.Sort(c.ents)
		for _, e := range slices.Compact(c.ents) {
			entries = append(entries, resyncEntry{e: e})
		}
	}
	c.entries = entries
	for k := range entries {
		en := &entries[k]
		idx := int(en.e.Index())
		if idx >= len(s.ents) || !s.ents[idx].listed || s.ents[idx].e != en.e || !s.visible(c, idx) {
			en.gone = true
			continue
		}
		en.mask = s.ents[idx].mask & scope
	}
	b = appendResync(s.scratch[:0], t, c.reason, c.kind, scope, entries)
	if len(entries) > maxResyncEntities || len(b) > s.cfg.MaxMessageSize {
		return b, false
	}
	for _, en := range entries {
		idx := int(en.e.Index())
		if en.gone {
			continue
		}
		if !s.onClient(c, idx) {
			if c.kind == ResyncPartial {
				s.spawnOn(c, idx, t)
			}
			continue
		}
		// The values of the scope, and every value the client has not
		// acknowledged: mutations older than this update are stale.
		se, ce := &s.ents[idx], s.ce(c, idx)
		s.resolve(c, ce, idx)
		m := (en.mask | s.pendingMask(idx, ce)) & se.mask
		// A partial resync spawns the entity on a client that lost it.
		s.appendInsert(c, idx, m, c.kind == ResyncPartial)
		ce.ackedTick, ce.ackedPrev, ce.sentTick = t, t, t
	}
	c.fitResources(len(s.res))
	for r := res; r != 0; r &= r - 1 {
		j := bits.TrailingZeros64(r)
		if j >= len(s.res) {
			break
		}
		c.forceResource(j, s.resInfo[j].wants(c.id))
	}
	return b, true
}

// appendResync lays out a Resync message (kind 17): the tick and reason,
// then for a partial or RNG-only resync its kind, scope and entries.
func appendResync(dst []byte, t tick.Tick, reason string, kind ResyncKind, scope uint64, entries []resyncEntry) []byte {
	dst = append(dst, kindResync)
	dst = appendUvarint(dst, uint64(t))
	dst = bin.AppendBytes(dst, []byte(reason))
	if kind == ResyncFull {
		return dst
	}
	dst = append(dst, byte(kind))
	dst = appendUvarint(dst, scope)
	dst = appendUvarint(dst, uint64(len(entries)))
	for _, en := range entries {
		dst = appendEntity(dst, en.e)
		if en.gone {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		dst = appendUvarint(dst, en.mask)
	}
	return dst
}

// resyncMsg is a Resync message read back.
type resyncMsg struct {
	at      tick.Tick
	reason  string
	kind    ResyncKind
	scope   uint64
	entries []resyncEntry
}

// readResync reads the body of a Resync message into m (reusing its
// entries): the scope names registered components only (nComps), each
// entry's mask lies within the scope.
func readResync(body []byte, nComps int, m *resyncMsg) error {
	r := bin.NewReader(body)
	m.at = tick.Tick(r.Uvarint32())
	m.reason = string(r.LenBytes(maxResyncReason))
	m.kind, m.scope, m.entries = ResyncFull, 0, m.entries[:0]
	if r.Err() != nil || r.Len() == 0 {
		return r.End()
	}
	m.kind = ResyncKind(r.Byte())
	m.scope = r.Uvarint()
	if m.kind != ResyncPartial && m.kind != ResyncRNG || nComps < 64 && m.scope>>uint(nComps) != 0 {
		r.Fail(errRange)
	}
	n := r.Count(maxResyncEntities)
	for i := 0; i < n && r.Err() == nil; i++ {
		en := resyncEntry{e: readEntity(&r)}
		switch r.Byte() {
		case 0:
			en.gone = true
		case 1:
			en.mask = r.Uvarint()
			if en.mask&^m.scope != 0 {
				r.Fail(errRange)
			}
		default:
			r.Fail(errRange)
		}
		m.entries = append(m.entries, en)
	}
	return r.End()
}
