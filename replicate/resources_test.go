package replicate_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Resource types of the tests: a score (plain data, on change), a secret
// sent once, a leader naming an entity, and rng.Rand (the world's stream
// as a resource, per-player streams as a component).
type (
	Score  struct{ Red, Blue int32 }
	Hidden struct{ N uint32 }
	Leader struct{ E ecs.Entity }
)

func (l *Leader) MapEntities(m ecs.EntityMapper) { l.E = m.MapEntity(l.E) }

type resProto struct {
	testProto
	score, secret, leader, rand replicate.ResourceID
}

func newResProto(t testing.TB) resProto {
	t.Helper()
	p := replicate.NewProtocol()
	rp := resProto{testProto: testProto{p: p}}
	var errs [6]error
	_, errs[0] = replicate.Component[Position](p, replicate.WithOwnRule())
	_, errs[1] = replicate.Component[rng.Rand](p, replicate.WithOwnRule())
	rp.score, errs[2] = replicate.ReplicateResource[Score](p)
	rp.secret, errs[3] = replicate.ReplicateResource[Hidden](p, replicate.WithMode(replicate.Once))
	rp.leader, errs[4] = replicate.ReplicateResource[Leader](p)
	rp.rand, errs[5] = replicate.ReplicateResource[rng.Rand](p)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return rp
}

