package demo

import (
	"strings"
	"testing"

	"github.com/rewindgo/rewind/ecs"
)

// TestArena: the arena keeps its population, goes through every kind of
// change replication knows, and depends only on its seed.
func TestArena(t *testing.T) {
	a, err := NewArena(ArenaConfig{Entities: 200, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewArena(ArenaConfig{Entities: 200, Seed: 5})
	if len(a.Spawned()) != 200 {
		t.Fatalf("%d initial entities reported spawned", len(a.Spawned()))
	}
	moved := 0
	for range 600 {
		if err := a.Step(); err != nil {
			t.Fatal(err)
		}
		if err := b.Step(); err != nil {
			t.Fatal(err)
		}
		moved = max(moved, a.Stats().Moving)
	}
	st := a.Stats()
	t.Logf("%+v", st)
	if a.Entities() < 190 || a.Entities() > 200 {
		t.Fatalf("%d entities left of 200", a.Entities())
	}
	if st.Ticks != 600 || st.Spawned == 0 || st.Despawned == 0 || st.ShieldsRaised == 0 || st.ShieldsBroken == 0 || st.Dashes == 0 || moved == 0 {
		t.Fatalf("stats %+v, at most %d moving", st, moved)
	}
	va, vb := ArenaView(a.World(), nil), ArenaView(b.World(), nil)
	if d := DiffArenaViews(va, vb); d != "" || len(va) != a.Entities() {
		t.Fatalf("two arenas with one seed differ: %s (%d entities in the view)", d, len(va))
	}
	c, _ := NewArena(ArenaConfig{Entities: 200, Seed: 6})
	for range 10 {
		_ = c.Step()
	}
	if d := DiffArenaViews(va, ArenaView(c.World(), nil)); !strings.Contains(d, "entities differ") {
		t.Fatalf("arenas with different seeds: %q", d)
	}
	if _, err := NewArena(ArenaConfig{}); err == nil {
		t.Fatal("an empty arena was accepted")
	}
}

// TestArenaView maps a client's entities back to the server's.
func TestArenaView(t *testing.T) {
	a, _ := NewArena(ArenaConfig{Entities: 3, Seed: 1})
	server := ArenaView(a.World(), nil)
	w := ecs.New()
	toServer := map[ecs.Entity]ecs.Entity{}
	for se, v := range server {
		e := w.Spawn()
		toServer[e] = se
		if v.HasPosition {
			_ = ecs.Register[Position](w).Set(e, v.Position)
		}
		if v.HasVelocity {
			_ = ecs.Register[Velocity](w).Set(e, v.Velocity)
		}
		_ = ecs.Register[Health](w).Set(e, v.Health)
		_ = ecs.Register[Kind](w).Set(e, v.Kind)
	}
	w.Spawn() // not replicated: not in the view
	lookup := func(e ecs.Entity) (ecs.Entity, bool) { se, ok := toServer[e]; return se, ok }
	if d := DiffArenaViews(server, ArenaView(w, lookup)); d != "" {
		t.Fatal(d)
	}
	for e := range toServer {
		_ = ecs.Register[Health](w).Set(e, Health{HP: -1})
		break
	}
	if d := DiffArenaViews(server, ArenaView(w, lookup)); !strings.Contains(d, "1 entities differ") {
		t.Fatalf("diff %q", d)
	}
}

func TestArenaProtocol(t *testing.T) {
	p1, err := NewArenaProtocol()
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := NewArenaProtocol()
	if p1.Protocol.Hash() != p2.Protocol.Hash() {
		t.Fatal("two arena protocols differ")
	}
}

// TestArenaKeepsLargePopulation: a large arena replaces its destroyed
// entities as fast as hits destroy them (it kept 2 replacements per tick,
// so 100,000 entities fell to about 60,000 in 600 ticks).
func TestArenaKeepsLargePopulation(t *testing.T) {
	const n = 10000
	a, err := NewArena(ArenaConfig{Entities: n, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if err := a.Step(); err != nil {
			t.Fatal(err)
		}
	}
	st := a.Stats()
	if a.Entities() < n*98/100 || st.Despawned == 0 {
		t.Fatalf("%d entities left of %d (%d destroyed, %d replaced)", a.Entities(), n, st.Despawned, st.Spawned)
	}
}
