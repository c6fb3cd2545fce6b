package replicate_test

import (
	"errors"
	"testing"

	"github.com/rewindgo/rewind/replicate"
)

// TestReliableSendFailureDropsClient: when a client's update cannot be sent
// (its connection refuses reliable messages), the server drops that client
// with a ClientDisconnected event instead of carrying on as if the update
// had arrived, and keeps serving the other client.
func TestReliableSendFailureDropsClient(t *testing.T) {
	bw := newBenchWorld(t, 50, 2)
	bw.srv.Events()
	broken := bw.clients[0].ID()
	bw.sEnds[0].fail = errors.New("link broken")
	_ = bw.sw.Despawn(bw.ents[0]) // the next update must be sent
	bw.ents = bw.ents[1:]
	bw.tick(true)
	var reason string
	for _, ev := range bw.srv.Events() {
		if ev.Kind == replicate.ClientDisconnected && ev.Client == broken {
			reason = ev.Reason
		}
	}
	if reason != "send failed: link broken" {
		t.Fatalf("disconnect reason %q, want the send failure", reason)
	}
	if ids := bw.srv.Clients(); len(ids) != 1 || ids[0] != bw.clients[1].ID() {
		t.Fatalf("clients after the failure: %v", ids)
	}
	bw.mutate(0.5)
	bw.tick(true)
	st, err := bw.srv.Stats(bw.clients[1].ID())
	if err != nil || st.Entities != 49 || st.MutationMessages == 0 {
		t.Fatalf("remaining client: %+v, %v; want 49 entities and mutations flowing", st, err)
	}
}
