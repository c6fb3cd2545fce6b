package replicate

import (
	"fmt"
	"strings"
)

// String returns the kind's name: "connected", "rejected",
// "disconnected", "desync" or "resync".
func (k ClientEventKind) String() string {
	switch k {
	case EventConnected:
		return "connected"
	case EventRejected:
		return "rejected"
	case EventDisconnected:
		return "disconnected"
	case EventDesync:
		return "desync"
	case EventResync:
		return "resync"
	}
	return fmt.Sprintf("ClientEventKind(%d)", uint8(k))
}

// String describes the event for logs: its kind, then what it carries
// ("desync at tick 120 in [pkg.Position]: ...", "resync full at tick
// 300: ...", "rejected: ...").
func (e ClientEvent) String() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	switch e.Kind {
	case EventDesync:
		fmt.Fprintf(&b, " at tick %d in %v", e.Tick, e.Types)
	case EventResync:
		fmt.Fprintf(&b, " %v at tick %d", e.Resync, e.Tick)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	return b.String()
}
