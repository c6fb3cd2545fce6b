package shooter

import (
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/tick"
)

func TestSteerWraps(t *testing.T) {
	b := Body{X: 2, Y: Size - 3}
	Steer(&b, Stick{Buttons: Left | Down})
	if want := (Body{X: Size - 4, Y: 3, VX: -ShipSpeed, VY: ShipSpeed}); b != want {
		t.Fatalf("steered to %+v, want %+v", b, want)
	}
	Steer(&b, Stick{Buttons: Left | Right | Fire})
	if want := (Body{X: Size - 4, Y: 3}); b != want {
		t.Fatalf("opposite keys: %+v, want %+v (standing)", b, want)
	}
}

func TestShoot(t *testing.T) {
	ship := Body{X: 100, Y: 200, VX: -ShipSpeed}
	if _, ok := Shoot(ship, Stick{Buttons: Fire}, FireEvery+1); ok {
		t.Fatal("fired between two shots")
	}
	if _, ok := Shoot(ship, Stick{Buttons: Left}, FireEvery); ok {
		t.Fatal("fired without Fire")
	}
	b, ok := Shoot(ship, Stick{Buttons: Fire}, 2*FireEvery)
	if want := (Body{X: 100, Y: 200, VX: -BulletSpeed}); !ok || b != want {
		t.Fatalf("shot %+v (%v), want %+v", b, ok, want)
	}
	b, _ = Shoot(Body{X: 1, Y: 2}, Stick{Buttons: Fire}, 0)
	if want := (Body{X: 1, Y: 2, VY: -BulletSpeed}); b != want {
		t.Fatalf("standing ship shot %+v, want %+v (straight up)", b, want)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b Body
		want int32
	}{
		{Body{X: 10, Y: 10}, Body{X: 13, Y: 5}, 5},
		{Body{X: 2}, Body{X: Size - 2}, 4}, // across the edge
		{Body{Y: Size / 2}, Body{}, Size / 2},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%+v, %+v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestBot: the bot is a pure function of (seed, player, tick), holds its
// keys for stretches, and plays every move, fires and scans.
func TestBot(t *testing.T) {
	changes, fires, scans := 0, 0, 0
	moves := map[uint8]bool{}
	for f := tick.Tick(1); f <= 3000; f++ {
		in := Bot(7, 2, f)
		if in != Bot(7, 2, f) {
			t.Fatal("not a pure function")
		}
		if in != Bot(7, 2, f-1) {
			changes++
		}
		if in.Buttons&Fire != 0 {
			fires++
		}
		if in.Buttons&Scan != 0 {
			scans++
		}
		moves[in.Buttons&^(Fire|Scan)] = true
	}
	// Player 2 holds for 24 ticks: 3000/24 = 125 stretches.
	if changes < 60 || changes > 126 || fires < 900 || fires > 2100 || scans < 500 || scans > 1500 || len(moves) != 9 {
		t.Fatalf("%d changes, %d ticks firing, %d scanning, %d moves", changes, fires, scans, len(moves))
	}
	if Bot(7, 2, 100) == Bot(8, 2, 100) && Bot(7, 2, 500) == Bot(8, 2, 500) && Bot(7, 2, 900) == Bot(8, 2, 900) {
		t.Fatal("the seed changes nothing")
	}
}

// TestServerStep: ships steer with their player's input, a ship holding
// Fire spawns a bullet every FireEvery ticks at its position, bullets fly
// and are despawned after BulletTTL ticks; the same inputs give the same
// World.
func TestServerStep(t *testing.T) {
	run := func() ([]Keyed, *Server) {
		s := NewServer()
		for p := uint64(1); p <= 2; p++ {
			if _, err := s.AddShip(p); err != nil {
				t.Fatal(err)
			}
		}
		for f := tick.Tick(1); f <= 100; f++ {
			if err := s.Step(f, func(p uint64) Stick {
				if p == 1 {
					return Stick{Buttons: Right | Fire}
				}
				return Stick{Buttons: Up}
			}); err != nil {
				t.Fatal(err)
			}
		}
		return s.State(nil), s
	}
	a, s := run()
	b, _ := run()
	if len(a) != len(b) {
		t.Fatal("not deterministic")
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("not deterministic: %+v vs %+v", a[i], b[i])
		}
	}
	// Player 1 fired at 8, 16, ..., 96: 12 bullets, those of 72..96 (4)
	// still in flight at 100 (fired at 64 expired at 94).
	if s.Fired() != 12 || s.Bullets() != 4 || s.Expired() != 8 {
		t.Fatalf("fired %d, in flight %d, expired %d; want 12, 4, 8", s.Fired(), s.Bullets(), s.Expired())
	}
	// Ship 1 starts at x = Size/11 and moves right; a bullet fired at f
	// starts at its position after its step of f and flies 100-f ticks.
	for _, k := range a {
		if !k.Bullet {
			continue
		}
		var f int32 = -1
		for g := int32(8); g <= 96; g += 8 {
			x := (Size/11+ShipSpeed*g)%Size + (100-g)*BulletSpeed
			if k.Body.X == x {
				f = g
			}
		}
		if f < 72 || k.Body.Y != Size-1-Size/11 || k.Body.VX != BulletSpeed || k.Body.VY != 0 || k.Player != 1 {
			t.Fatalf("bullet %+v: not one of ship 1's fired at 72..96", k)
		}
	}
}

// TestClientMatchesServer: a client World holding the server's ship,
// simulated by Client.Step on a Timeline with the same inputs, equals the
// server's World tick after tick, bullets included: each bullet the ship
// fires is a predicted spawn under the server's key, with the server's
// body and marker, and gets a despawn marker at the tick the server
// despawns it.
func TestClientMatchesServer(t *testing.T) {
	s := NewServer()
	e, _ := s.AddShip(5)
	cw := ecs.New()
	tl := predict.New(cw, 0, predict.Config{Window: 64})
	c, err := NewClient(tl)
	if err != nil {
		t.Fatal(err)
	}
	ce := cw.Spawn()
	b0, _ := ecs.StoreOf[Body](s.World()).Get(e)
	_ = ecs.Register[Ship](cw).Set(ce, Ship{Player: 5})
	_ = c.Body().Store().Set(ce, b0)
	keyOf := map[ecs.Entity]predict.SpawnKey{} // server bullet -> its key
	for f := tick.Tick(1); f <= 100; f++ {
		in := func(p uint64) Stick { return Bot(3, p, f) }
		if err := s.Step(f, in); err != nil {
			t.Fatal(err)
		}
		tl.Step(func(t tick.Tick) { c.Step(t, in) })
		if c.Err() != nil {
			t.Fatal(c.Err())
		}
		for _, k := range s.State(nil) {
			var got Body
			var ok bool
			if !k.Bullet {
				got, ok = c.Body().Store().Get(ce)
			} else {
				key, _ := ecs.StoreOf[predict.SpawnKey](s.World()).Get(k.E)
				if want := BulletKey(5, tick.Tick(k.Born)); key != want {
					t.Fatalf("tick %v: server bullet key %+v, want %+v", f, key, want)
				}
				keyOf[k.E] = key
				be, found := tl.PredictedSpawn(key)
				if !found {
					t.Fatalf("tick %v: no predicted bullet for %+v", f, key)
				}
				got, ok = c.Body().Store().Get(be)
				if bu, _ := c.Bullet().Store().Get(be); bu != (Bullet{Player: 5, Born: k.Born}) {
					t.Fatalf("tick %v: bullet marker %+v", f, bu)
				}
			}
			if !ok || got != k.Body {
				t.Fatalf("tick %v: client %+v (%v), server %+v", f, got, ok, k.Body)
			}
		}
		if n := c.Bullet().Store().Len(); n != s.Bullets() {
			t.Fatalf("tick %v: %d bullets on the client, %d on the server", f, n, s.Bullets())
		}
	}
	st := tl.Stats()
	if s.Fired() == 0 || s.Expired() == 0 || st.PredictedSpawns != s.Fired() || len(keyOf) != int(s.Fired()) {
		t.Fatalf("server fired %d (expired %d), client predicted %d, %d keys seen", s.Fired(), s.Expired(), st.PredictedSpawns, len(keyOf))
	}
}

func TestNewProtocol(t *testing.T) {
	p, err := NewProtocol(input.Config{})
	if err != nil || p.Inputs == nil || p.Inputs.Config().Redundancy != 3 {
		t.Fatalf("%v, %v", p, err)
	}
}

// TestSetEffects: with SetEffects, every bullet the client fires is
// reported with its key and body, once per simulation of its tick (no
// rollbacks here: once), the same bullets the server fires.
func TestSetEffects(t *testing.T) {
	s := NewServer()
	e, _ := s.AddShip(5)
	cw := ecs.New()
	tl := predict.New(cw, 0, predict.Config{Window: 64})
	c, err := NewClient(tl)
	if err != nil {
		t.Fatal(err)
	}
	ce := cw.Spawn()
	b0, _ := ecs.StoreOf[Body](s.World()).Get(e)
	_ = ecs.Register[Ship](cw).Set(ce, Ship{Player: 5})
	_ = c.Body().Store().Set(ce, b0)
	shots := map[predict.SpawnKey]int{}
	c.SetEffects(func(tk tick.Tick, key predict.SpawnKey, b Body) {
		if key != BulletKey(5, tk) {
			t.Errorf("tick %v: shot key %+v", tk, key)
		}
		shots[key]++
	}, nil)
	for f := tick.Tick(1); f <= 100; f++ {
		in := func(p uint64) Stick { return Bot(3, p, f) }
		if err := s.Step(f, in); err != nil {
			t.Fatal(err)
		}
		tl.Step(func(t tick.Tick) { c.Step(t, in) })
	}
	if len(shots) == 0 || len(shots) != int(s.Fired()) {
		t.Fatalf("%d shots reported, the server fired %d", len(shots), s.Fired())
	}
	for k, n := range shots {
		if n != 1 {
			t.Errorf("shot %+v reported %d times", k, n)
		}
	}
}

// TestRemoveShip: a player who leaves loses the ship; the others keep
// theirs, in order.
func TestRemoveShip(t *testing.T) {
	s := NewServer()
	a, _ := s.AddShip(1)
	b, _ := s.AddShip(2)
	c, _ := s.AddShip(3)
	if !s.RemoveShip(2) || s.RemoveShip(2) || s.RemoveShip(9) {
		t.Fatal("RemoveShip: want true for a ship, then false")
	}
	if got := s.Ships(); len(got) != 2 || got[0] != a || got[1] != c {
		t.Fatalf("ships %v, want [%v %v]", got, a, c)
	}
	if s.World().Alive(b) {
		t.Fatal("the removed ship is still in the World")
	}
	if err := s.Step(1, func(uint64) Stick { return Stick{Buttons: Fire} }); err != nil {
		t.Fatal(err)
	}
}
