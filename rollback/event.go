package rollback

import (
	"fmt"
	"net/netip"
	"time"
)

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
	// EventDesyncDump follows an EventDesyncDetected that named types when
	// Config.DesyncDumpBytes is set: LocalDump is this peer's dump of
	// those types at Frame (sent to Addr unless over the bound),
	// RemoteDump Addr's (nil when it did not arrive within 10 s, was over
	// the bound, or the peer had none).
	// rollback/runner.DiffDumpEvent decodes and compares them.
	EventDesyncDump
)

var eventNames = [...]string{"", "synchronizing", "synchronized", "running", "network-interrupted",
	"network-resumed", "disconnected", "wait-recommendation", "desync-detected", "version-mismatch", "too-far-behind", "desync-dump"}

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
	// Frame, Local, Remote, Types: EventDesyncDetected, EventDesyncDump.
	Frame         Frame
	Local, Remote uint64
	Types         []string
	// LocalDump, RemoteDump: EventDesyncDump (bytes of the DumpSource).
	LocalDump, RemoteDump []byte
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
	case EventDesyncDump:
		return fmt.Sprintf("desync dumps with %v at frame %d: local %d bytes, remote %d bytes, types %v", e.Addr, e.Frame, len(e.LocalDump), len(e.RemoteDump), e.Types)
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
