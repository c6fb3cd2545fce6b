package replicate

// Desync detection: a client reports the checksum of its replicated state
// at a server tick every ChecksumInterval ticks; the server compares it
// with its own checksum of that tick and answers with the differing types.
//
// Decision: the server keeps the checksums (total and parts) of its last
// checksumRing report ticks, computed in the send phase of those ticks
// only, so a report costs the server no world scan of its own and a
// client cannot make it compute anything. Parts travel as small ids
// (partID) rather than names: a report of a world with a few types is a
// few dozen bytes. The client reports tick T once it has applied all of
// T and nothing newer (the newest tick it has seen is T and T is
// complete), which is the state Server.Checksum describes.

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/internal/parts"
	"github.com/rewindgo/rewind/internal/typename"
	"github.com/rewindgo/rewind/internal/xxh64"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

const (
	// checksumRing is the number of report ticks whose checksums the
	// server keeps: reports of older ticks are not checked.
	checksumRing = 16
	// resPartBase is the part id of the first resource: part 0 is
	// EntitiesPart, 1+i component i (at most 64), resPartBase+j resource j.
	resPartBase = 1 + 64
	// maxReportParts bounds the parts of a report or verdict.
	maxReportParts = resPartBase + 64
)

// idPart is one checksum part under its id.
type idPart struct {
	id  uint8
	sum uint64
}

// serverSum is the server's checksum of one report tick.
type serverSum struct {
	tick  tick.Tick
	ok    bool
	sum   uint64
	parts []idPart
}

// desyncServer is the server's side of desync detection.
type desyncServer struct {
	sums    [checksumRing]serverSum
	scratch []Part
	diff    []uint8
}

// clientDesync is a client's desync state on the server.
type clientDesync struct {
	// filtered: the client was shown less than the whole world
	// (SetVisible false); its reports are not checked.
	filtered bool
}

// desyncClient is the client's side of desync detection.
type desyncClient struct {
	reported tick.Tick
	scratch  []Part
	ids      []idPart
	// hold, when set, holds reports for a checksum source (HoldChecksums).
	hold func(t tick.Tick)
	held []heldReport
}

// partIDs appends the id of each part that stateSummer.sum appends for
// the same state, in the same order.
func partIDs(comps []boundComponent, res []boundResource, sums []Part, out []idPart) []idPart {
	k := 0
	next := func(id int) {
		out = append(out, idPart{id: uint8(id), sum: sums[k].Sum})
		k++
	}
	next(0)
	for i, c := range comps {
		if c.info().mode != Once {
			next(1 + i)
		}
	}
	for j, r := range res {
		if present, _ := r.state(); present && r.info().mode != Once {
			next(resPartBase + j)
		}
	}
	return out
}

// partName is the name of part id.
func partName(comps []boundComponent, res []boundResource, id uint8) string {
	switch {
	case id == 0:
		return EntitiesPart
	case int(id) < resPartBase && int(id)-1 < len(comps):
		return comps[id-1].info().name
	case int(id) >= resPartBase && int(id)-resPartBase < len(res):
		return "resource " + res[int(id)-resPartBase].info().name
	}
	return fmt.Sprintf("part %d", id)
}

// appendChecksumReport lays out a ChecksumReport message (kind 4).
func appendChecksumReport(dst []byte, t tick.Tick, sum uint64, parts []idPart) []byte {
	dst = append(dst, kindChecksum)
	dst = appendUvarint(dst, uint64(t))
	dst = binary.LittleEndian.AppendUint64(dst, sum)
	dst = appendUvarint(dst, uint64(len(parts)))
	for _, p := range parts {
		dst = appendUvarint(dst, uint64(p.id))
		dst = binary.LittleEndian.AppendUint64(dst, p.sum)
	}
	return dst
}

// readChecksumReport reads the body of a ChecksumReport: part ids must be
// strictly ascending and below maxReportParts.
func readChecksumReport(body []byte, out []idPart) (t tick.Tick, sum uint64, parts []idPart, err error) {
	r := bin.NewReader(body)
	t = tick.Tick(r.Uvarint32())
	sum = r.Uint64()
	n := r.Count(maxReportParts)
	parts = out[:0]
	for i := 0; i < n && r.Err() == nil; i++ {
		id := r.Uvarint()
		s := r.Uint64()
		if id >= maxReportParts || (len(parts) > 0 && uint8(id) <= parts[len(parts)-1].id) {
			r.Fail(errRange)
			break
		}
		parts = append(parts, idPart{id: uint8(id), sum: s})
	}
	return t, sum, parts, r.End()
}

