package replicate_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

func TestSaveLoadState(t *testing.T) {
	tp := newProto(t)
	w := ecs.New()
	a := spawnRep(w, Position{1, 2}, 3)
	b := spawnRep(w, Position{4, 5}, 6)
	_ = ecs.StoreOf[Owner](w).Set(b, Owner{E: a})
	plain := w.Spawn() // not replicated: not saved
	_ = ecs.StoreOf[Position](w).Set(plain, Position{9, 9})
	var buf bytes.Buffer
	if err := replicate.SaveState(&buf, w, tp.p); err != nil {
		t.Fatal(err)
	}
	w2 := ecs.New()
	w2.Spawn() // ids differ from the saved ones
	m, err := replicate.LoadState(bytes.NewReader(buf.Bytes()), w2, tp.p)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || w2.Len() != 3 {
		t.Fatalf("loaded %d entities, world has %d", len(m), w2.Len())
	}
	if p, _ := ecs.StoreOf[Position](w2).Get(m[b]); p != (Position{4, 5}) {
		t.Fatalf("position %v", p)
	}
	if o, _ := ecs.StoreOf[Owner](w2).Get(m[b]); o.E != m[a] {
		t.Fatalf("reference %v, want %v", o.E, m[a])
	}
	other := newProto(t)
	_ = other.p.AddCustom("v2")
	if _, err := replicate.LoadState(bytes.NewReader(buf.Bytes()), ecs.New(), other.p); !errors.Is(err, replicate.ErrProtocolMismatch) {
		t.Fatalf("other protocol: %v", err)
	}
	bad := append([]byte(nil), buf.Bytes()...)
	bad = bad[:len(bad)-3]
	if _, err := replicate.LoadState(bytes.NewReader(bad), ecs.New(), tp.p); !errors.Is(err, replicate.ErrMalformed) {
		t.Fatalf("truncated: %v", err)
	}
}

// TestPredictionHooks: values routed to a receive hook with their tick, the
// tick-complete signal, confirm history, and a client-predicted spawn
// adopted by its server entity.
func TestPredictionHooks(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	var completed []tick.Tick
	cw := ecs.New()
	c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: tp.p, TickComplete: func(t tick.Tick) { completed = append(completed, t) }})
	if err != nil {
		t.Fatal(err)
	}
	se, ce := newPipe()
	h.srv.AddConn(se)
	_ = c.Connect(ce)
	h.cws, h.clients, h.srvEnds, h.cliEnds = append(h.cws, cw), append(h.clients, c), append(h.srvEnds, se), append(h.cliEnds, ce)
	e := spawnRep(h.sw, Position{1, 1}, 1)
	h.converge(3, nil)
	type hooked struct {
		t tick.Tick
		v Position
	}
	var got []hooked
	if err := replicate.SetReceiveHook(c, func(_ ecs.Entity, t tick.Tick, v Position) bool {
		got = append(got, hooked{t, v})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	_ = ecs.StoreOf[Position](h.sw).Set(e, Position{2, 2})
	h.exchange()
	cl, _ := c.ClientEntity(e)
	if len(got) != 1 || got[0].v != (Position{2, 2}) || got[0].t != h.srv.Tick() {
		t.Fatalf("hook got %+v (server tick %d)", got, h.srv.Tick())
	}
	if p, _ := ecs.StoreOf[Position](cw).Get(cl); p != (Position{1, 1}) {
		t.Fatalf("hooked value also written: %v", p)
	}
	if len(completed) == 0 || completed[len(completed)-1] != h.srv.Tick() || !c.TickComplete(h.srv.Tick()) {
		t.Fatalf("completed ticks %v, server at %d", completed, h.srv.Tick())
	}
	last, mask, ok := c.ConfirmHistory(cl)
	if !ok || last != h.srv.Tick() || mask&1 == 0 {
		t.Fatalf("confirm history %d %b %v", last, mask, ok)
	}
	// Predicted spawn: the client spawns a projectile, the server maps its
	// own projectile to it.
	predicted := cw.Spawn()
	_ = ecs.StoreOf[Health](cw).Set(predicted, Health{99})
	proj := spawnRep(h.sw, Position{5, 5}, 50)
	if err := h.srv.MapClientEntity(c.ID(), proj, predicted); err != nil {
		t.Fatal(err)
	}
	h.exchange()
	if got, _ := c.ClientEntity(proj); got != predicted {
		t.Fatalf("server projectile mapped to %v, want the predicted %v", got, predicted)
	}
	if hp, _ := ecs.StoreOf[Health](cw).Get(predicted); hp.HP != 50 {
		t.Fatalf("authoritative value not applied to the predicted entity: %v", hp)
	}
}

// FuzzClientReceive feeds arbitrary server messages to a connected client.
func FuzzClientReceive(f *testing.F) {
	f.Add([]byte{12, 5, 0, 0, 0, 1, 3, 1, 1, 1, 0, 16, 0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 0, 64})
	f.Add([]byte{13, 9, 9, 1, 0, 1, 3, 1, 1, 1, 2, 4, 1, 0, 0, 0})
	f.Add([]byte{14, 1, 0, 7, 0, 0, 0})
	f.Add([]byte{15, 28, 0, 12, 5, 0, 0, 0, 1, 3, 1, 1, 1, 0, 16}) // the first part of an update
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := newProto(t)
		h := newHarness(t, tp, replicate.ServerConfig{})
		spawnRep(h.sw, Position{}, 1)
		c := h.connect(nil)
		h.exchange()
		h.exchange()
		h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, pipeMsg{ch: transport.Unreliable, data: b}, pipeMsg{ch: transport.ReliableOrdered, data: b})
		c.Update()
		_ = tp.notice.ReceiveFromServer(c)
		_ = tp.ordered.ReceiveFromServer(c)
	})
}

// FuzzServerReceive feeds arbitrary client messages to a server.
func FuzzServerReceive(f *testing.F) {
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 2, 0, 1})
	f.Add([]byte{3, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := newProto(t)
		h := newHarness(t, tp, replicate.ServerConfig{})
		spawnRep(h.sw, Position{}, 1)
		h.connect(nil)
		h.exchange()
		h.exchange()
		for i := 0; i < 3; i++ {
			h.srvEnds[0].inbox = append(h.srvEnds[0].inbox, pipeMsg{ch: transport.Channel(i), data: b})
		}
		h.exchange()
		_ = tp.chat.ReceiveFromClients(h.srv)
		_ = tp.target.ReceiveFromClients(h.srv)
	})
}

func FuzzLoadState(f *testing.F) {
	tp := newProto(f)
	w := ecs.New()
	a := spawnRep(w, Position{1, 2}, 3)
	_ = ecs.StoreOf[Owner](w).Set(a, Owner{E: a})
	var buf bytes.Buffer
	_ = replicate.SaveState(&buf, w, tp.p)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = replicate.LoadState(bytes.NewReader(b), ecs.New(), tp.p)
	})
}

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
