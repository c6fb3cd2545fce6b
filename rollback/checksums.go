package rollback

import (
	"fmt"

	"github.com/rewindgo/rewind/internal/parts"
	"github.com/rewindgo/rewind/internal/xxh64"
)

// Part is the checksum of one component or resource type, as reported with
// ReportChecksum. It is a struct with two fields:
//
//	Name string // the type's package path and name ("github.com/you/game.Position");
//	            // snapshot names resources "resource " + the type name and the
//	            // entity allocator snapshot.EntitiesPart
//	Sum  uint64 // the type's checksum (XXH64 of its canonical bytes)
//
// Part is the same type as snapshot.Part (both alias one internal type), so a
// []snapshot.Part from Ring.Checksum is passed to ReportChecksum as it
// is, without a copy each checked frame. Neither package can define it for
// the other: rollback does not import snapshot (which imports ecs).
type Part = parts.Part

// sumHistory keeps the checksums the game reported for recent frames, and
// the checksum parts of selected frames (desync-check and recording frames),
// so that a later comparison can name the differing types. Storage is reused:
// after warm-up, reporting allocates nothing.
type sumHistory struct {
	sums  []sumEntry
	parts []partsEntry
	next  int
}

type partsEntry struct {
	frame Frame
	ok    bool
	parts []Part
}

func newSumHistory(sums, parts int) *sumHistory {
	return &sumHistory{sums: make([]sumEntry, sums), parts: make([]partsEntry, parts)}
}

func (h *sumHistory) put(f Frame, sum uint64, parts []Part, keepParts bool) {
	h.sums[int(f)%len(h.sums)] = sumEntry{frame: f, sum: sum, ok: true}
	if !keepParts || len(h.parts) == 0 {
		return
	}
	var p *partsEntry
	for i := range h.parts {
		if h.parts[i].ok && h.parts[i].frame == f {
			p = &h.parts[i]
		}
	}
	if p == nil {
		p = &h.parts[h.next]
		h.next = (h.next + 1) % len(h.parts)
	}
	p.frame, p.ok = f, true
	p.parts = append(p.parts[:0], parts...)
}

func (h *sumHistory) get(f Frame) (uint64, bool) {
	if f < 0 {
		return 0, false
	}
	e := h.sums[int(f)%len(h.sums)]
	return e.sum, e.ok && e.frame == f
}

func (h *sumHistory) getParts(f Frame) ([]Part, bool) {
	if f < 0 || len(h.parts) == 0 {
		return nil, false
	}
	for _, p := range h.parts {
		if p.ok && p.frame == f {
			return p.parts, true
		}
	}
	return nil, false
}

// diffParts names the types whose sums differ between a and b (a type
// present on one side only counts as differing), in the order of a then b.
func diffParts(a, b []Part) []string { return parts.Diff(a, b) }

// shortName is the form of a part name that fits max bytes (the wire's
// wire.MaxNameLen, a recording's 255): the name itself when it fits, else
// a prefix, '#' and the 16 hex digits of the name's XXH64, so two long
// names that share a prefix stay distinct and both ends of a comparison
// derive the same short form.
func shortName(name string, max int) string {
	if len(name) <= max {
		return name
	}
	const hexLen = 16
	h := xxh64.New()
	_, _ = h.Write([]byte(name))
	return name[:max-hexLen-1] + "#" + fmt.Sprintf("%016x", h.Sum64())
}

// diffShort is diffParts of local parts against parts that travelled with
// their names cut to max bytes (shortName): a local part matches the remote
// part of its short name, and is reported under its full name.
func diffShort(local, remote []Part, max int) []string {
	var out []string
	matched := 0
	for _, pl := range local {
		name := shortName(pl.Name, max)
		found := false
		for _, pr := range remote {
			if pr.Name == name {
				found = true
				matched++
				if pr.Sum != pl.Sum {
					out = append(out, pl.Name)
				}
				break
			}
		}
		if !found {
			out = append(out, pl.Name)
		}
	}
	if matched == len(remote) {
		return out
	}
	for _, pr := range remote {
		found := false
		for _, pl := range local {
			if shortName(pl.Name, max) == pr.Name {
				found = true
				break
			}
		}
		if !found {
			out = append(out, pr.Name)
		}
	}
	return out
}
