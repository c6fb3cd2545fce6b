package replicate_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

type Position struct{ X, Y float64 }
type Health struct{ HP int32 }

// Owner refers to another entity (mapped server -> client).
type Owner struct{ E ecs.Entity }

func (o *Owner) MapEntities(m ecs.EntityMapper) {
	if o.E != 0 {
		o.E = m.MapEntity(o.E)
	}
}

// Secret is never replicated; Hidden filters a rule.
type Secret struct{ V int }

type Chat struct {
	Seq  int32
	Text [16]byte
}

type Notice struct{ Seq int32 }

// Blob and BlobU are server messages of any length (reliable, unreliable).
type (
	Blob  []byte
	BlobU []byte
)

// bytesCodec encodes a byte string as itself.
type bytesCodec[T ~[]byte] struct{}

func (bytesCodec[T]) Append(dst []byte, v *T) []byte { return append(dst, *v...) }
func (bytesCodec[T]) Decode(src []byte, v *T) error {
	*v = append(T(nil), src...)
	return nil
}

// Target is a client message naming an entity.
type Target struct{ E ecs.Entity }

func (t *Target) MapEntities(m ecs.EntityMapper) { t.E = m.MapEntity(t.E) }

type testProto struct {
	p       *replicate.Protocol
	chat    replicate.MessageType[Chat]
	notice  replicate.MessageType[Notice]
	indep   replicate.MessageType[Health]
	target  replicate.MessageType[Target]
	ordered replicate.MessageType[Position]
	blob    replicate.MessageType[Blob]  // server to client, reliable ordered
	blobU   replicate.MessageType[BlobU] // server to client, unreliable
}

func newProto(t testing.TB) testProto {
	t.Helper()
	p := replicate.NewProtocol()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := replicate.Component[Position](p, replicate.WithOwnRule())
	must(err)
	_, err = replicate.Component[Health](p, replicate.WithOwnRule())
	must(err)
	_, err = replicate.Component[Owner](p, replicate.WithOwnRule())
	must(err)
	tp := testProto{p: p}
	tp.chat, err = replicate.RegisterMessage[Chat](p, replicate.ClientToServer, transport.ReliableOrdered)
	must(err)
	tp.notice, err = replicate.RegisterMessage[Notice](p, replicate.ServerToClient, transport.ReliableOrdered)
	must(err)
	tp.indep, err = replicate.RegisterMessage[Health](p, replicate.ServerToClient, transport.ReliableUnordered, replicate.Independent())
	must(err)
	tp.target, err = replicate.RegisterMessage[Target](p, replicate.ClientToServer, transport.ReliableOrdered)
	must(err)
	tp.ordered, err = replicate.RegisterMessage[Position](p, replicate.ServerToClient, transport.Unreliable)
	must(err)
	tp.blob, err = replicate.RegisterMessage[Blob](p, replicate.ServerToClient, transport.ReliableOrdered, replicate.WithMessageCodec[Blob](bytesCodec[Blob]{}, "bytes"))
	must(err)
	tp.blobU, err = replicate.RegisterMessage[BlobU](p, replicate.ServerToClient, transport.Unreliable, replicate.WithMessageCodec[BlobU](bytesCodec[BlobU]{}, "bytes"))
	must(err)
	return tp
}

func newHarness(t *testing.T, tp testProto, cfg replicate.ServerConfig) *harness {
	t.Helper()
	sw := ecs.New()
	h := &harness{t: t, proto: tp.p, sw: sw, now: time.Unix(1e9, 0)}
	cfg.World, cfg.Protocol, cfg.Now = sw, tp.p, h.clock
	srv, err := replicate.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	return h
}

func spawnRep(w *ecs.World, pos Position, hp int32) ecs.Entity {
	e := w.Spawn()
	_ = ecs.Register[replicate.Replicated](w).Set(e, replicate.Replicated{})
	_ = ecs.Register[Position](w).Set(e, pos)
	_ = ecs.Register[Health](w).Set(e, Health{hp})
	ecs.Register[Owner](w)
	return e
}

// view is what a client should hold: per server entity, its replicated values.
type entView struct {
	pos    Position
	hasPos bool
	hp     Health
	hasHP  bool
	owner  ecs.Entity // server entity
	hasOwn bool
}

