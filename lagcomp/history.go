package lagcomp

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// History keeps the tracked component types of one World for the last
// Config.Ticks ticks. It is used from the goroutine that runs the world.
type History struct {
	w      *ecs.World
	cfg    Config
	types  []tracked
	ticks  []tick.Tick // by slot: the tick it holds
	held   []bool      // by slot
	newest tick.Tick
	any    bool
	stats  Stats
}

// tracked is one tracked type's side of a History.
type tracked interface {
	capture(slot int)
	bytes() int
}

// Stats counts a History's work.
type Stats struct {
	// Captures counts Capture calls; Views the Views made by At.
	Captures, Views uint64
	// Clamped counts claims older than the history (or than Config.Ticks)
	// moved to its oldest tick; Future claims newer than its newest
	// capture moved to that.
	Clamped, Future uint64
	// Bytes is the memory the history holds (every tracked type's saved
	// values and layouts).
	Bytes int
}

// New returns an empty History of w.
func New(w *ecs.World, cfg Config) *History {
	cfg = cfg.withDefaults()
	return &History{w: w, cfg: cfg, ticks: make([]tick.Tick, cfg.Ticks), held: make([]bool, cfg.Ticks)}
}

// Config returns the configuration with defaults applied.
func (h *History) Config() Config { return h.cfg }

func (h *History) slot(t tick.Tick) int { return int(uint32(t) % uint32(h.cfg.Ticks)) }

// Capture saves the tracked types as tick t: call it after the tick is
// simulated, with the state clients receive as tick t. Ticks captured out
// of order or again replace what their slot held. Ticks more than
// Config.Ticks before t are dropped.
func (h *History) Capture(t tick.Tick) {
	s := h.slot(t)
	for _, ty := range h.types {
		ty.capture(s)
	}
	h.ticks[s], h.held[s] = t, true
	if !h.any || t.After(h.newest) {
		h.newest, h.any = t, true
	}
	h.stats.Captures++
}

// Newest returns the newest tick captured, and whether there is one.
func (h *History) Newest() (tick.Tick, bool) { return h.newest, h.any }

// holds reports whether tick t is in the history.
func (h *History) holds(t tick.Tick) bool {
	s := h.slot(t)
	return h.any && h.held[s] && h.ticks[s] == t && !t.After(h.newest) && h.newest.Sub(t) < int32(h.cfg.Ticks)
}

// oldest returns the oldest tick of the unbroken run of held ticks that
// ends at the newest.
func (h *History) oldest() tick.Tick {
	t := h.newest
	for k := 1; k < h.cfg.Ticks && h.holds(t-1); k++ {
		t--
	}
	return t
}

// At returns the View of claim c: the tracked types as a client showing
// c saw them. A claim outside the history is clamped (see Stats). The
// View is valid until the next Capture. With nothing captured yet, the
// View holds nothing.
func (h *History) At(c Claim) View {
	h.stats.Views++
	if !h.any {
		return View{}
	}
	t, f := c.Tick, c.Fraction()
	switch {
	case t.After(h.newest) || t == h.newest && f > 0:
		t, f = h.newest, 0
		h.stats.Future++
	case !h.holds(t) || t.Before(h.oldest()):
		t, f = h.oldest(), 0
		h.stats.Clamped++
	}
	v := View{h: h, t: t, frac: f, s0: h.slot(t), s1: -1, ok: true}
	if f > 0 {
		if h.holds(t + 1) {
			v.s1 = h.slot(t + 1)
		} else {
			v.frac = 0
		}
	}
	return v
}

// Stats returns the counters.
func (h *History) Stats() Stats {
	s := h.stats
	s.Bytes = 0
	for _, ty := range h.types {
		s.Bytes += ty.bytes()
	}
	return s
}

// View is a moment of the past as one client saw it: read it with
// Type.At and Type.Each. The zero View holds nothing.
type View struct {
	h      *History
	t      tick.Tick
	frac   float64
	s0, s1 int // slots of Tick and Tick+1 (s1 -1: no interpolation)
	ok     bool
}

// Tick returns the tick the view shows (after clamping) and its
// fraction towards the next.
func (v View) Tick() (tick.Tick, float64) { return v.t, v.frac }
