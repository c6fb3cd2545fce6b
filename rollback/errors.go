package rollback

import (
	"errors"
	"fmt"
)

// Errors returned by sessions; compare with errors.Is.
var (
	// ErrInvalidConfig wraps every configuration problem; the message says
	// which field is wrong and why.
	ErrInvalidConfig = errors.New("rollback: invalid config")
	// ErrInvalidHandle: the handle is not a player of the right kind.
	ErrInvalidHandle = errors.New("rollback: invalid player handle")
	// ErrMissingInput: AdvanceFrame was called before every local player's
	// input for the frame was added.
	ErrMissingInput = errors.New("rollback: missing local input")
	// ErrInputTooLarge: an input is longer than Config.MaxInputSize.
	ErrInputTooLarge = errors.New("rollback: input larger than MaxInputSize")
	// ErrNotSynchronized: the session is still synchronizing with its peers.
	ErrNotSynchronized = errors.New("rollback: not synchronized")
	// ErrAlreadyDisconnected: DisconnectPlayer on a player already gone.
	ErrAlreadyDisconnected = errors.New("rollback: player already disconnected")
	// ErrNotEnoughData: network stats are not meaningful yet (less than one
	// second since the peer synchronized).
	ErrNotEnoughData = errors.New("rollback: not enough data yet")
	// ErrWaitingForInput: a spectator or replay has no input for the next
	// frame yet; call again later.
	ErrWaitingForInput = errors.New("rollback: waiting for input")
	// ErrMismatchedChecksum: SyncTest re-simulated a frame and got another
	// checksum; the error is a *MismatchError.
	ErrMismatchedChecksum = errors.New("rollback: mismatched checksum")
	// ErrFrameLimit: the session reached the largest Frame.
	ErrFrameLimit = errors.New("rollback: frame counter exhausted")
	// ErrReplayEnded: the recording has no more frames.
	ErrReplayEnded = errors.New("rollback: replay ended")
	// ErrRecording: a recording could not be written or read; wraps the cause.
	ErrRecording = errors.New("rollback: recording")
	// ErrRecordingDamaged: a recording's header or a block fails its
	// integrity check (a CRC-32C per block): the file was altered after it
	// was written. It wraps ErrRecording.
	ErrRecordingDamaged = fmt.Errorf("%w: damaged", ErrRecording)
	// ErrRejoin: a rejoining session (Config.Rejoin) could not take the
	// state of the match: it was malformed, or its checksum differed from
	// the host's after the game loaded it (the game's state encoding is
	// not exact, or the builds differ). The error says which.
	ErrRejoin = errors.New("rollback: rejoin failed")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("rollback: session closed")
)

// MismatchError reports a determinism failure: the same frame simulated twice
// (SyncTest, replay) gave different checksums. Types names the component and
// resource types whose checksum parts differ, when parts were reported.
type MismatchError struct {
	// CurrentFrame is the session's frame when the mismatch was found.
	CurrentFrame Frame
	// Frame is the first frame whose checksums differ.
	Frame Frame
	// Want is the first checksum recorded for Frame, Got the later one.
	Want, Got uint64
	// Types lists the differing types, in registration order.
	Types []string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("rollback: mismatched checksum at frame %d (current frame %d): %#x != %#x, differing types %v",
		e.Frame, e.CurrentFrame, e.Want, e.Got, e.Types)
}

// Is makes errors.Is(err, ErrMismatchedChecksum) true.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatchedChecksum }
