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

// Recent is a Claim in two bytes, relative to the tick of the input that
// carries it: the tick shown was Ago ticks before, at Frac/256 of the way
// to the next. A game that sends a claim with every input uses it to keep
// its inputs small.
type Recent struct {
	Ago  uint8
	Frac uint8
}

// NewRecent returns the claim, relative to input tick at, of showing tick
// shown at fraction f (clamped to [0, 1), quantized down to 1/256). It
// reports false when shown is after at or more than 255 ticks before it.
// The client draws with the Recent's Claim(at).Fraction().
func NewRecent(at, shown tick.Tick, f float64) (Recent, bool) {
	ago := at.Sub(shown)
	if ago < 0 || ago > 255 {
		return Recent{}, false
	}
	c := NewClaim(shown, f)
	return Recent{Ago: uint8(ago), Frac: uint8(c.Frac >> 8)}, true
}

// Claim returns the claim r makes for input tick at.
func (r Recent) Claim(at tick.Tick) Claim {
	return Claim{Tick: at.Add(-int32(r.Ago)), Frac: uint16(r.Frac) << 8}
}
