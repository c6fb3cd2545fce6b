package replicate_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// frame runs one server frame of tick f in phases: Receive, then game
// reads the client messages (simulation of f), then SendTick(f); then
// each client's update, traffic both ways.
func (h *harness) frame(f tick.Tick, sim func()) {
	h.t.Helper()
	h.now = h.now.Add(time.Second / 60)
	h.srv.Receive()
	if sim != nil {
		sim()
	}
	if err := h.srv.SendTick(f); err != nil {
		h.t.Fatal(err)
	}
	for i := range h.clients {
		h.srvEnds[i].flow(h.hooks)
		h.clients[i].Update()
		h.cliEnds[i].flow(h.hooks)
	}
}

// TestServerFrameReadsBeforeSimulating: a client message sent before frame
// F is read by the receive phase of F, so the game simulates F with it (no
// tick of added latency), and the game's simulation ticks (with gaps) are
// the ticks the client sees.
func TestServerFrameReadsBeforeSimulating(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	e := spawnRep(h.sw, Position{1, 1}, 1)
	c := h.connect(nil)
	h.frame(100, nil)
	h.frame(101, nil)
	if c.State() != replicate.Connected || c.UpdateTick() != 101 {
		t.Fatalf("state %v, update tick %v; want connected at 101", c.State(), c.UpdateTick())
	}
	if err := tp.chat.SendToServer(c, Chat{Seq: 7}); err != nil {
		t.Fatal(err)
	}
	h.cliEnds[0].flow(nil)
	var got []Chat
	h.frame(110, func() {
		for _, m := range tp.chat.ReceiveFromClients(h.srv) {
			got = append(got, m.Message)
		}
		// The simulation of 110 acts on the message.
		_ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: 110})
	})
	if len(got) != 1 || got[0].Seq != 7 {
		t.Fatalf("messages read during frame 110: %v, want the chat sent before it", got)
	}
	if p, _ := ecs.StoreOf[Position](h.cws[0]).Get(mustClient(t, c, e)); p.X != 110 || c.UpdateTick() != 101 {
		t.Fatalf("client position %v (update tick %v), want X 110 from tick 110", p, c.UpdateTick())
	}
	if !c.TickComplete(110) {
		t.Fatal("tick 110 not complete on the client")
	}
	if err := h.srv.SendTick(110); !errors.Is(err, replicate.ErrTick) {
		t.Fatalf("SendTick of an old tick: %v, want ErrTick", err)
	}
	if h.srv.Tick() != 110 {
		t.Fatalf("server tick %v, want 110", h.srv.Tick())
	}
	h.srv.Send() // the convenience: the tick after the last
	if h.srv.Tick() != 111 {
		t.Fatalf("server tick after Send %v, want 111", h.srv.Tick())
	}
}

func mustClient(t *testing.T, c *replicate.Client, se ecs.Entity) ecs.Entity {
	t.Helper()
	ce, ok := c.ClientEntity(se)
	if !ok {
		t.Fatalf("server entity %v not replicated", se)
	}
	return ce
}

type hookCall struct {
	what string
	e    ecs.Entity
	t    tick.Tick
	kind replicate.ValueKind
}

