package replicate_test

import (
	"os"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// TestDeltaBaselineMemory: 64 clients of a 10,000-entity world, a tenth of
// it moving every tick for longer than the journal's window. The delta
// baselines cost the server one copy of each changed value for the
// window, whatever the number of clients (no value per client: a client's
// baselines are ticks in its 48-byte state of each entity slot, counted in
// RetainedBytes), and a client the values it received in its window; a
// client's baselines of the entities that leave its view are released.
// It takes about 13 s: only with REWIND_LONG=1 (CI sets it), not -short
// or -race.
func TestDeltaBaselineMemory(t *testing.T) {
	if testing.Short() || raceEnabled || os.Getenv("REWIND_LONG") == "" {
		t.Skip("64 clients of a 10,000-entity world: set REWIND_LONG=1")
	}
	const n, clients = 10000, 64
	tp := newProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	ents := spawnMany(h, n)
	for range clients {
		h.connect(nil)
	}
	h.converge(20, nil) // the joiners' first updates are 10,000 entities each
	pos := ecs.StoreOf[Position](h.sw)
	move := func(k int) {
		for i := k % 10; i < n; i += 10 {
			p := pos.Ptr(ents[i])
			p.X += 0.25
		}
	}
	var peak int
	for k := range 100 {
		move(k)
		h.exchange()
		peak = max(peak, replicate.JournalBytes(h.srv))
	}
	// A position is 16 bytes and an entry 8 more; at most 1,000 change a
	// tick, for the 64 ticks of the window (spawns at the start are older).
	if bound := 64 * 1000 * (16 + 8); peak > bound {
		t.Fatalf("server journal peaked at %d bytes, more than %d", peak, bound)
	}
	for i, c := range h.clients {
		st, _ := h.srv.Stats(c.ID())
		if per := st.RetainedBytes / n; per > 64 {
			t.Fatalf("client %d: the server keeps %d bytes per entity slot", i, per)
		}
		if b, _ := replicate.ClientJournal(c); b > 96*1000*(16+8) {
			t.Fatalf("client %d: journal of %d bytes", i, b)
		}
	}
	h.converge(3, nil) // and every client holds the server's state
	// Client 0 stops seeing all but 10 entities: their baselines go.
	peer := h.clients[0]
	for _, e := range ents[10:] {
		_ = h.srv.SetVisible(peer.ID(), e, false)
	}
	for k := range 5 {
		move(k)
		h.exchange()
	}
	if _, keys := replicate.ClientJournal(peer); keys > 10 {
		t.Fatalf("client 0 holds baselines of %d entity components, sees 10 entities", keys)
	}
	t.Logf("server journal peak %d bytes (bound %d); client 1 journal: %v", peak, replicate.JournalBound, func() int { b, _ := replicate.ClientJournal(h.clients[1]); return b }())
}
