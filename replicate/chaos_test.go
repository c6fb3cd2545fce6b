package replicate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// TestConvergenceUnderChaos: 8 clients, 20% loss, delays (jitter),
// duplication and reordering for 600 ticks of random structural changes,
// mutations, visibility changes and messages; then the network heals and
// every client converges to the server's view of what it may see, and every
// reliable message arrived exactly once, in order.
func TestConvergenceUnderChaos(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { chaos(t, seed) })
	}
}

func chaos(t *testing.T, seed uint64) {
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
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
	h.hooks = &netHooks{rnd: rand.New(rand.NewPCG(9, seed)), loss: 0.2, dup: 0.1, reorder: true, maxDelay: 4, relDelay: 3}
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
	}
}
