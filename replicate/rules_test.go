package replicate_test

import (
	"errors"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// Mana is replicated only by a rule with a Without filter.
type Mana struct{ V int32 }

// ruleProto: Position and Health replicate together (rule {Position,
// Health}); Position also alone on entities With Secret; Mana on entities
// Without Secret. Position is in two rules; no component has a rule of its
// own.
func ruleProto(t *testing.T) testProto {
	t.Helper()
	p := replicate.NewProtocol()
	pos, err1 := replicate.Component[Position](p)
	hp, err2 := replicate.Component[Health](p)
	mana, err3 := replicate.Component[Mana](p)
	if err := errors.Join(err1, err2, err3,
		p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{pos, hp}}),
		p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{pos}, Filters: []replicate.Filter{replicate.With[Secret]()}}),
		p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{mana}, Filters: []replicate.Filter{replicate.Without[Secret]()}}),
	); err != nil {
		t.Fatal(err)
	}
	return testProto{p: p}
}

// has reports which of Position, Health and Mana the client holds for
// server entity e (which must be replicated to it).
func has(t *testing.T, c *replicate.Client, cw *ecs.World, e ecs.Entity) (pos, hp, mana bool) {
	t.Helper()
	ce, ok := c.ClientEntity(e)
	if !ok {
		t.Fatalf("entity %v not replicated", e)
	}
	return ecs.StoreOf[Position](cw).Has(ce), ecs.StoreOf[Health](cw).Has(ce), ecs.StoreOf[Mana](cw).Has(ce)
}

// TestRulesFilter: a component replicates only through the rules that
// contain it, and a rule applies when the entity has all of its
// components and passes its filters (bevy_replicon's semantics).
func TestRulesFilter(t *testing.T) {
	tp := ruleProto(t)
	h := newHarness(t, tp, replicate.ServerConfig{})
	w := h.sw
	pos, hp, mana, secret, rep := ecs.Register[Position](w), ecs.Register[Health](w), ecs.Register[Mana](w), ecs.Register[Secret](w), ecs.Register[replicate.Replicated](w)
	spawn := func(p, h, m, s bool) ecs.Entity {
		e := w.Spawn()
		_ = rep.Set(e, replicate.Replicated{})
		if p {
			_ = pos.Set(e, Position{1, 2})
		}
		if h {
			_ = hp.Set(e, Health{7})
		}
		if m {
			_ = mana.Set(e, Mana{3})
		}
		if s {
			_ = secret.Set(e, Secret{})
		}
		return e
	}
	posOnly := spawn(true, false, false, false)   // rule {Position, Health} waits for Health
	both := spawn(true, true, false, false)       // rule {Position, Health} applies
	posSecret := spawn(true, false, false, true)  // rule {Position} With Secret applies
	manaOnly := spawn(false, false, true, false)  // rule {Mana} Without Secret applies
	manaSecret := spawn(false, false, true, true) // the Without filter stops Mana
	c := h.connect(nil)
	cw := func() *ecs.World { return h.cws[0] }
	for i := 0; i < 3; i++ {
		h.exchange()
	}
	type want struct {
		e             ecs.Entity
		pos, hp, mana bool
	}
	check := func(stage string, ws []want) {
		t.Helper()
		for _, w := range ws {
			p, hh, m := has(t, c, cw(), w.e)
			if p != w.pos || hh != w.hp || m != w.mana {
				t.Fatalf("%s: entity %v has position %v health %v mana %v, want %v %v %v", stage, w.e, p, hh, m, w.pos, w.hp, w.mana)
			}
		}
	}
	check("joined", []want{
		{posOnly, false, false, false},
		{both, true, true, false},
		{posSecret, true, false, false},
		{manaOnly, false, false, true},
		{manaSecret, false, false, false},
	})
	// The entity gets the rule's last component: both replicate. Filters
	// change: Position's second rule stops applying (its first one does
	// not apply either), Mana's rule applies and stops applying.
	_ = hp.Set(posOnly, Health{9})
	_ = secret.Remove(posSecret)
	_ = secret.Remove(manaSecret)
	_ = secret.Set(manaOnly, Secret{})
	_ = hp.Remove(both)
	for i := 0; i < 3; i++ {
		h.exchange()
	}
	check("changed", []want{
		{posOnly, true, true, false},
		{both, false, false, false},
		{posSecret, false, false, false},
		{manaOnly, false, false, false},
		{manaSecret, false, false, true},
	})
	// Values keep flowing through the rules that apply, and only there.
	pos.Ptr(posOnly).X = 40
	_ = pos.Set(both, Position{5, 5})
	for i := 0; i < 3; i++ {
		h.exchange()
	}
	ce, _ := c.ClientEntity(posOnly)
	if p, _ := ecs.StoreOf[Position](cw()).Get(ce); p.X != 40 {
		t.Fatalf("position mutation not applied: %v", p)
	}
	check("mutated", []want{{both, false, false, false}})
}

// TestComponentWithoutRuleRefused: a protocol with a component in no rule
// is refused (the component could never replicate).
func TestComponentWithoutRuleRefused(t *testing.T) {
	p := replicate.NewProtocol()
	if _, err := replicate.Component[Position](p); err != nil {
		t.Fatal(err)
	}
	_, err := replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: p})
	if !errors.Is(err, replicate.ErrRegistered) {
		t.Fatalf("NewServer with a component in no rule: %v, want ErrRegistered", err)
	}
	_, err = replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: p})
	if !errors.Is(err, replicate.ErrRegistered) {
		t.Fatalf("NewClient with a component in no rule: %v, want ErrRegistered", err)
	}
}
