package rollback

import "github.com/rewindgo/rewind/internal/parts"

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
