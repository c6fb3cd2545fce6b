package rng

import "errors"

// ErrBadState is returned, wrapped, by [Rand.UnmarshalBinary] for data that is
// not an encoded Rand state.
var ErrBadState = errors.New("rng: bad state encoding")
