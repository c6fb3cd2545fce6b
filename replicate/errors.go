package replicate

// Errors of package replicate.

import (
	"errors"
	"fmt"
)

// Errors of this package; compare with errors.Is.
var (
	// ErrNotPlainData: the default codec needs plain data.
	ErrNotPlainData = errors.New("replicate: type is not plain data")
	// ErrRegistered: a type is registered twice, or after the protocol was used.
	ErrRegistered = errors.New("replicate: registration error")
	// ErrMalformed: bytes from the network did not decode.
	ErrMalformed = errors.New("replicate: malformed message")
	// ErrProtocolMismatch: client and server registered different protocols.
	ErrProtocolMismatch = errors.New("replicate: protocol mismatch")
	// ErrRejected: the server refused the client (authentication).
	ErrRejected = errors.New("replicate: rejected by server")
	// ErrNotConnected: the client is not connected, or the client id is unknown.
	ErrNotConnected = errors.New("replicate: not connected")
	// ErrUnknownType: a message or component type is not in the protocol.
	ErrUnknownType = errors.New("replicate: type not registered")
	// ErrTooLarge: a message does not fit its channel.
	ErrTooLarge = errors.New("replicate: message too large")
	// ErrTick: Server.SendTick was given a tick not after the last one sent.
	ErrTick = errors.New("replicate: tick not after the last one sent")
)

var (
	errRange = fmt.Errorf("%w: value out of range", ErrMalformed)
	errValue = fmt.Errorf("%w: bad component or message value", ErrMalformed)
)

// malformed wraps an error of the wire reader (package internal/bin) so
// that it matches ErrMalformed.
func malformed(err error) error {
	if err == nil || errors.Is(err, ErrMalformed) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}