// TestResourceProtocol: resources are part of the protocol hash (a client
// registering another resource set, or another mode, is refused), and
// registration refuses duplicates, types that are not plain data without
// a codec, and WithOwnRule.
func TestResourceProtocol(t *testing.T) {
	base := func() *replicate.Protocol {
		p := replicate.NewProtocol()
		if _, err := replicate.Component[Position](p, replicate.WithOwnRule()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain, withRes, once := base(), base(), base()
	if _, err := replicate.ReplicateResource[rng.Rand](withRes); err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.ReplicateResource[rng.Rand](once, replicate.WithMode(replicate.Once)); err != nil {
		t.Fatal(err)
	}
	if plain.Hash() == withRes.Hash() || withRes.Hash() == once.Hash() {
		t.Fatalf("hashes %x %x %x: resources must change the protocol hash", plain.Hash(), withRes.Hash(), once.Hash())
	}
	if _, err := replicate.ReplicateResource[rng.Rand](withRes); !errors.Is(err, replicate.ErrRegistered) {
		t.Errorf("second registration: %v, want ErrRegistered", err)
	}
	if _, err := replicate.ReplicateResource[[]int](withRes); !errors.Is(err, replicate.ErrNotPlainData) {
		t.Errorf("slice resource: %v, want ErrNotPlainData", err)
	}
	if _, err := replicate.ReplicateResource[Score](withRes, replicate.WithOwnRule()); !errors.Is(err, replicate.ErrRegistered) {
		t.Errorf("WithOwnRule: %v, want ErrRegistered", err)
	}
}

func resource[T any](w *ecs.World) (T, bool) { return ecs.GetResource[T](w) }

// TestResourceReplication: a resource's insertion, changes and removal
// reach the client in the update of their tick; a tick where no resource
// changed (even one handed out for writing and left as it was) sends no
// update; Once sends the first value only; entity references map to the
// client's entities of the same update; a late joiner gets the present
// resources in its first update; a filter hides a resource from one
// client (removed there) and shows it again; a disconnect removes the
// replicated resources.
func TestResourceReplication(t *testing.T) {
	rp := newResProto(t)
	h := newHarness(t, rp.testProto, replicate.ServerConfig{})
	e := spawnRep(h.sw, Position{X: 1}, 0)
	_ = ecs.SetResource(h.sw, Score{1, 2})
	_ = ecs.SetResource(h.sw, Leader{E: e})
	_ = ecs.SetResource(h.sw, Hidden{N: 1})
	c := h.connect(nil)
	h.exchange()
	h.exchange()
	cw := h.cws[0]
	ce, _ := c.ClientEntity(e)
	if s, ok := resource[Score](cw); !ok || s != (Score{1, 2}) {
		t.Fatalf("client score %v %v, want {1 2}", s, ok)
	}
	if l, ok := resource[Leader](cw); !ok || l.E != ce || ce == 0 {
		t.Fatalf("client leader %v, want the client entity %v", l.E, ce)
	}
	updates := func() uint64 { return c.Stats().Updates }

	u := updates()
	h.exchange()
	*ecs.ResourcePtr[Score](h.sw) = Score{1, 2} // written, not changed
	h.exchange()
	if updates() != u {
		t.Fatalf("%d updates without a change, want none", updates()-u)
	}
	_ = ecs.SetResource(h.sw, Score{3, 2})
	_ = ecs.SetResource(h.sw, Hidden{N: 2})
	h.exchange()
	if s, _ := resource[Score](cw); s != (Score{3, 2}) || updates() != u+1 || c.UpdateTick() != h.srv.Tick() {
		t.Fatalf("score %v after %d updates (tick %d of %d), want {3 2} in one update of this tick", s, updates()-u, c.UpdateTick(), h.srv.Tick())
	}
	if s, _ := resource[Hidden](cw); s.N != 1 {
		t.Fatalf("secret %d: a Once resource must keep its first value", s.N)
	}
	ecs.RemoveResource[Score](h.sw)
	h.exchange()
	if _, ok := resource[Score](cw); ok {
		t.Fatal("score still present after its removal")
	}
	_ = ecs.SetResource(h.sw, Score{5, 5})
	h.exchange()
	if s, ok := resource[Score](cw); !ok || s != (Score{5, 5}) {
		t.Fatalf("score %v %v after reinsertion, want {5 5}", s, ok)
	}

	// A late joiner, with the score shown only to the first client.
	shownTo := c.ID()
	if err := h.srv.FilterResource(rp.score, func(id replicate.ClientID) bool { return id == shownTo }); err != nil {
		t.Fatal(err)
	}
	c2 := h.connect(nil)
	h.exchange()
	h.exchange()
	cw2 := h.cws[1]
	if _, ok := resource[Score](cw2); ok {
		t.Fatal("the late joiner has the score hidden from it")
	}
	if s, _ := resource[Hidden](cw2); s.N != 2 {
		t.Fatalf("late joiner's secret %d, want the current value 2", s.N)
	}
	if l, _ := resource[Leader](cw2); l.E == 0 {
		t.Fatal("late joiner's leader does not name its entity")
	}
	shownTo = c2.ID()
	h.exchange()
	if _, ok := resource[Score](cw); ok {
		t.Fatal("score still present on a client it was hidden from")
	}
	if s, _ := resource[Score](cw2); s != (Score{5, 5}) {
		t.Fatalf("score %v on the client it was shown to, want {5 5}", s)
	}
	if err := h.srv.FilterResource(99, nil); !errors.Is(err, replicate.ErrUnknownType) {
		t.Errorf("FilterResource(99): %v, want ErrUnknownType", err)
	}
	c2.Close()
	if _, ok := resource[Hidden](cw2); ok {
		t.Fatal("resources kept after a disconnect")
	}
}

// TestResourceReceiveHook: a hook takes the authoritative value with the
// tick of its update (and the removal), instead of the world.
func TestResourceReceiveHook(t *testing.T) {
	rp := newResProto(t)
	h := newHarness(t, rp.testProto, replicate.ServerConfig{})
	c := h.connect(nil)
	type got struct {
		t       tick.Tick
		v       Score
		present bool
	}
	var seen []got
	if err := replicate.SetResourceReceiveHook(c, func(t tick.Tick, v Score, present bool) bool {
		seen = append(seen, got{t, v, present})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if err := replicate.SetResourceReceiveHook(c, func(tick.Tick, Chat, bool) bool { return true }); !errors.Is(err, replicate.ErrUnknownType) {
		t.Fatalf("hook of an unregistered resource: %v", err)
	}
	h.exchange()
	_ = ecs.SetResource(h.sw, Score{7, 8})
	h.exchange()
	t1 := h.srv.Tick()
	ecs.RemoveResource[Score](h.sw)
	h.exchange()
	want := fmt.Sprint([]got{{t1, Score{7, 8}, true}, {t1 + 1, Score{}, false}})
	if fmt.Sprint(seen) != want {
		t.Fatalf("hook saw %v, want %v", seen, want)
	}
	if _, ok := resource[Score](h.cws[0]); ok {
		t.Fatal("the hook took the value, yet it was written")
	}
}

// TestResourceMalformed: resource sections with an unknown id, a repeated
// id, a bad presence byte, a short value, trailing bytes or too many
// entries make the whole update malformed: it is counted, nothing of it is
// applied, and the client disconnects (as for any malformed update: the
// ordered stream is broken). The same update well formed is applied.
func TestResourceMalformed(t *testing.T) {
	score := []byte{1, 0, 0, 0, 2, 0, 0, 0}
	// Update of tick 100: no entity sections, then the resource section.
	upd := func(sec ...[]byte) []byte {
		out := []byte{12, 100, 0, 0, 0, 0}
		for _, b := range sec {
			out = append(out, b...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		msg  []byte
		ok   bool
	}{
		{"unknown id", upd([]byte{1, 9, 1}), false},
		{"repeated id", upd([]byte{2, 0, 1}, score, []byte{0, 1}, score), false},
		{"descending ids", upd([]byte{2, 2, 0, 0, 1}, score), false},
		{"presence byte 2", upd([]byte{1, 0, 2}), false},
		{"short value", upd([]byte{1, 0, 1, 1, 0}), false},
		{"trailing byte", upd([]byte{1, 0, 1}, score, []byte{0}), false},
		{"count over 64", upd([]byte{65}), false},
		{"well formed", upd([]byte{1, 0, 1}, score), true},
	} {
		rp := newResProto(t)
		h := newHarness(t, rp.testProto, replicate.ServerConfig{})
		c := h.connect(nil)
		h.exchange()
		h.exchange()
		var applied []Score
		_ = replicate.SetResourceReceiveHook(c, func(_ tick.Tick, v Score, present bool) bool {
			if present {
				applied = append(applied, v)
			}
			return false
		})
		before := c.Stats().Malformed
		h.cliEnds[0].inbox = append(h.cliEnds[0].inbox, pipeMsg{ch: transport.ReliableOrdered, data: tc.msg})
		c.Update()
		malformed := c.Stats().Malformed - before
		switch {
		case tc.ok && (malformed != 0 || fmt.Sprint(applied) != "[{1 2}]" || c.State() != replicate.Connected):
			t.Errorf("%s: malformed %d, applied %v, %v; want applied {1 2}", tc.name, malformed, applied, c.State())
		case !tc.ok && (malformed != 1 || len(applied) != 0 || c.State() != replicate.Disconnected):
			t.Errorf("%s: malformed %d, applied %v, %v; want refused whole", tc.name, malformed, applied, c.State())
		}
	}
}

// TestWireGoldenResources pins the resource section of an update: count,
// then per resource its id, presence byte and value (rng.Rand: 16 bytes,
// its canonical form, the two state words little-endian), and a removal.
func TestWireGoldenResources(t *testing.T) {
	p := replicate.NewProtocol()
	if _, err := replicate.Component[WirePos](p, replicate.WithOwnRule()); err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.ReplicateResource[WirePos](p); err != nil {
		t.Fatal(err)
	}
	if _, err := replicate.ReplicateResource[rng.Rand](p); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, testProto{p: p}, replicate.ServerConfig{})
	_ = ecs.SetResource(h.sw, WirePos{1, -2})
	_ = ecs.SetResource(h.sw, rng.New(1, 2))
	h.connect(nil)
	var got []string
	step := func() {
		h.cliEnds[0].flow(nil)
		h.srv.Send()
		for _, m := range h.srvEnds[0].outbox {
			if m.data[0] == 12 {
				got = append(got, hex.EncodeToString(m.data))
			}
		}
		h.srvEnds[0].flow(nil)
		h.clients[0].Update()
	}
	step()
	ecs.RemoveResource[WirePos](h.sw)
	step()
	want := []string{
		// Update of tick 1: four empty entity sections; two resources:
		// id 0 present, WirePos 1, -2; id 1 present, rng.Rand hi 1, lo 2.
		"0c" + "01" + "00" + "00" + "00" + "00" + "02" +
			"00" + "01" + "0100feff" +
			"01" + "01" + "0100000000000000" + "0200000000000000",
		// Update of tick 2: one resource entry, id 0 removed.
		"0c" + "02" + "00" + "00" + "00" + "00" + "01" + "00" + "00",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("resource section bytes:\n got %v\nwant %v", got, want)
	}
}

// rngSnap is the server's RNG state after a tick: the world stream and
// each player's stream.
type rngSnap struct {
	world   rng.Rand
	players []rng.Rand
}

// TestRNGReplicated: the world RNG (a resource) and per-player streams
// (components) travel with the world over the in-memory message network
// with seeded loss, latency and jitter, on virtual time. The server draws
// from them every tick (a varying number of draws, sometimes none). Every
// value a client receives for tick T is the server's state after T; after
// every Update, a client that applied the update of tick T holds exactly
// the server's world stream of T; a client joining late does too. After
// the links heal, every client's streams equal the server's and draw the
// same next numbers.
func TestRNGReplicated(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { rngReplicated(t, seed) })
		})
	}
}

func rngReplicated(t *testing.T, seed uint64) {
	rp := newResProto(t)
	r := newMemRigProto(t, transport.MessageNetworkConfig{Seed: seed}, replicate.ServerConfig{}, rp.testProto)
	defer r.close()
	const players = 4
	world := ecs.RegisterResource[rng.Rand](r.sw)
	world.Set(rng.NewSeed(seed))
	streams := ecs.Register[rng.Rand](r.sw)
	var ents []ecs.Entity
	for i := range players {
		e := spawnRep(r.sw, Position{X: float64(i)}, 0)
		_ = streams.Set(e, rng.Stream(seed, uint64(i)))
		ents = append(ents, e)
	}
	var hist []rngSnap
	snap := func() rngSnap {
		s := rngSnap{world: *world.Ptr()}
		for _, e := range ents {
			v, _ := streams.Get(e)
			s.players = append(s.players, v)
		}
		return s
	}
	// record fills the history up to the server's tick: ticks run inside
	// connect (no draws) keep the previous state.
	record := func() {
		cur := snap()
		for len(hist) < int(r.srv.Tick()) {
			if len(hist) == 0 {
				hist = append(hist, cur)
			} else {
				hist = append(hist, hist[len(hist)-1])
			}
		}
		hist = append(hist, cur)
	}
	record()
	// at is the server's state after tick tk. Ticks run inside connect are
	// recorded only afterwards: no draws happen there, so a tick beyond the
	// history has the last recorded state.
	at := func(tk tick.Tick) rngSnap { return hist[min(int(tk), len(hist)-1)] }
	var bad []string
	hooked := 0
	hook := func(i int) {
		c := r.clients[i]
		_ = replicate.SetResourceReceiveHook(c, func(tk tick.Tick, v rng.Rand, present bool) bool {
			if !present || at(tk).world != v {
				bad = append(bad, fmt.Sprintf("client %d: world stream of tick %d is not the server's", i, tk))
			}
			return false
		})
		_ = replicate.SetReceiveHook(c, func(ce ecs.Entity, tk tick.Tick, v rng.Rand) bool {
			se, _ := c.ServerEntity(ce)
			for k, e := range ents {
				if e == se && at(tk).players[k] != v {
					bad = append(bad, fmt.Sprintf("client %d: stream of player %d at tick %d is not the server's", i, k, tk))
				}
			}
			return false
		})
		hooked++
	}
	link := transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1}
	r.connect(3, link)
	for i := range 3 {
		hook(i)
	}
	checks := 0
	check := func() {
		for i, c := range r.clients {
			u := c.UpdateTick()
			if u == 0 {
				continue
			}
			v, ok := ecs.GetResource[rng.Rand](r.cws[i])
			if !ok || v != at(u).world {
				bad = append(bad, fmt.Sprintf("client %d after the update of tick %d: world stream %v, server's %v", i, u, v, at(u).world))
			}
			checks++
		}
	}
	draw := world.Ptr()
	for k := range 240 {
		if k == 90 { // a late joiner
			r.connect(1, link)
			hook(3)
		}
		for range draw.IntN(3) {
			draw.Uint64()
		}
		for _, e := range ents {
			if draw.IntN(2) == 0 {
				streams.Ptr(e).Uint64()
			}
		}
		r.srv.Send()
		record()
		for _, c := range r.clients {
			c.Update()
		}
		check()
		time.Sleep(memTick)
	}
	// Heal the links; no draws.
	r.setLinks(transport.LinkConfig{Latency: 30 * time.Millisecond})
	for range 60 {
		r.step()
		record()
		check()
	}
	if len(bad) > 0 {
		t.Fatalf("%d mismatches, first: %s", len(bad), bad[0])
	}
	// Converged: every client's streams are the server's and draw the same.
	final := snap()
	want := drawAll(final)
	for i, c := range r.clients {
		got := rngSnap{}
		got.world, _ = ecs.GetResource[rng.Rand](r.cws[i])
		for _, e := range ents {
			ce, ok := c.ClientEntity(e)
			if !ok {
				t.Fatalf("client %d lacks player %v", i, e)
			}
			v, _ := ecs.StoreOf[rng.Rand](r.cws[i]).Get(ce)
			got.players = append(got.players, v)
		}
		if d := drawAll(got); d != want {
			t.Fatalf("client %d draws %s, server %s", i, d, want)
		}
	}
	if checks < 500 || hooked != 4 {
		t.Fatalf("only %d checks over %d clients", checks, hooked)
	}
}

