package replicate_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// TestConvergenceUnderChaos: 8 clients, 20% loss, delays (jitter),
// duplication and reordering for 600 ticks of random structural changes,
// mutations, visibility changes and messages; then the network heals and
// every client converges to the server's view of what it may see, and every
// reliable message arrived exactly once, in order.
func TestConvergenceUnderChaos(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { chaos(t, seed, chaosConfig{loss: 0.2, dup: 0.1}) })
	}
}

// TestConvergenceWholeSegments: on a link that loses few messages, clients
// are mostly up to date and take whole shared segments, while losses,
// priorities raised and lowered, visibility changes and components that
// change at different ticks push them to the per-client path and back. The
// same scenario converges with whole segments on and off, and with them on
// a good share of the mutation messages goes out whole.
func TestConvergenceWholeSegments(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		for _, off := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed%d/whole=%v", seed, !off), func(t *testing.T) {
				chaos(t, seed, chaosConfig{loss: 0.02, dup: 0.02, priorities: true, noWhole: off})
			})
		}
	}
}

type chaosConfig struct {
	loss, dup  float64
	priorities bool // raise and lower entities' priorities
	noWhole    bool // no whole segments
}

func chaos(t *testing.T, seed uint64, cfg chaosConfig) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	if cfg.noWhole {
		replicate.DisableWholeSegments(h.srv)
	}
	rnd := rand.New(rand.NewPCG(42, seed))
	var live []ecs.Entity
	for i := 0; i < 50; i++ {
		live = append(live, spawnRep(h.sw, Position{X: float64(i)}, int32(i)))
	}
	const nClients = 8
	for i := 0; i < nClients; i++ {
		h.connect(nil)
	}
	h.converge(3, nil)
	hidden := make([]map[ecs.Entity]bool, nClients)
	for i := range hidden {
		hidden[i] = map[ecs.Entity]bool{}
	}
	h.hooks = &netHooks{rnd: rand.New(rand.NewPCG(9, seed)), loss: cfg.loss, dup: cfg.dup, reorder: true, maxDelay: 4, relDelay: 3}
	pos, hp, own := ecs.StoreOf[Position](h.sw), ecs.StoreOf[Health](h.sw), ecs.StoreOf[Owner](h.sw)
	noticeSeq := int32(0)
	chatSeq := make([]int32, nClients)
	gotNotices := make([][]int32, nClients)
	gotChats := make(map[replicate.ClientID][]int32)
	pick := func() ecs.Entity { return live[rnd.IntN(len(live))] }
	for tick := 0; tick < 600; tick++ {
		for k := 0; k < 3; k++ {
			switch r := rnd.IntN(100); {
			case r < 10 && len(live) < 120:
				live = append(live, spawnRep(h.sw, Position{X: rnd.Float64()}, rnd.Int32N(100)))
			case r < 18 && len(live) > 10:
				i := rnd.IntN(len(live))
				_ = h.sw.Despawn(live[i])
				live = append(live[:i], live[i+1:]...)
			case r < 25:
				_ = own.Set(pick(), Owner{E: pick()})
			case r < 30:
				_ = own.Remove(pick())
			case r < 35:
				_ = hp.Remove(pick())
			case r < 40:
				_ = hp.Set(pick(), Health{rnd.Int32N(100)})
			case r < 45:
				c := rnd.IntN(nClients)
				e := pick()
				vis := rnd.IntN(2) == 0
				hidden[c][e] = !vis
				_ = h.srv.SetVisible(h.clients[c].ID(), e, vis)
			case r < 50 && cfg.priorities:
				h.srv.SetPriority(pick(), []float32{0.25, 0.5, 1, 1}[rnd.IntN(4)])
			}
		}
		for i := 0; i < 10; i++ {
			e := pick()
			if p, ok := pos.Get(e); ok {
				p.X += 1
				_ = pos.Set(e, p)
			}
		}
		if tick%5 == 0 {
			_ = tp.notice.SendToClients(h.srv, replicate.All(), Notice{noticeSeq})
			noticeSeq++
		}
		if tick%7 == 0 {
			for i, c := range h.clients {
				_ = tp.chat.SendToServer(c, Chat{Seq: chatSeq[i]})
				chatSeq[i]++
			}
		}
		h.exchange()
		for i, c := range h.clients {
			for _, n := range tp.notice.ReceiveFromServer(c) {
				gotNotices[i] = append(gotNotices[i], n.Seq)
			}
		}
		for _, m := range tp.chat.ReceiveFromClients(h.srv) {
			gotChats[m.Client] = append(gotChats[m.Client], m.Message.Seq)
		}
	}
	// Heal.
	h.hooks = nil
	visible := func(i int) func(ecs.Entity) bool {
		return func(e ecs.Entity) bool { return !hidden[i][e] }
	}
	for r := 0; r < 20; r++ {
		h.exchange()
		for i, c := range h.clients {
			for _, n := range tp.notice.ReceiveFromServer(c) {
				gotNotices[i] = append(gotNotices[i], n.Seq)
			}
		}
		for _, m := range tp.chat.ReceiveFromClients(h.srv) {
			gotChats[m.Client] = append(gotChats[m.Client], m.Message.Seq)
		}
	}
	h.converge(1, visible)
	for i, c := range h.clients {
		if c.State() != replicate.Connected {
			t.Fatalf("client %d: %v", i, c.State())
		}
		if len(gotNotices[i]) != int(noticeSeq) {
			t.Fatalf("client %d got %d notices, want %d", i, len(gotNotices[i]), noticeSeq)
		}
		for k, s := range gotNotices[i] {
			if s != int32(k) {
				t.Fatalf("client %d: notice %d is %d (order or duplicates)", i, k, s)
			}
		}
		got := gotChats[c.ID()]
		if len(got) != int(chatSeq[i]) {
			t.Fatalf("server got %d chats from client %d, want %d", len(got), i, chatSeq[i])
		}
		for k, s := range got {
			if s != int32(k) {
				t.Fatalf("client %d chat %d is %d", i, k, s)
			}
		}
		st, _ := h.srv.Stats(c.ID())
		if i == 0 {
			t.Logf("client 0: %+v, client stats %+v", st, c.Stats())
		}
		whole := replicate.WholeMessages(h.srv, c.ID())
		if i == 0 {
			t.Logf("client 0: %d of %d mutation messages whole", whole, st.MutationMessages)
		}
		if cfg.noWhole && whole != 0 || !cfg.noWhole && cfg.loss < 0.05 && whole < st.MutationMessages/10 {
			t.Fatalf("client %d: %d of %d mutation messages whole", i, whole, st.MutationMessages)
		}
	}
}

