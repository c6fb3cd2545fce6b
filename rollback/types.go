package rollback

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rewindgo/rewind/internal/parts"
)

// Frame numbers a simulation step. Frame 0 is the first; the state "at frame f"
// is the state before the inputs of frame f are applied. A match at 60 frames
// per second reaches the int32 limit after 414 days; sessions refuse to go
// further rather than wrap.
type Frame int32

// NullFrame means "no frame": nothing received, nothing confirmed, nothing saved.
const NullFrame Frame = -1

// PlayerHandle identifies a player: 0..NumPlayers-1 for players, NumPlayers
// and above for spectators (as registered in Config.Players).
type PlayerHandle int

// InputStatus says where an input given to an Advance request came from.
type InputStatus uint8

const (
	// Confirmed inputs were added locally or received from their player.
	Confirmed InputStatus = iota
	// Predicted inputs are the predictor's guess; a rollback replaces them
	// when the real input differs.
	Predicted
	// Disconnected marks a player who has left: the input is Config.DefaultInput.
	Disconnected
)

func (s InputStatus) String() string {
	switch s {
	case Confirmed:
		return "confirmed"
	case Predicted:
		return "predicted"
	case Disconnected:
		return "disconnected"
	}
	return fmt.Sprintf("InputStatus(%d)", uint8(s))
}

// Input is one player's input for one frame of an Advance request.
type Input struct {
	// Bytes is the input as the player added it (session-owned: valid until
	// the next call to AdvanceFrame; copy it to keep it).
	Bytes []byte
	// Status says whether it is confirmed, predicted or a disconnected
	// player's default.
	Status InputStatus
}

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
)

func (k RequestKind) String() string {
	switch k {
	case SaveRequest:
		return "save"
	case LoadRequest:
		return "load"
	case AdvanceRequest:
		return "advance"
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
}

func (r Request) String() string {
	return fmt.Sprintf("%s(%d)", r.Kind, r.Frame)
}

// Part is the checksum of one component or resource type, as reported with
// ReportChecksum: the same type as snapshot.Part, so a snapshot's parts can
// be reported as they are.
type Part = parts.Part

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

// EventKind is the kind of an Event.
type EventKind uint8

const (
	// EventSynchronizing reports handshake progress with Addr: Count of Total
	// round trips done.
	EventSynchronizing EventKind = iota + 1
	// EventSynchronized: the handshake with Addr is complete.
	EventSynchronized
	// EventRunning: every peer is synchronized; frames advance.
	EventRunning
	// EventNetworkInterrupted: nothing heard from Addr for the notify delay;
	// Timeout is the time left before it is disconnected.
	EventNetworkInterrupted
	// EventNetworkResumed: Addr was interrupted and is heard again.
	EventNetworkResumed
	// EventDisconnected: Addr is gone (timeout, DisconnectPlayer, a peer's
	// decision, or misbehaviour: see Reason). Its players get Disconnected
	// inputs from the agreed frame on.
	EventDisconnected
	// EventWaitRecommendation: this peer is SkipFrames frames ahead (at
	// least 1; raised at most every 20 frames); a game that does not run
	// its clock slower may skip that many frames. See ARCHITECTURE.md for
	// how time sync differs from GGRS.
	EventWaitRecommendation
	// EventDesyncDetected: the confirmed checksum of Frame differs between
	// this peer (Local) and Addr (Remote). Types names the differing types
	// when both sides reported checksum parts.
	EventDesyncDetected
	// EventVersionMismatch: Addr speaks another protocol version (Version);
	// it cannot connect.
	EventVersionMismatch
	// EventTooFarBehind: a spectator is SkipFrames frames behind its host,
	// more than its buffer holds; it catches up at CatchupSpeed and the host
	// resends what did not fit.
	EventTooFarBehind
)

var eventNames = [...]string{"", "synchronizing", "synchronized", "running", "network-interrupted",
	"network-resumed", "disconnected", "wait-recommendation", "desync-detected", "version-mismatch", "too-far-behind"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is something that happened to a session; drain them with Events.
type Event struct {
	Kind EventKind
	// Addr is the peer concerned (zero for EventRunning and
	// EventWaitRecommendation).
	Addr netip.AddrPort
	// Count and Total: handshake progress (EventSynchronizing).
	Count, Total int
	// Timeout: time left before disconnection (EventNetworkInterrupted).
	Timeout time.Duration
	// SkipFrames: EventWaitRecommendation.
	SkipFrames int
	// Frame, Local, Remote, Types: EventDesyncDetected.
	Frame         Frame
	Local, Remote uint64
	Types         []string
	// Version: the peer's protocol version (EventVersionMismatch).
	Version uint8
	// Reason explains an EventDisconnected.
	Reason string
}

func (e Event) String() string {
	switch e.Kind {
	case EventSynchronizing:
		return fmt.Sprintf("synchronizing with %v (%d/%d)", e.Addr, e.Count, e.Total)
	case EventNetworkInterrupted:
		return fmt.Sprintf("network interrupted with %v (disconnect in %v)", e.Addr, e.Timeout)
	case EventWaitRecommendation:
		return fmt.Sprintf("wait recommendation: %d frames", e.SkipFrames)
	case EventDesyncDetected:
		return fmt.Sprintf("desync with %v at frame %d: local %#x remote %#x, types %v", e.Addr, e.Frame, e.Local, e.Remote, e.Types)
	case EventVersionMismatch:
		return fmt.Sprintf("version mismatch with %v: peer speaks version %d", e.Addr, e.Version)
	case EventDisconnected:
		return fmt.Sprintf("disconnected from %v: %s", e.Addr, e.Reason)
	}
	if e.Addr.IsValid() {
		return fmt.Sprintf("%v %v", e.Kind, e.Addr)
	}
	return e.Kind.String()
}

// NetworkStats describes the connection to one remote peer or spectator.
type NetworkStats struct {
	// Ping is the smoothed round-trip time.
	Ping time.Duration
	// SendQueueLen is the number of local input frames sent but not yet
	// acknowledged by the peer.
	SendQueueLen int
	// KbpsSent is the rate actually put on the wire towards the peer, in
	// kilobits per second, counting each datagram's payload plus 28 bytes of
	// IPv4 and UDP headers, averaged since the peer synchronized.
	KbpsSent float64
	// BytesSent and PacketsSent count UDP payload bytes and datagrams sent
	// to the peer; BytesReceived and PacketsReceived those received from it.
	BytesSent, PacketsSent         uint64
	BytesReceived, PacketsReceived uint64
	// LocalFramesBehind is how many frames this session is behind the peer
	// (negative: ahead), from this side's measurement; RemoteFramesBehind is
	// the peer's own measurement of how far it is behind this session.
	LocalFramesBehind, RemoteFramesBehind int
	// Malformed counts datagrams from the peer that failed to decode or made
	// no sense; Dropped counts datagrams dropped for flooding.
	Malformed, Dropped uint64
}
