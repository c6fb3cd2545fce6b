package replicate_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// TestByteCounts: a connection's bytes by what they carry add up to its
// totals both ways, each kind in use is counted (updates and mutations
// out, acks in, messages both ways), and the server's messages are
// counted by type.
func TestByteCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMemRig(t, 5, replicate.ServerConfig{})
		defer r.close()
		var ents []ecs.Entity
		for i := range 10 {
			ents = append(ents, spawnRep(r.sw, Position{X: float64(i)}, 1))
		}
		r.connect(1, transport.LinkConfig{Latency: 10 * time.Millisecond})
		pos := ecs.StoreOf[Position](r.sw)
		for k := range 60 {
			pos.Ptr(ents[k%10]).Y++
			if k%10 == 0 {
				if err := r.tp.notice.SendToClients(r.srv, replicate.All(), Notice{int32(k)}); err != nil {
					t.Fatal(err)
				}
				if err := r.tp.chat.SendToServer(r.clients[0], Chat{Text: [16]byte{1}}); err != nil {
					t.Fatal(err)
				}
			}
			r.step()
		}
		st, err := r.srv.Stats(r.clients[0].ID())
		if err != nil {
			t.Fatal(err)
		}
		sum := func(b replicate.ByteCounts) uint64 {
			return b.Updates + b.Mutations + b.Acks + b.Messages + b.Checksums + b.Resyncs + b.Control
		}
		if sum(st.Out) != st.BytesOut || sum(st.In) != st.BytesIn {
			t.Fatalf("out %+v sums to %d of %d; in %+v to %d of %d", st.Out, sum(st.Out), st.BytesOut, st.In, sum(st.In), st.BytesIn)
		}
		if st.Out.Updates == 0 || st.Out.Mutations == 0 || st.Out.Messages == 0 || st.Out.Control == 0 ||
			st.In.Acks == 0 || st.In.Messages == 0 || st.In.Control == 0 || st.Out.Acks != 0 {
			t.Fatalf("out %+v, in %+v", st.Out, st.In)
		}
		if len(st.MessagesOut) != 1 || !strings.HasSuffix(st.MessagesOut[0].Name, ".Notice") || st.MessagesOut[0].Messages != 6 ||
			st.MessagesOut[0].Bytes != st.Out.Messages {
			t.Fatalf("messages out %+v (all messages %d bytes)", st.MessagesOut, st.Out.Messages)
		}
	})
}