func serverView(h *harness, visible func(ecs.Entity) bool) map[ecs.Entity]entView {
	w := h.sw
	out := map[ecs.Entity]entView{}
	rep := ecs.StoreOf[replicate.Replicated](w)
	for e := range w.Entities() {
		if !rep.Has(e) || (visible != nil && !visible(e)) {
			continue
		}
		var v entView
		v.pos, v.hasPos = ecs.StoreOf[Position](w).Get(e)
		v.hp, v.hasHP = ecs.StoreOf[Health](w).Get(e)
		var o Owner
		o, v.hasOwn = ecs.StoreOf[Owner](w).Get(e)
		v.owner = o.E
		if v.hasOwn && o.E != 0 && (!w.Alive(o.E) || !rep.Has(o.E) || (visible != nil && !visible(o.E))) {
			v.owner = 0
		}
		out[e] = v
	}
	return out
}

func clientView(c *replicate.Client, w *ecs.World) map[ecs.Entity]entView {
	out := map[ecs.Entity]entView{}
	for e := range w.Entities() {
		se, ok := c.ServerEntity(e)
		if !ok {
			continue
		}
		var v entView
		v.pos, v.hasPos = ecs.StoreOf[Position](w).Get(e)
		v.hp, v.hasHP = ecs.StoreOf[Health](w).Get(e)
		var o Owner
		o, v.hasOwn = ecs.StoreOf[Owner](w).Get(e)
		if o.E != 0 {
			v.owner, _ = c.ServerEntity(o.E)
		}
		out[se] = v
	}
	return out
}

func diffViews(want, got map[ecs.Entity]entView) string {
	for e, w := range want {
		g, ok := got[e]
		if !ok {
			return fmt.Sprintf("entity %v missing on the client", e)
		}
		if g != w {
			_, ok := got[w.owner]
			return fmt.Sprintf("entity %v: client %+v, server %+v (owner on client: %v)", e, g, w, ok)
		}
	}
	for e := range got {
		if _, ok := want[e]; !ok {
			return fmt.Sprintf("entity %v on the client but not visible on the server", e)
		}
	}
	return ""
}

func (h *harness) converge(rounds int, visible func(i int) func(ecs.Entity) bool) {
	h.t.Helper()
	for r := 0; r < rounds; r++ {
		h.exchange()
	}
	for i, c := range h.clients {
		var vis func(ecs.Entity) bool
		if visible != nil {
			vis = visible(i)
		}
		if d := diffViews(serverView(h, vis), clientView(c, h.cws[i])); d != "" {
			h.t.Fatalf("client %d: %s", i, d)
		}
	}
}

func TestConnectSpawnInsertRemoveDespawn(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	a := spawnRep(h.sw, Position{1, 2}, 10)
	b := spawnRep(h.sw, Position{3, 4}, 20)
	_ = ecs.Register[Secret](h.sw).Set(a, Secret{7})
	c := h.connect(nil)
	h.converge(3, nil)
	if c.State() != replicate.Connected || c.Entities() != 2 {
		t.Fatalf("state %v, %d entities", c.State(), c.Entities())
	}
	if evs := h.srv.Events(); len(evs) != 1 || evs[0].Kind != replicate.ClientConnected {
		t.Fatalf("server events %v", evs)
	}
	ca, _ := c.ClientEntity(a)
	if ecs.Register[Secret](h.cws[0]).Has(ca) {
		t.Fatal("an unregistered component was replicated")
	}
	// Insert with a reference, remove, despawn, spawn in one tick.
	_ = ecs.StoreOf[Owner](h.sw).Set(b, Owner{E: a})
	_ = ecs.StoreOf[Health](h.sw).Remove(a)
	d := spawnRep(h.sw, Position{5, 6}, 30)
	_ = ecs.StoreOf[Owner](h.sw).Set(d, Owner{E: d})
	h.converge(2, nil)
	cb, _ := c.ClientEntity(b)
	if o, _ := ecs.StoreOf[Owner](h.cws[0]).Get(cb); o.E != ca {
		t.Fatalf("reference not mapped: %v, want %v", o.E, ca)
	}
	_ = h.sw.Despawn(a)
	h.converge(2, nil)
	if h.cws[0].Alive(ca) || c.Entities() != 2 {
		t.Fatal("despawn not replicated")
	}
	// Removing Replicated despawns on the client too.
	_ = ecs.StoreOf[replicate.Replicated](h.sw).Remove(d)
	h.converge(2, nil)
	if c.Entities() != 1 {
		t.Fatalf("%d entities after removing Replicated", c.Entities())
	}
}

