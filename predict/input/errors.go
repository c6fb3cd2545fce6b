package input

import "errors"

// Errors of package input. Compare with errors.Is.
var (
	// ErrTick: an input was added for a tick not after the newest input
	// already added (inputs are sent once per tick, in order).
	ErrTick = errors.New("predict/input: input tick not after the previous one")
	// ErrSize: an input encodes to more than Config.MaxInputSize bytes, or
	// the input type has no fixed-size default encoding.
	ErrSize = errors.New("predict/input: input too large or not encodable")
	// ErrMalformed: an input message is malformed.
	ErrMalformed = errors.New("predict/input: malformed input message")
)