// appendChecksumVerdict lays out a ChecksumVerdict message (kind 16).
func appendChecksumVerdict(dst []byte, t tick.Tick, differ []uint8) []byte {
	dst = append(dst, kindVerdict)
	dst = appendUvarint(dst, uint64(t))
	dst = appendUvarint(dst, uint64(len(differ)))
	for _, id := range differ {
		dst = appendUvarint(dst, uint64(id))
	}
	return dst
}

// readChecksumVerdict reads the body of a ChecksumVerdict.
func readChecksumVerdict(body []byte, out []uint8) (t tick.Tick, differ []uint8, err error) {
	r := bin.NewReader(body)
	t = tick.Tick(r.Uvarint32())
	n := r.Count(maxReportParts)
	differ = out[:0]
	for i := 0; i < n && r.Err() == nil; i++ {
		id := r.Uvarint()
		if id >= maxReportParts || (len(differ) > 0 && uint8(id) <= differ[len(differ)-1]) {
			r.Fail(errRange)
			break
		}
		differ = append(differ, uint8(id))
	}
	return t, differ, r.End()
}

// recordChecksum keeps the server's checksum of tick t when t is a report
// tick (send phase, after the tick's messages went out).
func (s *Server) recordChecksum(t tick.Tick) {
	n := s.cfg.ChecksumInterval
	if n <= 0 || uint64(t)%uint64(n) != 0 {
		return
	}
	d := &s.desync
	e := &d.sums[(uint64(t)/uint64(n))%checksumRing]
	var sum uint64
	sum, d.scratch = s.Checksum(d.scratch[:0])
	e.tick, e.ok, e.sum = t, true, sum
	e.parts = partIDs(s.comps, s.res, d.scratch, e.parts[:0])
}

// reportTick reports whether t is a checksum report tick.
func (s *Server) reportTick(t tick.Tick) bool {
	n := s.cfg.ChecksumInterval
	return n > 0 && uint64(t)%uint64(n) == 0
}

// checkable reports whether c's reports can be checked: it sees every
// entity and resource.
func (s *Server) checkable(c *serverClient) bool {
	if s.cfg.HiddenByDefault || c.filtered {
		return false
	}
	for _, ri := range s.resInfo {
		if ri.filter != nil {
			return false
		}
	}
	return true
}

// checksumReport handles a client's ChecksumReport.
func (s *Server) checksumReport(c *serverClient, body []byte) {
	var buf [16]idPart
	t, sum, parts, err := readChecksumReport(body, buf[:0])
	if err != nil {
		s.violation(c, "malformed checksum report")
		return
	}
	n := s.cfg.ChecksumInterval
	if n <= 0 || !s.checkable(c) {
		c.stats.ChecksumsUnchecked++
		return
	}
	e := &s.desync.sums[(uint64(t)/uint64(n))%checksumRing]
	if !e.ok || e.tick != t {
		c.stats.ChecksumsUnchecked++
		return
	}
	c.stats.ChecksumsChecked++
	d := s.desync.diff[:0]
	if sum != e.sum {
		d = diffParts(e.parts, parts, d)
	}
	s.desync.diff = d
	b := appendChecksumVerdict(s.scratch[:0], t, d)
	s.scratch = b
	s.sendTo(c, transport.ReliableOrdered, b)
	if sum == e.sum {
		c.escalate = false
		return
	}
	c.stats.Desyncs++
	types := make([]string, len(d))
	for i, id := range d {
		types[i] = partName(s.comps, s.res, id)
	}
	s.event(ServerEvent{Kind: ClientDesync, Client: c.id, Tick: t, Types: types,
		Reason: fmt.Sprintf("desync at tick %v: %v", t, types)})
	s.log.Warn("replicate: client desync", "client", c.id, "tick", t, "types", types)
	s.desyncDetected(c, t, d, types)
}