// TestHiddenEntityNeverSent: an entity hidden from one client never reaches
// it, even while it changes together with entities that client takes in
// whole shared segments (which the other client takes whole with it).
func TestHiddenEntityNeverSent(t *testing.T) {
	tp := newProto(t)
	// Absolute values, so the hidden entity's value would show in the bytes.
	h := newHarness(t, tp, replicate.ServerConfig{NoDeltas: true})
	ents := spawnMany(h, 600)
	h.connect(nil)
	peer := h.connect(nil)
	h.converge(3, nil)
	secret := ents[17]
	_ = h.srv.SetVisible(peer.ID(), secret, false)
	h.converge(3, func(i int) func(ecs.Entity) bool {
		return func(e ecs.Entity) bool { return i == 0 || e != secret }
	})
	pos := ecs.StoreOf[Position](h.sw)
	var mark [8]byte
	for tick := 0; tick < 100; tick++ {
		v := 777777.25 + float64(tick)
		binary.LittleEndian.PutUint64(mark[:], math.Float64bits(v))
		_ = pos.Set(secret, Position{X: v})
		for i := 0; i < 300; i++ { // about three segments of deltas
			e := ents[(tick*7+i*2)%len(ents)]
			if e != secret {
				_ = pos.Set(e, Position{X: float64(tick*100 + i)})
			}
		}
		h.now = h.now.Add(time.Second / 60)
		h.srv.Send()
		for _, m := range h.srvEnds[1].outbox {
			if containsBits(m.data, mark[:]) {
				t.Fatalf("tick %d: the hidden entity's value went to the client it is hidden from", tick)
			}
		}
		for i := range h.clients {
			h.srvEnds[i].flow(nil)
			h.clients[i].Update()
			h.cliEnds[i].flow(nil)
		}
	}
	for i, c := range h.clients {
		if w := replicate.WholeMessages(h.srv, c.ID()); w < 50 {
			t.Fatalf("client %d took %d whole segments in 100 ticks", i, w)
		}
	}
}

// TestRaisedPriorityLossResent: values a low priority held back go out when
// the priority is raised; when that message is lost while the entity keeps
// changing other components (which then go out in whole shared segments),
// the held-back value is still resent.
func TestRaisedPriorityLossResent(t *testing.T) {
	h, ents := lossWorld(t, 20)
	e := ents[5]
	pos, hp := ecs.StoreOf[Position](h.sw), ecs.StoreOf[Health](h.sw)
	h.srv.SetPriority(e, 0.01)
	h.exchange()
	const held = 123456789
	_ = hp.Set(e, Health{held})
	h.exchange() // deferred by the priority
	h.srv.SetPriority(e, 1)
	var dropped int
	h.hooks = dropCarrying(held, 1, &dropped)
	for tick := 0; tick < 30; tick++ {
		for _, o := range ents {
			p, _ := pos.Get(o)
			p.X++
			_ = pos.Set(o, p)
		}
		h.exchange()
	}
	if dropped != 1 {
		t.Fatal("the held-back value never went out")
	}
	if replicate.WholeMessages(h.srv, h.clients[0].ID()) == 0 {
		t.Fatal("no whole segments")
	}
	h.hooks = nil
	h.converge(10, nil)
}

