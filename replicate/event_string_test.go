package replicate_test

import (
	"fmt"
	"testing"

	"github.com/rewindgo/rewind/replicate"
)

// TestClientEventString: a ClientEvent printed with %v in a log line reads
// as words, not as a struct of numbers.
func TestClientEventString(t *testing.T) {
	cases := []struct {
		ev   replicate.ClientEvent
		want string
	}{
		{replicate.ClientEvent{Kind: replicate.EventConnected}, "connected"},
		{replicate.ClientEvent{Kind: replicate.EventDisconnected, Reason: "connection closed"}, "disconnected: connection closed"},
		{replicate.ClientEvent{Kind: replicate.EventRejected, Reason: "authentication failed"}, "rejected: authentication failed"},
		{replicate.ClientEvent{Kind: replicate.EventDesync, Tick: 120, Types: []string{"game.Position"}}, "desync at tick 120 in [game.Position]"},
		{replicate.ClientEvent{Kind: replicate.EventResync, Tick: 300, Resync: replicate.ResyncFull, Reason: "desync"}, "resync " + replicate.ResyncFull.String() + " at tick 300: desync"},
		{replicate.ClientEvent{Kind: 99}, "ClientEventKind(99)"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(c.ev); got != c.want {
			t.Errorf("%#v prints %q, want %q", c.ev, got, c.want)
		}
	}
	if got := fmt.Sprint(replicate.EventDesync); got != "desync" {
		t.Errorf("EventDesync prints %q", got)
	}
}