func TestMutationsLostResentStale(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{MutationTimeout: 1})
	e := spawnRep(h.sw, Position{}, 1)
	c := h.connect(nil)
	h.converge(3, nil)
	pos := ecs.StoreOf[Position](h.sw)
	// Lose every unreliable message for a while: values are resent and converge.
	h.hooks = &netHooks{drop: func(ch transport.Channel, _ []byte) bool { return true }}
	for i := 0; i < 5; i++ {
		_ = pos.Set(e, Position{X: float64(i)})
		h.exchange()
	}
	ce, _ := c.ClientEntity(e)
	if p, _ := ecs.StoreOf[Position](h.cws[0]).Get(ce); p.X == 4 {
		t.Fatal("value arrived through a dropped channel")
	}
	h.hooks = nil
	h.converge(3, nil)
	st, _ := h.srv.Stats(c.ID())
	if st.Resent == 0 {
		t.Fatal("no resends counted")
	}
	// Stale: a mutation of an older tick delivered after a newer one is ignored.
	var held []pipeMsg
	h.hooks = &netHooks{drop: func(ch transport.Channel, m []byte) bool {
		held = append(held, pipeMsg{ch: ch, data: append([]byte(nil), m...)})
		return true
	}}
	_ = pos.Set(e, Position{X: 100})
	h.exchange() // tick with X=100 captured
	h.hooks = nil
	_ = pos.Set(e, Position{X: 200})
	h.exchange()
	h.exchange()
	h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, held...) // the old one arrives late
	h.clients[0].Update()
	if p, _ := ecs.StoreOf[Position](h.cws[0]).Get(ce); p.X != 200 {
		t.Fatalf("stale value applied: %v", p.X)
	}
	if c.Stats().Stale == 0 {
		t.Fatal("stale mutation not counted")
	}
}

func TestMutationsSplitAcrossMessages(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	ents := spawnMany(h, 300)
	c := h.connect(nil)
	h.converge(3, nil)
	for i, e := range ents {
		_ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: float64(i), Y: 1})
	}
	var sizes []int
	h.hooks = &netHooks{drop: func(ch transport.Channel, m []byte) bool {
		sizes = append(sizes, len(m))
		return false
	}}
	h.exchange()
	if len(sizes) < 5 {
		t.Fatalf("300 changed positions sent in %d messages", len(sizes))
	}
	for _, s := range sizes {
		if s > transport.DefaultMaxUnreliableSize {
			t.Fatalf("message of %d bytes", s)
		}
	}
	if !c.TickComplete(h.srv.Tick()) {
		t.Fatal("tick not complete after all its messages arrived")
	}
	h.hooks = nil
	h.converge(2, nil)
	// Losing one of the split messages leaves the tick incomplete.
	for _, e := range ents {
		_ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: 5})
	}
	n := 0
	h.hooks = &netHooks{drop: func(ch transport.Channel, m []byte) bool { n++; return n == 2 }}
	h.exchange()
	if c.TickComplete(h.srv.Tick()) {
		t.Fatal("tick complete with a message lost")
	}
	h.hooks = nil
	h.converge(10, nil) // the lost values are resent after the ack timeout (~7 ticks)
}

func TestVisibility(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{HiddenByDefault: true})
	a := spawnRep(h.sw, Position{1, 1}, 1)
	b := spawnRep(h.sw, Position{2, 2}, 2)
	_ = ecs.StoreOf[Owner](h.sw).Set(b, Owner{E: a})
	c1 := h.connect(nil)
	c2 := h.connect(nil)
	h.exchange()
	h.exchange()
	_ = h.srv.SetVisible(c1.ID(), b, true)
	visible := func(i int) func(ecs.Entity) bool {
		return func(e ecs.Entity) bool { return i == 0 && e == b }
	}
	h.converge(2, visible)
	if c1.Entities() != 1 || c2.Entities() != 0 {
		t.Fatalf("entities %d / %d", c1.Entities(), c2.Entities())
	}
	// A reference to a hidden entity is none on the client.
	cb, _ := c1.ClientEntity(b)
	if o, _ := ecs.StoreOf[Owner](h.cws[0]).Get(cb); o.E != 0 {
		t.Fatalf("reference to a hidden entity: %v", o.E)
	}
	// Hidden while changing, then visible again: sent whole with the latest values.
	_ = h.srv.SetVisible(c1.ID(), b, false)
	h.exchange()
	_ = ecs.StoreOf[Position](h.sw).Set(b, Position{9, 9})
	h.exchange()
	if c1.Entities() != 0 {
		t.Fatal("hidden entity still on the client")
	}
	_ = h.srv.SetVisible(c1.ID(), b, true)
	h.converge(2, visible)
}