// drawAll draws three numbers from each stream of s (copies).
func drawAll(s rngSnap) string {
	var out []uint64
	for _, r := range append([]rng.Rand{s.world}, s.players...) {
		for range 3 {
			out = append(out, r.Uint64())
		}
	}
	return fmt.Sprint(out)
}

// BenchmarkRNGWire measures the RNG state on the wire: a world stream (a
// resource) and 16 per-player streams (components), one client receiving
// and acknowledging everything. Patterns: every stream draws every tick
// (all), the world stream every tick and one player in eight (some), the
// world stream alone (world: the resource's cost in its update), no draws
// (idle). wire-B/tick is every byte the server sent per tick (update
// and mutation messages, headers included); naive-B/tick is the payload
// alone of sending every stream's full state every tick (16 bytes each).
func BenchmarkRNGWire(b *testing.B) {
	const players = 16
	for _, pat := range []string{"all", "some", "world", "idle"} {
		b.Run("draws="+pat, func(b *testing.B) {
			rp := newResProto(b)
			sw := ecs.New()
			now := time.Unix(1e9, 0)
			srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: rp.p, Now: func() time.Time { return now }})
			if err != nil {
				b.Fatal(err)
			}
			world := ecs.RegisterResource[rng.Rand](sw)
			world.Set(rng.NewSeed(1))
			streams := ecs.Register[rng.Rand](sw)
			var ents []ecs.Entity
			for i := range players {
				e := spawnRep(sw, Position{}, 0)
				_ = streams.Set(e, rng.Stream(1, uint64(i)))
				ents = append(ents, e)
			}
			c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: rp.p})
			if err != nil {
				b.Fatal(err)
			}
			se, ce := newFastPipe()
			srv.AddConn(se)
			_ = c.Connect(ce)
			k := 0
			tickOnce := func() {
				switch pat {
				case "all":
					world.Ptr().Uint64()
					for _, e := range ents {
						streams.Ptr(e).Uint64()
					}
				case "world":
					world.Ptr().Uint64()
				case "some":
					world.Ptr().Uint64()
					for i, e := range ents {
						if (i+k)%8 == 0 {
							streams.Ptr(e).Uint64()
						}
					}
				}
				k++
				now = now.Add(time.Second / 60)
				srv.Send()
				se.flow()
				c.Update()
				ce.flow()
			}
			for range 10 { // connect and catch up
				tickOnce()
			}
			sent := func() (n uint64) {
				for _, v := range se.sent {
					n += v
				}
				return n
			}
			before := sent()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				tickOnce()
			}
			b.ReportMetric(float64(sent()-before)/float64(b.N), "wire-B/tick")
			b.ReportMetric(float64((1+players)*16), "naive-B/tick")
			if c.State() != replicate.Connected {
				b.Fatal("client not connected")
			}
		})
	}
}

