package lagcomp

import "github.com/rewindgo/rewind/tick"

// Claim is what a client was showing when its player acted: the entities
// it interpolates were drawn between server ticks Tick and Tick+1, at
// Fraction of the way. It is plain data: put it in the game's input.
type Claim struct {
	// Tick is the server tick the interpolated entities were shown from.
	Tick tick.Tick
	// Frac is the fraction towards Tick+1, in units of 1/65536.
	Frac uint16
}

// NewClaim returns the claim of showing tick t at fraction f (clamped to
// [0, 1), quantized down to 1/65536). The client draws with the claim's
// Fraction, not f, so that its screen and the server's View agree bit
// for bit.
func NewClaim(t tick.Tick, f float64) Claim {
	switch {
	case !(f > 0): // also NaN
		f = 0
	case f >= 1:
		f = 65535.0 / 65536
	}
	return Claim{Tick: t, Frac: uint16(f * 65536)}
}

// Fraction is the claim's fraction towards Tick+1, in [0, 1).
func (c Claim) Fraction() float64 { return float64(c.Frac) / 65536 }
