package replicate

// Desync detection: a client reports the checksum of its replicated state
// at a server tick every ChecksumInterval ticks; the server compares it
// with its own checksum of that tick and answers with the differing types.
//
// Decision: the server keeps the checksums (total and parts) of its last
// MaxPendingChecksums report ticks, computed in the send phase of those ticks
// only, so a report costs the server no world scan of its own and a
// client cannot make it compute anything. Parts travel as small ids
// (partID) rather than names: a report of a world with a few types is a
// few dozen bytes. The client reports tick T once it has applied all of
// T and nothing newer (the newest tick it has seen is T and T is
// complete), which is the state Server.Checksum describes.

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// MaxPendingChecksums is the number of checksum report ticks held at
// once on either side: the server keeps its checksums of its last
// MaxPendingChecksums report ticks (a report of an older tick is not
// checked), and a client whose reports wait for a checksum source
// (Client.HoldChecksums) holds at most this many, the oldest giving way.
// A checksum source queues no more than this (predict's does).
const MaxPendingChecksums = 16

const (
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

// desyncServer is the server's side of desync detection (recordChecksum
// fills its ring, checksumReport reads it and diff). Invariant: the
// entry slot(t, n) holds the checksum of report tick t while ok and its
// tick is t; a newer report tick of the same slot replaces it.
type desyncServer struct {
	sums    [MaxPendingChecksums]serverSum
	scratch []Part
	diff    []uint8
}

// slot returns the ring entry of report tick t (interval n): the one
// holding t's checksum if it is still kept.
func (d *desyncServer) slot(t tick.Tick, n int) *serverSum {
	return &d.sums[(uint64(t)/uint64(n))%MaxPendingChecksums]
}

// clientDesync is a client's desync state on the server. Its fields are
// written by its methods only (this file).
type clientDesync struct {
	// filtered: the client was shown less than the whole world
	// (SetVisible false); its reports are not checked.
	filtered bool
	// lastReport is the tick of the client's last report checked
	// (hasReport: there was one): a report of that tick or an older one
	// is not checked again.
	lastReport tick.Tick
	hasReport  bool
	// warnAt is when the last desync warning of the client was logged;
	// warnMuted counts those left out since (one per second is logged).
	warnAt    time.Time
	warnMuted int
}

// markFiltered notes that the client was shown less than the whole world:
// its reports are no longer checked.
func (d *clientDesync) markFiltered() { d.filtered = true }

// newReport reports whether a report of tick t is newer than the last one
// checked, and if so takes it as the last one.
func (d *clientDesync) newReport(t tick.Tick) bool {
	if d.hasReport && !t.After(d.lastReport) {
		return false
	}
	d.lastReport, d.hasReport = t, true
	return true
}

// muteWarning reports whether a desync warning at now is left out (one a
// second is logged); if not, it returns the count left out since the
// last one logged, and restarts the count.
func (d *clientDesync) muteWarning(now time.Time) (mute bool, muted int) {
	if !d.warnAt.IsZero() && now.Sub(d.warnAt) < time.Second {
		d.warnMuted++
		return true, 0
	}
	muted = d.warnMuted
	d.warnAt, d.warnMuted = now, 0
	return false, muted
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
		if c.info().summed() {
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
	e := d.slot(t, n)
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
	return !s.cfg.HiddenByDefault && !c.filtered && !s.resourceTable.filtered()
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
	e := s.desync.slot(t, n)
	if !e.ok || e.tick != t || !c.newReport(t) {
		// Not kept, or a tick the client reported already: one check
		// per client and report tick, however many reports come.
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
		c.reportedClean(t)
		return
	}
	c.stats.Desyncs++
	types := make([]string, len(d))
	for i, id := range d {
		types[i] = partName(s.comps, s.res, id)
	}
	s.event(ServerEvent{Kind: ClientDesync, Client: c.id, Tick: t, Types: types,
		Reason: fmt.Sprintf("desync at tick %v: %v", t, types)})
	s.warnDesync(c, t, types)
	s.desyncDetected(c, t, d, types)
}

// warnDesync logs a desync of c at warning level, at most once a second
// per client; the next warning counts those left out ("muted").
func (s *Server) warnDesync(c *serverClient, t tick.Tick, types []string) {
	mute, muted := c.muteWarning(s.now)
	if mute {
		return
	}
	s.log.Warn("replicate: client desync", "client", c.id, "tick", t, "types", types, "muted", muted)
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