// TestResourceUpdateDoesNotHoldMutations: with a resource changing every
// tick, every tick has an update; mutations still need only the last
// update that carried entities, so while the resource-only updates are
// delayed (held back on the reliable channel) the client keeps applying
// component mutations, and the resources arrive when the updates do.
func TestResourceUpdateDoesNotHoldMutations(t *testing.T) {
	rp := newResProto(t)
	h := newHarness(t, rp.testProto, replicate.ServerConfig{})
	e := spawnRep(h.sw, Position{X: 0}, 0)
	c := h.connect(nil)
	h.exchange()
	h.exchange()
	se := h.srvEnds[0]
	var held []pipeMsg
	for k := 1; k <= 5; k++ {
		_ = ecs.SetResource(h.sw, Score{Red: int32(k)})
		_ = ecs.StoreOf[Position](h.sw).Set(e, Position{X: float64(k)})
		h.now = h.now.Add(time.Second / 60)
		h.srv.Send()
		var unrel []pipeMsg
		for _, m := range se.outbox {
			if m.ch == transport.ReliableOrdered {
				held = append(held, m)
			} else {
				unrel = append(unrel, m)
			}
		}
		se.outbox = unrel
		se.flow(nil)
		c.Update()
		h.cliEnds[0].flow(nil)
	}
	ce, _ := c.ClientEntity(e)
	pos, _ := ecs.StoreOf[Position](h.cws[0]).Get(ce)
	if s, _ := resource[Score](h.cws[0]); pos.X != 5 || s.Red != 0 || len(held) != 5 {
		t.Fatalf("position %v, score %v, %d held updates: want the mutations applied (X 5) while the 5 updates wait", pos.X, s, len(held))
	}
	se.outbox = held
	se.flow(nil)
	c.Update()
	if s, _ := resource[Score](h.cws[0]); s.Red != 5 || c.UpdateTick() != h.srv.Tick() {
		t.Fatalf("score %v at update tick %d, want 5 at %d", s, c.UpdateTick(), h.srv.Tick())
	}
}

