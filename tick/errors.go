package tick

import "errors"

// ErrInvalidRate is returned by [NewClock] for a tick rate of 0 Hz.
var ErrInvalidRate = errors.New("tick: invalid tick rate")
