package wire

import (
	"errors"
	"fmt"
)

// Errors returned by [Message.Append], [Message.Decode] and the input codec.
// Returned errors wrap one of them (test with errors.Is) and may add detail.
var (
	// ErrVersion reports a packet whose byte 0 is not Version. Decode sets
	// Message.Version (and Kind and Magic, if present) to the packet's values.
	ErrVersion = errors.New("wire: unsupported version")
	// ErrUnknownKind reports a message kind this version does not define.
	ErrUnknownKind = errors.New("wire: unknown message kind")
	// ErrMalformed reports bytes or fields that do not follow the format:
	// truncation, trailing bytes, overlong varints, values out of range.
	ErrMalformed = errors.New("wire: malformed message")
	// ErrTooLarge reports a message longer than MaxPacketSize.
	ErrTooLarge = errors.New("wire: message too large")
)

// Decode errors are built once so that rejecting hostile bytes does not
// allocate. They are never modified.
var (
	errTruncated     = fmt.Errorf("%w: truncated", ErrMalformed)
	errVarint        = fmt.Errorf("%w: overlong or non-minimal varint", ErrMalformed)
	errTrailing      = fmt.Errorf("%w: trailing bytes", ErrMalformed)
	errFrameRange    = fmt.Errorf("%w: frame out of range", ErrMalformed)
	errFlags         = fmt.Errorf("%w: unknown flag bits", ErrMalformed)
	errStatusCount   = fmt.Errorf("%w: too many statuses", ErrMalformed)
	errFrameCount    = fmt.Errorf("%w: frame count out of range", ErrMalformed)
	errInputsPresent = fmt.Errorf("%w: inputs do not match the frame count", ErrMalformed)
	errAdvantage     = fmt.Errorf("%w: advantage out of int16 range", ErrMalformed)
	errPartCount     = fmt.Errorf("%w: too many parts", ErrMalformed)
	errNameLen       = fmt.Errorf("%w: part name too long", ErrMalformed)
	errReportCount   = fmt.Errorf("%w: too many checksum reports", ErrMalformed)
	errChecksNone    = fmt.Errorf("%w: checks flag without an ack or a report", ErrMalformed)
	errDump          = fmt.Errorf("%w: dump piece outside its dump", ErrMalformed)
	errPacketSize    = fmt.Errorf("%w: packet longer than %d bytes", ErrTooLarge, MaxPacketSize)
)