// TestClientHooksAtTicks: spawns, values, removals and despawns reach the
// hooks with the server tick of the frame that made them; a taken despawn
// leaves the entity in the World for its owner but ends its replication.
func TestClientHooksAtTicks(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	c := h.connect(nil)
	var calls []hookCall
	if err := replicate.SetHooks(c, replicate.ComponentHooks[Health]{
		Value: func(e ecs.Entity, tk tick.Tick, v Health, k replicate.ValueKind) bool {
			calls = append(calls, hookCall{"value", e, tk, k})
			return true
		},
		Remove: func(e ecs.Entity, tk tick.Tick) bool {
			calls = append(calls, hookCall{what: "remove", e: e, t: tk})
			return true
		},
	}); err != nil {
		t.Fatal(err)
	}
	c.SetClientHooks(replicate.ClientHooks{
		Spawn: func(e ecs.Entity, tk tick.Tick) { calls = append(calls, hookCall{what: "spawn", e: e, t: tk}) },
		Despawn: func(e ecs.Entity, tk tick.Tick) bool {
			calls = append(calls, hookCall{what: "despawn", e: e, t: tk})
			return true
		},
	})
	h.frame(5, nil)
	h.frame(6, nil)
	var se ecs.Entity
	h.frame(7, func() { se = spawnRep(h.sw, Position{1, 2}, 3) })
	ce := mustClient(t, c, se)
	h.frame(8, func() { _ = ecs.StoreOf[Health](h.sw).Set(se, Health{4}) })
	h.frame(9, func() { _ = ecs.StoreOf[Health](h.sw).Remove(se) })
	h.frame(12, func() { _ = h.sw.Despawn(se) })
	want := []hookCall{
		{"spawn", ce, 7, 0},
		{"value", ce, 7, replicate.ValueInserted},
		{"value", ce, 8, replicate.ValueAuthoritative},
		{"remove", ce, 9, 0},
		{"despawn", ce, 12, 0},
	}
	if !slices.Equal(calls, want) {
		t.Fatalf("hook calls\n got %v\nwant %v", calls, want)
	}
	if !h.cws[0].Alive(ce) {
		t.Fatal("a taken despawn despawned the entity")
	}
	if _, ok := c.ServerEntity(ce); ok || c.Entities() != 0 {
		t.Fatal("a despawned entity is still replicated")
	}
	if _, ok := ecs.StoreOf[Health](h.cws[0]).Get(ce); ok {
		t.Fatal("Health written into the World although its hooks took it")
	}
}

// TestRemappedValueIsNotAPastValue: a value referring to an entity hidden
// from the client is given again when that entity appears, as
// ValueRemapped at the tick it appeared, never as an authoritative value
// of its old tick (which a prediction layer would take for a correction
// of the past).
func TestRemappedValueIsNotAPastValue(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	c := h.connect(nil)
	var calls []hookCall
	if err := replicate.SetHooks(c, replicate.ComponentHooks[Owner]{
		Value: func(e ecs.Entity, tk tick.Tick, v Owner, k replicate.ValueKind) bool {
			calls = append(calls, hookCall{"value", v.E, tk, k})
			return false // written into the World too
		},
	}); err != nil {
		t.Fatal(err)
	}
	h.frame(1, nil)
	h.frame(2, nil)
	var target, holder ecs.Entity
	h.frame(3, func() {
		target = spawnRep(h.sw, Position{1, 1}, 1)
		holder = spawnRep(h.sw, Position{2, 2}, 2)
		_ = ecs.StoreOf[Owner](h.sw).Set(holder, Owner{E: target})
		_ = h.srv.SetVisible(c.ID(), target, false)
	})
	h.frame(4, nil)
	h.frame(5, func() { _ = h.srv.SetVisible(c.ID(), target, true) })
	ct := mustClient(t, c, target)
	want := []hookCall{
		{"value", 0, 3, replicate.ValueInserted},
		{"value", ct, 5, replicate.ValueRemapped},
	}
	if !slices.Equal(calls, want) {
		t.Fatalf("Owner hook calls\n got %v\nwant %v", calls, want)
	}
	if o, _ := ecs.StoreOf[Owner](h.cws[0]).Get(mustClient(t, c, holder)); o.E != ct {
		t.Fatalf("owner %v, want %v", o.E, ct)
	}
}