func TestMessagesBothWays(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	e := spawnRep(h.sw, Position{}, 1)
	c1 := h.connect(nil)
	c2 := h.connect(nil)
	h.converge(3, nil)
	for i := int32(0); i < 5; i++ {
		if err := tp.chat.SendToServer(c1, Chat{Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	ce, _ := c1.ClientEntity(e)
	_ = tp.target.SendToServer(c1, Target{E: ce})
	h.exchange()
	h.exchange()
	got := tp.chat.ReceiveFromClients(h.srv)
	if len(got) != 5 || got[4].Message.Seq != 4 || got[0].Client != c1.ID() {
		t.Fatalf("server got %+v", got)
	}
	tg := tp.target.ReceiveFromClients(h.srv)
	if len(tg) != 1 || tg[0].Message.E != e {
		t.Fatalf("mapped client message %+v, want server entity %v", tg, e)
	}
	// Server -> clients with targets.
	_ = tp.notice.SendToClients(h.srv, replicate.All(), Notice{1})
	_ = tp.notice.SendToClients(h.srv, replicate.AllExcept(c1.ID()), Notice{2})
	_ = tp.notice.SendToClients(h.srv, replicate.Single(c1.ID()), Notice{3})
	h.exchange()
	n1, n2 := tp.notice.ReceiveFromServer(c1), tp.notice.ReceiveFromServer(c2)
	if len(n1) != 2 || n1[0].Seq != 1 || n1[1].Seq != 3 || len(n2) != 2 || n2[1].Seq != 2 {
		t.Fatalf("client messages %v / %v", n1, n2)
	}
	// A message sent in the tick an entity spawns is held until the spawn
	// (its update) has been applied, unless independent.
	h.hooks = &netHooks{rnd: rand.New(rand.NewPCG(1, 1)), relDelay: 0}
	e2 := spawnRep(h.sw, Position{7, 7}, 7)
	_ = tp.notice.SendToClients(h.srv, replicate.All(), Notice{4})
	_ = tp.indep.SendToClients(h.srv, replicate.All(), Health{5})
	h.srv.Send()
	// Deliver the message before the update by reordering the server's outbox.
	out := h.srvEnds[0].outbox
	var msgs, rest []pipeMsg
	for _, m := range out {
		if m.data[0] == 14 {
			msgs = append(msgs, m)
		} else {
			rest = append(rest, m)
		}
	}
	h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, msgs...)
	h.srvEnds[0].outbox = rest
	c1.Update()
	if n := tp.notice.ReceiveFromServer(c1); len(n) != 0 {
		t.Fatalf("message delivered before its update: %v", n)
	}
	if n := tp.indep.ReceiveFromServer(c1); len(n) != 1 {
		t.Fatalf("independent message held: %v", n)
	}
	h.srvEnds[0].flow(nil)
	c1.Update()
	if _, ok := c1.ClientEntity(e2); !ok {
		t.Fatal("spawn not applied")
	}
	if n := tp.notice.ReceiveFromServer(c1); len(n) != 1 || n[0].Seq != 4 {
		t.Fatalf("held message after its update: %v", n)
	}
}

func TestProtocolMismatchAndAuth(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{Authenticate: func(id replicate.ClientID, token []byte) error {
		if string(token) != "secret" {
			return errors.New("bad token")
		}
		return nil
	}})
	spawnRep(h.sw, Position{}, 1)
	// Another protocol: one more component.
	other := newProto(t)
	h.proto = other.p
	type Extra struct{ A int8 }
	_, _ = replicate.Component[Extra](other.p, replicate.WithOwnRule())
	bad := h.connect([]byte("secret"))
	h.proto = tp.p
	wrongToken := h.connect([]byte("guess"))
	good := h.connect([]byte("secret"))
	for i := 0; i < 4; i++ {
		h.exchange()
	}
	if !errors.Is(bad.Err(), replicate.ErrProtocolMismatch) || bad.State() != replicate.Disconnected {
		t.Fatalf("mismatched client: %v %v", bad.State(), bad.Err())
	}
	if !errors.Is(wrongToken.Err(), replicate.ErrRejected) || wrongToken.Entities() != 0 {
		t.Fatalf("wrong token: %v, %d entities", wrongToken.Err(), wrongToken.Entities())
	}
	if good.State() != replicate.Connected || good.Entities() != 1 {
		t.Fatalf("good client %v with %d entities", good.State(), good.Entities())
	}
	rejected := 0
	for _, ev := range h.srv.Events() {
		if ev.Kind == replicate.ClientRejected {
			rejected++
		}
	}
	if rejected != 2 {
		t.Fatalf("%d rejections", rejected)
	}
}

func TestDisconnectClearsBothSides(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	spawnRep(h.sw, Position{}, 1)
	c := h.connect(nil)
	h.converge(3, nil)
	_ = h.srv.Disconnect(c.ID(), "kicked")
	h.exchange()
	if c.State() != replicate.Disconnected || c.Entities() != 0 || h.cws[0].Len() != 0 {
		t.Fatalf("client after kick: %v, %d entities, world %d", c.State(), c.Entities(), h.cws[0].Len())
	}
	if len(h.srv.Clients()) != 0 {
		t.Fatal("server kept the client")
	}
	// Late joiner gets the full state.
	spawnRep(h.sw, Position{2, 2}, 2)
	late := h.connect(nil)
	for i := 0; i < 3; i++ {
		h.exchange()
	}
	if late.Entities() != 2 {
		t.Fatalf("late joiner has %d entities", late.Entities())
	}
}

func TestHostileClient(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{MaxViolations: 10})
	hidden := spawnRep(h.sw, Position{}, 1)
	good := h.connect(nil)
	evil := h.connect(nil)
	h.converge(3, nil)
	end := h.cliEnds[1]
	// Garbage, unknown kinds, bad messages, a reference to an unknown entity.
	for i := 0; i < 20; i++ {
		_ = end.Send(transport.ReliableOrdered, []byte{3, 99})
		_ = end.Send(transport.ReliableOrdered, []byte{byte(i), 0xff, 0xff})
		_ = end.Send(transport.Unreliable, []byte{2, 200})
	}
	_ = tp.target.SendToServer(evil, Target{E: ecs.NewEntity(500, 1)})
	_ = hidden
	h.exchange()
	h.exchange()
	if evil.State() != replicate.Disconnected {
		t.Fatal("misbehaving client still connected")
	}
	if got := tp.target.ReceiveFromClients(h.srv); len(got) != 0 {
		t.Fatalf("bad reference delivered: %v", got)
	}
	_ = ecs.StoreOf[Position](h.sw).Set(hidden, Position{3, 3})
	h.exchange()
	h.exchange()
	if good.State() != replicate.Connected {
		t.Fatal("well-behaved client hurt")
	}
	gv := clientView(good, h.cws[0])
	if d := diffViews(serverView(h, nil), gv); d != "" {
		t.Fatal(d)
	}
}

