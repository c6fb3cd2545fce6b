package replicate_test

import (
	"fmt"
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
