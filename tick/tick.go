package tick

import "strconv"

// A Tick is a frame or tick number. It wraps around from 2^32-1 to 0; compare
// ticks with the methods of Tick, which are valid while the two ticks are less
// than 2^31 apart.
type Tick uint32

// Add returns t advanced by n ticks (or moved back, if n is negative), wrapping
// around.
func (t Tick) Add(n int32) Tick { return t + Tick(n) }

// Sub returns the signed distance t-u, computed as int32(t-u). It is exact
// while the two ticks are less than 2^31 apart.
func (t Tick) Sub(u Tick) int32 { return int32(t - u) }

// Before reports whether t comes before u.
func (t Tick) Before(u Tick) bool { return t.Sub(u) < 0 }

// After reports whether t comes after u.
func (t Tick) After(u Tick) bool { return t.Sub(u) > 0 }

// AtOrBefore reports whether t equals u or comes before it.
func (t Tick) AtOrBefore(u Tick) bool { return t.Sub(u) <= 0 }

// AtOrAfter reports whether t equals u or comes after it.
func (t Tick) AtOrAfter(u Tick) bool { return t.Sub(u) >= 0 }

// Next returns the tick after t.
func (t Tick) Next() Tick { return t + 1 }

// String returns t in decimal.
func (t Tick) String() string { return strconv.FormatUint(uint64(t), 10) }

// Max returns the later of a and b.
func Max(a, b Tick) Tick {
	if a.After(b) {
		return a
	}
	return b
}

// Min returns the earlier of a and b.
func Min(a, b Tick) Tick {
	if a.Before(b) {
		return a
	}
	return b
}

// Expand16 returns the tick whose low 16 bits are low and that is nearest to
// near: the result lies in [near-2^15, near+2^15). It rebuilds a full tick
// from a compact wire encoding, given a nearby tick the receiver knows, such
// as its own current tick.
func Expand16(low uint16, near Tick) Tick {
	return near.Add(int32(int16(low - uint16(near))))
}

// Expand8 returns the tick whose low 8 bits are low and that is nearest to
// near: the result lies in [near-128, near+128).
func Expand8(low uint8, near Tick) Tick {
	return near.Add(int32(int8(low - uint8(near))))
}
