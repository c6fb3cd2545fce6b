package rollback

import (
	"fmt"
)

// Frame numbers a simulation step. Frame 0 is the first; the state "at frame f"
// is the state before the inputs of frame f are applied. A match at 60 frames
// per second reaches the int32 limit after 414 days; sessions refuse to go
// further rather than wrap.
type Frame int32

// NullFrame means "no frame": nothing received, nothing confirmed, nothing saved.
const NullFrame Frame = -1

// RequestKind is the kind of a Request.
type RequestKind uint8

const (
	// SaveRequest asks the game to save its state as frame Request.Frame
	// and to report the state's checksum with ReportChecksum when it can
	// (needed by SyncTest, desync detection and recordings).
	SaveRequest RequestKind = iota + 1
	// LoadRequest asks the game to restore the state it saved as frame
	// Request.Frame. It is always a frame the session asked to save, at
	// most SnapshotDepth frames back: keep the last 2*MaxPrediction+4
	// saved frames (a disconnect agreed among 3 or more peers can reach
	// back about twice the prediction window; MaxPrediction+2 is not
	// enough).
	LoadRequest
	// AdvanceRequest asks the game to simulate one frame (Request.Frame)
	// with Request.Inputs, one per player in handle order.
	AdvanceRequest
	// LoadStateRequest asks the game to restore the state in Request.State
	// (the bytes a peer's StateSource gave for Request.Frame) as frame
	// Request.Frame. Only a rejoining session (Config.Rejoin) asks it,
	// once, first; a Save of the same frame follows, whose checksum must
	// equal the host's.
	LoadStateRequest
)

func (k RequestKind) String() string {
	switch k {
	case SaveRequest:
		return "save"
	case LoadRequest:
		return "load"
	case AdvanceRequest:
		return "advance"
	case LoadStateRequest:
		return "load-state"
	}
	return fmt.Sprintf("RequestKind(%d)", uint8(k))
}

// Request is one step the game carries out, in order, after AdvanceFrame.
type Request struct {
	Kind RequestKind
	// Frame is the frame to save or load, or the frame an Advance simulates
	// (after it the game is at Frame+1).
	Frame Frame
	// Inputs holds one input per player for an AdvanceRequest; nil otherwise.
	Inputs []Input
	// State is the encoded state of a LoadStateRequest; nil otherwise.
	State []byte
}

func (r Request) String() string {
	return fmt.Sprintf("%s(%d)", r.Kind, r.Frame)
}
