package snapshot

import "errors"

// Errors of package snapshot. Compare with errors.Is.
var (
	// ErrNotPlainData: a type registered with the copy strategy holds a
	// pointer, slice, map, channel, func, interface or string; use Clone or Codec.
	ErrNotPlainData = errors.New("snapshot: type is not plain data (copy strategy refused)")
	// ErrNoChecksum: a Clone type can neither be checksummed (it does not
	// implement encoding.BinaryAppender) nor was registered with NoChecksum.
	ErrNoChecksum = errors.New("snapshot: clone type has no checksum form")
	// ErrDuplicate: the type is already registered with the Registry.
	ErrDuplicate = errors.New("snapshot: type already registered")
	// ErrFrameNotHeld: the ring does not hold the requested frame.
	ErrFrameNotHeld = errors.New("snapshot: frame not held")
	// ErrDecode: a Codec type failed to decode its own saved bytes.
	ErrDecode = errors.New("snapshot: decoding a saved value failed")
	// ErrDumpTooLarge: a Dump would exceed DumpOptions.MaxBytes, or a
	// dump's encoding exceeds the decoder's bound.
	ErrDumpTooLarge = errors.New("snapshot: dump too large")
	// ErrDumpFormat: bytes that are not a valid dump encoding.
	ErrDumpFormat = errors.New("snapshot: malformed dump")
	// ErrInvalidDepth: a ring depth below 1.
	ErrInvalidDepth = errors.New("snapshot: ring depth must be at least 1")
	// ErrNotEncodable: the world holds a Clone type, which has no exact
	// byte form, so its saved frames cannot be encoded (Ring.Encode,
	// Ring.LoadEncoded). Register the type with Codec instead.
	ErrNotEncodable = errors.New("snapshot: clone type has no exact byte form (encoded states need copy or codec types)")
	// ErrStateFormat: bytes that are not a valid encoded state for the
	// Registry (Ring.LoadEncoded).
	ErrStateFormat = errors.New("snapshot: malformed encoded state")
)