// TestLateValuesReachHook: mutation messages delayed past newer ones (so
// stale for the World, which keeps the newest value) still reach the value
// hook with their own tick: the server's value at every tick arrives.
func TestLateValuesReachHook(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	h.hooks = &netHooks{rnd: rand.New(rand.NewPCG(3, 4)), maxDelay: 3}
	c := h.connect(nil)
	got := map[tick.Tick]float64{}
	if err := replicate.SetHooks(c, replicate.ComponentHooks[Position]{
		Value: func(e ecs.Entity, tk tick.Tick, v Position, k replicate.ValueKind) bool {
			got[tk] = v.X
			return false
		},
	}); err != nil {
		t.Fatal(err)
	}
	e := spawnRep(h.sw, Position{}, 1)
	for f := tick.Tick(1); f <= 60; f++ {
		h.frame(f, func() { _ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: float64(f)}) })
	}
	h.hooks = nil
	for f := tick.Tick(61); f <= 70; f++ {
		h.frame(f, nil)
	}
	if c.Stats().Stale == 0 {
		t.Fatal("no mutation arrived late: the test does not test anything")
	}
	for f := tick.Tick(2); f <= 60; f++ {
		if x, ok := got[f]; !ok || x != float64(f) {
			t.Fatalf("value of tick %v: %v (%v), want %v; stale %d", f, x, ok, f, c.Stats().Stale)
		}
	}
}

// TestAdoptHook: a spawn carrying a value the client's adopt hook
// recognises reaches the client as the entity the hook names (no new
// entity, the server's values written to it, the mapping both ways);
// an answer naming an entity already replicating another server entity,
// or a dead one, is refused and counted, and the spawn gets a new entity.
// Mutations never consult the hook.
func TestAdoptHook(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	c := h.connect(nil)
	h.exchange()
	cw := h.cws[0]
	predicted := cw.Spawn()
	_ = ecs.Register[Health](cw).Set(predicted, Health{HP: 1})
	dead := cw.Spawn()
	_ = cw.Despawn(dead)
	type call struct {
		t  tick.Tick
		hp int32
	}
	var calls []call
	if err := replicate.SetHooks(c, replicate.ComponentHooks[Health]{
		Adopt: func(t tick.Tick, v Health) (ecs.Entity, bool) {
			calls = append(calls, call{t, v.HP})
			switch v.HP {
			case 50, 51:
				return predicted, true
			case 52:
				return dead, true
			}
			return 0, false
		},
	}); err != nil {
		t.Fatal(err)
	}
	before := cw.Len()
	a := spawnRep(h.sw, Position{5, 5}, 50)
	h.exchange()
	spawnTick := h.srv.Tick()
	if got, _ := c.ClientEntity(a); got != predicted || cw.Len() != before {
		t.Fatalf("server entity mapped to %v (%d entities, had %d), want the predicted %v and no new entity", got, cw.Len(), before, predicted)
	}
	if se, _ := c.ServerEntity(predicted); se != a {
		t.Fatalf("predicted entity replicates %v, want %v", se, a)
	}
	if hp, _ := ecs.StoreOf[Health](cw).Get(predicted); hp.HP != 50 {
		t.Fatalf("adopted entity has %v, want the server's 50", hp)
	}
	if p, _ := ecs.StoreOf[Position](cw).Get(predicted); p != (Position{5, 5}) {
		t.Fatalf("adopted entity has %v, want the server's position", p)
	}
	_ = ecs.StoreOf[Health](h.sw).Set(a, Health{HP: 49}) // a mutation: no hook call
	h.exchange()
	if len(calls) != 1 || calls[0] != (call{spawnTick, 50}) {
		t.Fatalf("hook calls %v, want one at tick %v with 50", calls, spawnTick)
	}
	b := spawnRep(h.sw, Position{}, 51) // names the entity already adopted
	d := spawnRep(h.sw, Position{}, 52) // names a dead entity
	e := spawnRep(h.sw, Position{}, 53) // not recognised
	h.exchange()
	for _, se := range []ecs.Entity{b, d, e} {
		ce, ok := c.ClientEntity(se)
		if !ok || ce == predicted || ce == dead || !cw.Alive(ce) {
			t.Fatalf("server entity %v reached the client as %v (%v), want a new entity", se, ce, ok)
		}
	}
	if st := c.Stats(); st.Adopted != 1 || st.Unmatched != 2 {
		t.Fatalf("adopted %d unmatched %d, want 1 and 2", st.Adopted, st.Unmatched)
	}
}