// TestDeferredForPacketsLossResent: when a tick's changes need more
// messages than a client may get in one tick, the rest waits for the next
// tick; when that later message is lost while the entity keeps changing
// other components (which then go out in whole shared segments), its value
// is still resent.
func TestDeferredForPacketsLossResent(t *testing.T) {
	h, ents := lossWorld(t, 20000)
	e := ents[len(ents)-1] // last in the tick's order: beyond the message cap
	pos, hp := ecs.StoreOf[Position](h.sw), ecs.StoreOf[Health](h.sw)
	move := func(es []ecs.Entity) {
		for _, o := range es {
			p, _ := pos.Get(o)
			p.X++
			_ = pos.Set(o, p)
		}
	}
	const held = 123456789
	var dropped int
	h.hooks = dropCarrying(held, 1, &dropped)
	move(ents)
	_ = hp.Set(e, Health{held})
	h.exchange()
	if dropped != 0 {
		t.Fatal("the value went out in the tick the message cap was reached")
	}
	for tick := 0; tick < 30; tick++ {
		move(ents[len(ents)-50:])
		h.exchange()
	}
	if dropped == 0 {
		t.Fatal("the deferred value never went out")
	}
	h.hooks = nil
	h.converge(10, nil)
}

// TestLostValueCarriedByNewerSend: a value whose message is lost is not
// resent when a newer message of the same entity carries it; until that
// newer message is acknowledged the client takes no whole segments (which
// carry only the latest tick's values), so when the newer message is lost
// too, the value is still resent.
func TestLostValueCarriedByNewerSend(t *testing.T) {
	for gap := 1; gap <= 8; gap++ {
		t.Run(fmt.Sprint("gap", gap), func(t *testing.T) {
			h, ents := lossWorld(t, 10)
			e := ents[3]
			pos, hp := ecs.StoreOf[Position](h.sw), ecs.StoreOf[Health](h.sw)
			const lost = 123456789
			var dropped int
			h.hooks = dropCarrying(lost, 2, &dropped)
			_ = hp.Set(e, Health{lost})
			h.exchange() // first message with the value: lost
			_ = pos.Set(e, Position{X: 1000})
			h.exchange() // the newer message carries it again: lost too
			for tick := 0; tick < 30; tick++ {
				if tick == gap {
					_ = pos.Set(e, Position{X: 2000})
				}
				h.exchange()
			}
			if dropped != 2 {
				t.Fatalf("%d messages with the value dropped, want 2", dropped)
			}
			h.hooks = nil
			h.converge(5, nil)
		})
	}
}

// lossWorld: a harness with n replicated entities and one connected,
// caught-up client.
func lossWorld(t *testing.T, n int) (*harness, []ecs.Entity) {
	// Absolute values: the tests find a message by the bytes of a value
	// in it (dropCarrying), which a delta does not show.
	h := newHarness(t, newProto(t), replicate.ServerConfig{NoDeltas: true})
	ents := spawnMany(h, n)
	h.connect(nil)
	h.converge(3, nil)
	return h, ents
}

// containsBits reports whether msg holds the bytes of mark at any bit
// offset (mutation blocks are bit-packed: a value starts anywhere).
func containsBits(msg, mark []byte) bool {
	shifted := make([]byte, len(msg))
	for sh := range uint(8) {
		for i := range msg {
			b := msg[i] >> sh
			if i+1 < len(msg) && sh > 0 {
				b |= msg[i+1] << (8 - sh)
			}
			shifted[i] = b
		}
		if bytes.Contains(shifted, mark) {
			return true
		}
	}
	return false
}

// dropCarrying loses the first k unreliable messages that carry the
// little-endian bytes of v (a distinctive component value), counting them in
// *dropped.
func dropCarrying(v uint32, k int, dropped *int) *netHooks {
	var mark [4]byte
	binary.LittleEndian.PutUint32(mark[:], v)
	return &netHooks{drop: func(_ transport.Channel, m []byte) bool {
		if *dropped < k && containsBits(m, mark[:]) {
			*dropped++
			return true
		}
		return false
	}}
}

// spawnMany spawns n replicated entities on the server, entity i at
// position i with health i.
func spawnMany(h *harness, n int) []ecs.Entity {
	var ents []ecs.Entity
	for i := 0; i < n; i++ {
		ents = append(ents, spawnRep(h.sw, Position{X: float64(i)}, int32(i)))
	}
	return ents
}
