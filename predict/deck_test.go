package predict_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// deckLink is the clients' link: 30 ms each way, some jitter and loss.
var deckLink = transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.02}

// TestDeckShuffleAcrossDisruption (issue 15, item 5): four players'
// decks are shuffled with their own streams whenever they draw, which the
// server decides and the three clients learn late, so the clients
// mispredict draws and roll back (re-shuffling from the restored
// streams). One client is cut off for 3 seconds (virtual time) and keeps
// predicting; when the path heals it gets a resync, counted with its
// reason. Afterwards every client's decks, streams and world RNG at a
// common tick equal the server's, card for card.
func TestDeckShuffleAcrossDisruption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newDeckRig(t, 21, 4, predict.Config{Window: 32}, 6)
		r.ccfg.ResyncAfterSilence = 500 * time.Millisecond
		defer r.close()
		for range 3 {
			r.connect(deckLink)
		}
		r.run(120)
		for i := range r.clients {
			if r.clients[i].tl.Stats().Rollbacks == 0 {
				t.Fatalf("client %d never rolled back", i)
			}
		}
		cut := r.clients[1]
		r.net.Partition(cut.addr, r.ln.Addr())
		r.run(180)
		r.net.Heal(cut.addr, r.ln.Addr())
		r.run(120)
		f := r.commonTick()
		for i := range r.clients {
			if d := r.diffAt(i, f); d != "" {
				t.Fatal(d)
			}
		}
		if st := cut.c.Stats(); st.Resyncs != 1 || st.ResyncKinds.Full != 1 {
			t.Fatalf("the cut client: %+v", st)
		}
		if cut.tl.Stats().Resyncs != 1 {
			t.Fatalf("timeline of the cut client: %+v", cut.tl.Stats())
		}
		for _, i := range []int{0, 2} {
			if st := r.clients[i].c.Stats(); st.Resyncs != 0 {
				t.Fatalf("client %d resynced: %+v", i, st)
			}
		}
		st, _ := r.srv.Stats(cut.c.ID())
		if st.ResyncRequests != 1 {
			t.Fatalf("server: %+v", st)
		}
		drawn := 0
		for _, p := range r.states[f].players {
			drawn += int(p.Deck.Drawn)
		}
		if drawn < 200 {
			t.Fatalf("only %d draws", drawn)
		}
	})
}

// TestResyncAfterRangeFault: a client that stalls (receives nothing for
// 40 ticks, a window of 16) gets values older than its window when it
// resumes: the range faults ask the server for a resync (one request,
// the reason naming the fault), the Timeline continues from the resynced
// state, and its history at complete ticks equals the server's again.
func TestResyncAfterRangeFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newDeckRig(t, 22, 3, predict.Config{Window: 16}, 4)
		defer r.close()
		dc := r.connect(transport.LinkConfig{Latency: 20 * time.Millisecond})
		r.run(60)
		if d := r.diffAt(0, r.commonTick()); d != "" {
			t.Fatal(d)
		}
		dc.paused = true
		r.run(40)
		dc.paused = false
		var reasons []string
		for range 60 {
			r.step()
			for _, ev := range r.srv.Events() {
				if ev.Kind == replicate.ClientResync {
					reasons = append(reasons, ev.Reason)
				}
			}
		}
		st := dc.tl.Stats()
		if st.RangeFaults == 0 || st.Resyncs != 1 || len(reasons) != 1 || !strings.HasPrefix(reasons[0], "client request: range fault at tick ") {
			t.Fatalf("stats %+v, resyncs %q", st, reasons)
		}
		if d := r.diffAt(0, r.commonTick()); d != "" {
			t.Fatal(d)
		}
		if cs := dc.c.Stats(); cs.ResyncRequests != 1 {
			t.Fatalf("%d requests sent", cs.ResyncRequests)
		}
	})
}

// TestLateJoinerFirstRandomEvent: a client joining a running game (its
// first update holds the streams and the world's RNG) predicts its first
// ticks' random events exactly as the server draws them: the world's roll
// and every player's shuffled deck of its first predicted tick.
func TestLateJoinerFirstRandomEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newDeckRig(t, 23, 4, predict.Config{Window: 16}, 4)
		r.wants = func(tick.Tick, int) uint8 { return 1 } // every player draws every tick
		defer r.close()
		r.run(100)
		dc := r.connect(transport.LinkConfig{Latency: 25 * time.Millisecond})
		r.run(30)
		first := dc.tl.Stats()
		_ = first
		var f1 tick.Tick
		for f := range dc.first {
			if f1 == 0 || f.Before(f1) {
				f1 = f
			}
		}
		if f1 == 0 || f1 < 100 {
			t.Fatalf("first predicted tick %v", f1)
		}
		got, want := dc.first[f1], r.states[f1]
		if got.roll != want.roll || got.world != want.world {
			t.Fatalf("tick %v: predicted roll %v, server %v", f1, got.roll, want.roll)
		}
		for i := range want.players {
			if got.players[i] != want.players[i] {
				t.Fatalf("tick %v, player %d: predicted %+v, server %+v", f1, i, got.players[i], want.players[i])
			}
		}
		if want.players[0].Deck.Drawn < 100 {
			t.Fatalf("player 0 drew %d times", want.players[0].Deck.Drawn)
		}
	})
}
