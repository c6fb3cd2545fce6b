package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/snapshot"
)

// Errors of the runner; compare with errors.Is.
var (
	// ErrConfig wraps configuration errors of New.
	ErrConfig = errors.New("runner: invalid config")
	// ErrRequestOrder: a Save or Advance request named a frame other than
	// the world's current frame (a session bug, or a hand-built request
	// list that is not consistent).
	ErrRequestOrder = errors.New("runner: request out of order")
	// ErrNoDump: an EventDesyncDump lacks one of its dumps (see
	// DiffDumpEvent).
	ErrNoDump = errors.New("runner: desync dump missing")
)

// DesyncError is a SyncTest mismatch (Config.Dumps) with the differences
// between the first simulation of the frame and its re-simulation, down to
// the entity and field. It unwraps to the session's *rollback.MismatchError,
// so errors.Is(err, rollback.ErrMismatchedChecksum) holds.
type DesyncError struct {
	Mismatch *rollback.MismatchError
	// First and Again are the dumps of the frame's differing types: as
	// first simulated, and as re-simulated.
	First, Again *snapshot.Dump
	// Diffs are the first differences (at most 32); Total counts them all.
	Diffs []snapshot.FieldDiff
	Total int
}

// Error is the mismatch followed by the differing fields, one per line.
func (e *DesyncError) Error() string {
	var b strings.Builder
	b.WriteString(e.Mismatch.Error())
	fmt.Fprintf(&b, "; %d differing fields:", e.Total)
	for _, d := range e.Diffs {
		b.WriteString("\n\t" + d.String())
	}
	return b.String()
}

// Unwrap returns the session's mismatch.
func (e *DesyncError) Unwrap() error { return e.Mismatch }