// diffParts appends the ids of the parts that differ between a and b
// (both ascending by id), present on one side only included.
func diffParts(a, b []idPart, out []uint8) []uint8 {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].id < b[j].id):
			out = append(out, a[i].id)
			i++
		case i == len(a) || b[j].id < a[i].id:
			out = append(out, b[j].id)
			j++
		default:
			if a[i].sum != b[j].sum {
				out = append(out, a[i].id)
			}
			i++
			j++
		}
	}
	return out
}

// reportChecksum sends the client's checksum of the newest tick T it has
// seen when T is a report tick, complete, and not yet reported (after each
// message Update handles, so data of T+1 arriving in the same Update does
// not hide T; a report tick is skipped only when data of a later tick
// arrived before T was complete).
func (c *Client) reportChecksum() {
	n := c.cfg.ChecksumInterval
	if n <= 0 || c.state != Connected || !c.hasUpd {
		return
	}
	var newest tick.Tick
	seen := false
	for _, tr := range c.ticks {
		if tr.seen && (!seen || tr.tick.After(newest)) {
			newest, seen = tr.tick, true
		}
	}
	if !seen || newest == c.desync.reported || uint64(newest)%uint64(n) != 0 || !c.TickComplete(newest) {
		return
	}
	if c.applied.After(newest) {
		// The update of a later tick (resources, structure) is applied
		// already: the state is no longer the one of newest.
		return
	}
	c.desync.reported = newest
	var sum uint64
	sum, c.desync.scratch = c.Checksum(c.desync.scratch[:0])
	c.desync.ids = partIDs(c.comps, c.resources(), c.desync.scratch, c.desync.ids[:0])
	if c.desync.hold != nil {
		c.holdReport(newest)
		c.desync.hold(newest)
		return
	}
	b := appendChecksumReport(c.out[:0], newest, sum, c.desync.ids)
	c.out = b
	if c.send(transport.ReliableOrdered, b) == nil {
		c.stats.ChecksumsSent++
	}
}

// checksumVerdict handles the server's ChecksumVerdict.
func (c *Client) checksumVerdict(body []byte) {
	var buf [16]uint8
	t, d, err := readChecksumVerdict(body, buf[:0])
	if err != nil || c.state != Connected {
		c.stats.Malformed++
		return
	}
	c.stats.ChecksumsChecked++
	if len(d) == 0 {
		return
	}
	c.stats.Desyncs++
	types := make([]string, len(d))
	for i, id := range d {
		types[i] = partName(c.comps, c.resources(), id)
	}
	c.events = append(c.events, ClientEvent{Kind: EventDesync, Tick: t, Types: types,
		Reason: fmt.Sprintf("desync at tick %v: %v", t, types)})
}

// A checksum source: a prediction layer holds predicted values, ticks
// ahead of the server, in the World, so the World's checksum is not the
// state of the tick a report describes. HoldChecksums makes the client
// compute each report at its usual moment (the entities part, the
// non-predicted types and resources are right then) and hold it; the
// source supplies the parts of its own types once it knows them
// (ReportChecksum), computed from the values it keeps per tick with a
// ComponentSummer or ResourceSummer, the same per-value terms as
// Client.Checksum.

// heldReport is a report computed at its moment and held for the
// checksum source.
type heldReport struct {
	tick  tick.Tick
	used  bool
	parts []Part
	ids   []idPart
}

// HoldChecksums makes the client hold each checksum report
// (ClientConfig.ChecksumInterval) instead of sending it, and call due
// with its tick: the report is computed at its usual moment, and is sent
// by ReportChecksum once the caller supplied the parts of its own types
// (predict.Attach installs this for a predicting client). The last 16
// held reports are kept; an older one is dropped unsent. Nil sends
// reports at once again and drops the held ones.
func (c *Client) HoldChecksums(due func(t tick.Tick)) {
	c.desync.hold = due
	if due == nil {
		for i := range c.desync.held {
			c.desync.held[i].used = false
		}
	}
}

// hold keeps the report of t (sum parts in c.desync.scratch, ids in
// c.desync.ids), replacing the oldest held one when all are in use.
func (c *Client) holdReport(t tick.Tick) {
	d := &c.desync
	var slot *heldReport
	for i := range d.held {
		h := &d.held[i]
		if !h.used {
			slot = h
			break
		}
		if slot == nil || h.tick.Before(slot.tick) {
			slot = h
		}
	}
	if slot == nil || (slot.used && len(d.held) < checksumRing) {
		d.held = append(d.held, heldReport{})
		slot = &d.held[len(d.held)-1]
	}
	slot.tick, slot.used = t, true
	slot.parts = append(slot.parts[:0], d.scratch...)
	slot.ids = append(slot.ids[:0], d.ids...)
}

// ReportChecksum sends the held checksum report of tick t (HoldChecksums)
// with the parts of the same names replaced by sums (a ComponentSummer
// or ResourceSummer sum over the caller's values of t); a part whose name
// the report lacks (a type replicated Once, an absent resource) is
// ignored. It reports whether a report of t was held.
func (c *Client) ReportChecksum(t tick.Tick, sums []Part) bool {
	d := &c.desync
	for i := range d.held {
		h := &d.held[i]
		if !h.used || h.tick != t {
			continue
		}
		h.used = false
		if c.state != Connected {
			return false
		}
		for _, p := range sums {
			for k := range h.parts {
				if h.parts[k].Name == p.Name {
					h.parts[k].Sum = p.Sum
					h.ids[k].sum = p.Sum
				}
			}
		}
		b := appendChecksumReport(c.out[:0], t, parts.Combine(h.parts), h.ids)
		c.out = b
		if c.send(transport.ReliableOrdered, b) == nil {
			c.stats.ChecksumsSent++
		}
		return true
	}
	return false
}

// ComponentSummer computes a client's checksum part of component type T
// over values the caller keeps (a predicted type's values at a past
// tick), with the terms Client.Checksum sums over the World's store: one
// per entity, of its server id and the codec's bytes of its value with
// entity references mapped to server entities. Not safe for concurrent
// use.
type ComponentSummer[T any] struct {
	c   *Client
	b   *typedComponent[T]
	tmp T
	buf []byte
}

// NewComponentSummer returns the summer of component type T of c's
// protocol (ErrUnknownType when T is not registered).
func NewComponentSummer[T any](c *Client) (*ComponentSummer[T], error) {
	pc := c.p.byType[reflect.TypeFor[T]()]
	if pc == nil {
		return nil, fmt.Errorf("%w: %v", ErrUnknownType, reflect.TypeFor[T]())
	}
	return &ComponentSummer[T]{c: c, b: c.comps[pc.id].(*typedComponent[T])}, nil
}

// Name is the name of T's checksum part (Part.Name).
func (s *ComponentSummer[T]) Name() string { return s.b.c.name }

// Term returns the term of server entity se with value v; a part is the
// sum (with wrap-around) of its entities' terms.
func (s *ComponentSummer[T]) Term(se ecs.Entity, v *T) uint64 {
	s.tmp = *v
	if s.b.c.isMap {
		any(&s.tmp).(ecs.MapEntitieser).MapEntities(s.c.toServer())
	}
	s.buf = s.b.codec.Append(s.buf[:0], &s.tmp)
	return entityValueSum(se, s.buf)
}

// ResourceSummer computes a client's checksum part of resource type T
// over a value the caller keeps, as Client.Checksum does over the World's
// resource. Not safe for concurrent use.
type ResourceSummer[T any] struct {
	c    *Client
	b    *typedResource[T]
	name string
	buf  []byte
}

// NewResourceSummer returns the summer of resource type T of c's protocol
// (ErrUnknownType when T is not registered).
func NewResourceSummer[T any](c *Client) (*ResourceSummer[T], error) {
	name := typename.Of(reflect.TypeFor[T]())
	for _, b := range c.resources() {
		if b.info().name == name {
			return &ResourceSummer[T]{c: c, b: b.(*typedResource[T]), name: "resource " + name}, nil
		}
	}
	return nil, fmt.Errorf("%w: resource %v", ErrUnknownType, reflect.TypeFor[T]())
}

// Name is the name of T's checksum part (Part.Name).
func (s *ResourceSummer[T]) Name() string { return s.name }

// Sum returns the part of the resource holding v.
func (s *ResourceSummer[T]) Sum(v *T) uint64 {
	s.b.tmp = *v
	if s.b.isMap {
		any(&s.b.tmp).(ecs.MapEntitieser).MapEntities(s.c.toServer())
	}
	s.buf = s.b.codec.Append(s.buf[:0], &s.b.tmp)
	return xxh64.Sum64(s.buf)
}