// TestResourceReferenceFollowsEntity: a resource naming an entity the
// client does not have holds none, then the client entity once it is shown
// to the client, then none again once it is despawned, without the
// resource changing on the server.
func TestResourceReferenceFollowsEntity(t *testing.T) {
	rp := newResProto(t)
	h := newHarness(t, rp.testProto, replicate.ServerConfig{HiddenByDefault: true})
	e := spawnRep(h.sw, Position{X: 1}, 0)
	_ = ecs.SetResource(h.sw, Leader{E: e})
	c := h.connect(nil)
	h.exchange()
	h.exchange()
	leader := func() ecs.Entity {
		l, ok := resource[Leader](h.cws[0])
		if !ok {
			t.Fatal("no leader on the client")
		}
		return l.E
	}
	if got := leader(); got != 0 {
		t.Fatalf("leader %v while its entity is hidden, want none", got)
	}
	if err := h.srv.SetVisible(c.ID(), e, true); err != nil {
		t.Fatal(err)
	}
	h.exchange()
	ce, ok := c.ClientEntity(e)
	if got := leader(); !ok || got != ce {
		t.Fatalf("leader %v once its entity is shown, want %v", got, ce)
	}
	_ = h.sw.Despawn(e)
	h.exchange()
	if got := leader(); got != 0 {
		t.Fatalf("leader %v after its entity was despawned, want none", got)
	}
}