// TestClientMessageNoneReference: a client message whose entity reference
// is empty (the zero Entity) is valid data, delivered as none; it is no
// violation however often it is sent.
func TestClientMessageNoneReference(t *testing.T) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{MaxViolations: 4})
	e := spawnRep(h.sw, Position{}, 1)
	c := h.connect(nil)
	h.converge(3, nil)
	ce, _ := c.ClientEntity(e)
	for i := 0; i < 20; i++ {
		if err := tp.target.SendToServer(c, Target{E: 0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.target.SendToServer(c, Target{E: ce}); err != nil {
		t.Fatal(err)
	}
	h.exchange()
	h.exchange()
	if c.State() != replicate.Connected {
		t.Fatalf("client disconnected for empty references: %v", c.Err())
	}
	st, err := h.srv.Stats(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	if st.Violations != 0 {
		t.Fatalf("%d violations counted for empty references", st.Violations)
	}
	got := tp.target.ReceiveFromClients(h.srv)
	if len(got) != 21 {
		t.Fatalf("%d messages delivered, want 21", len(got))
	}
	for _, m := range got[:20] {
		if m.Message.E != 0 {
			t.Fatalf("empty reference delivered as %v", m.Message.E)
		}
	}
	if got[20].Message.E != e {
		t.Fatalf("reference delivered as %v, want server entity %v", got[20].Message.E, e)
	}
}
