package predict

import (
	"math"
	"time"
)

// Decay is a framerate-independent exponential decay of a visual offset,
// for blending a correction away: when a rollback moves an entity (a
// Correction), the renderer adds Before-After to the entity's visual
// offset, draws the entity at its simulated value plus the offset, and
// shrinks the offset every rendered frame with Apply. The simulation keeps
// the corrected value; only the picture catches up. Rendering is not
// simulation, so floats are fine here. The zero Decay uses the defaults.
type Decay struct {
	// Period is the time after which an offset has shrunk to Ratio of
	// itself. Default 200 ms (lightyear's decay_period).
	Period time.Duration
	// Ratio is the fraction of an offset left after one Period, in (0, 1).
	// Default 0.5.
	Ratio float64
}

// Factor returns the fraction of an offset left after dt:
// Ratio^(dt/Period), 1 for dt <= 0.
func (d Decay) Factor(dt time.Duration) float64 {
	if dt <= 0 {
		return 1
	}
	p, r := d.Period, d.Ratio
	if p <= 0 {
		p = 200 * time.Millisecond
	}
	if r <= 0 || r >= 1 {
		r = 0.5
	}
	return math.Pow(r, float64(dt)/float64(p))
}

// Apply returns offset shrunk for a frame of dt; offsets below 1e-9 in
// magnitude become 0.
func (d Decay) Apply(offset float64, dt time.Duration) float64 {
	offset *= d.Factor(dt)
	if math.Abs(offset) < 1e-9 {
		return 0
	}
	return offset
}
