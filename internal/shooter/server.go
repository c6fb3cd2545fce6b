package shooter

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// Server is the server's authoritative World of the game: the ships in
// the order their players joined and the bullets in flight.
type Server struct {
	w       *ecs.World
	body    *ecs.Store[Body]
	ship    *ecs.Store[Ship]
	bullet  *ecs.Store[Bullet]
	rep     *ecs.Store[replicate.Replicated]
	ships   []ecs.Entity
	bullets []ecs.Entity
	fired   uint64
	expired uint64

	// Lag compensation: the bodies of the last second, and the scans'
	// verdicts.
	hist    *lagcomp.History
	bodies  *lagcomp.Type[Body]
	interp  bool // the clients show the other ships interpolated
	targets []Target
	scans   []ScanResult
}

// NewServer returns an empty game World.
func NewServer() *Server {
	w := ecs.New()
	s := &Server{w: w, body: ecs.Register[Body](w), ship: ecs.Register[Ship](w),
		bullet: ecs.Register[Bullet](w), rep: ecs.Register[replicate.Replicated](w)}
	s.hist = lagcomp.New(w, lagcomp.Config{})
	s.bodies, _ = lagcomp.Track(s.hist, LerpBody) // Body is plain data
	return s
}

// ShowOthersInterpolated says how the clients show the other players'
// ships: interpolated (a scan is judged against them as the claim in the
// input says the shooter saw them, package lagcomp) or predicted (at the
// present, as the server has them at the scan's tick).
func (s *Server) ShowOthersInterpolated(on bool) { s.interp = on }

// Scans returns the verdicts of the hit-scans so far, in order.
func (s *Server) Scans() []ScanResult { return s.scans }

// History returns the server's lag compensation history.
func (s *Server) History() *lagcomp.History { return s.hist }

// World returns the World the server replicates.
func (s *Server) World() *ecs.World { return s.w }

// AddShip spawns player's ship; the k-th ship starts on a diagonal of
// the arena.
func (s *Server) AddShip(player uint64) (ecs.Entity, error) {
	k := int32(len(s.ships))
	e := s.w.Spawn()
	pos := (k*Size/7 + Size/11) % Size
	for _, err := range []error{
		s.rep.Set(e, replicate.Replicated{}),
		s.ship.Set(e, Ship{Player: player}),
		s.body.Set(e, Body{X: pos, Y: Size - 1 - pos}),
	} {
		if err != nil {
			return 0, fmt.Errorf("shooter: ship of player %d: %w", player, err)
		}
	}
	s.ships = append(s.ships, e)
	return e, nil
}

// RemoveShip despawns player's ship (its player left); its bullets in
// flight expire as usual. It reports whether there was one.
func (s *Server) RemoveShip(player uint64) bool {
	for i, e := range s.ships {
		if sh, _ := s.ship.Get(e); sh.Player == player {
			_ = s.w.Despawn(e)
			s.ships = slices.Delete(s.ships, i, i+1)
			return true
		}
	}
	return false
}

// Ships returns the ships in the order they were added.
func (s *Server) Ships() []ecs.Entity { return s.ships }

// Bullets returns the number of bullets in flight.
func (s *Server) Bullets() int { return len(s.bullets) }

// Fired and Expired count the bullets spawned and despawned.
func (s *Server) Fired() uint64   { return s.fired }
func (s *Server) Expired() uint64 { return s.expired }

// Step simulates tick t: bullets past their lifetime are despawned, the
// others fly; every ship steers with input(player) and may fire (Shoot): a
// new bullet exists from the end of t, spawned under BulletKey(player, t)
// (predict.ServerSpawn), the key the player's client predicts it with.
// Then each ship that scans (Scans) is judged by HitScan against the
// other ships as its player saw them (lag compensation), and the tick's
// bodies are captured for the scans to come.
func (s *Server) Step(t tick.Tick, input func(player uint64) Stick) error {
	s.bullets = slices.DeleteFunc(s.bullets, func(e ecs.Entity) bool {
		b, _ := s.bullet.Get(e)
		if !Expired(b, t) {
			Fly(s.body.Ptr(e))
			return false
		}
		_ = s.w.Despawn(e)
		s.expired++
		return true
	})
	for _, e := range s.ships {
		sh, _ := s.ship.Get(e)
		in := input(sh.Player)
		b := s.body.Ptr(e)
		Steer(b, in)
		shot, ok := Shoot(*b, in, t)
		if !ok {
			continue
		}
		be := predict.ServerSpawn(s.w, BulletKey(sh.Player, t))
		if err := errors.Join(
			s.bullet.Set(be, Bullet{Player: sh.Player, Born: uint32(t)}),
			s.body.Set(be, shot),
		); err != nil {
			return fmt.Errorf("shooter: bullet: %w", err)
		}
		s.bullets = append(s.bullets, be)
		s.fired++
	}
	for _, e := range s.ships {
		sh, _ := s.ship.Get(e)
		if in := input(sh.Player); Scans(in, t) {
			s.scans = append(s.scans, HitScan(sh.Player, t, *s.body.Ptr(e), s.seen(in.Seen.Claim(t))))
		}
	}
	s.hist.Capture(t)
	return nil
}

// seen returns the ships as a client showing claim c saw them: rewound
// to the claim when the clients interpolate the other ships, at the
// present otherwise.
func (s *Server) seen(c lagcomp.Claim) []Target {
	s.targets = s.targets[:0]
	var v lagcomp.View
	if s.interp {
		v = s.hist.At(c)
	}
	for _, e := range s.ships {
		sh, _ := s.ship.Get(e)
		b, ok := s.body.Get(e)
		if s.interp {
			b, ok = s.bodies.At(v, e)
		}
		if ok {
			s.targets = append(s.targets, Target{Player: sh.Player, Body: b})
		}
	}
	return s.targets
}

// Entity is one entity's state at a tick, for comparisons: its body and
// its player (a ship's, or the one who fired a bullet); Bullet is true for
// a bullet, Born its tick of birth.
type Entity struct {
	Body   Body
	Player uint64
	Bullet bool
	Born   uint32
}

// State appends the state of every entity with a Body to dst, keyed by
// server entity, in the World's order.
func (s *Server) State(dst []Keyed) []Keyed {
	for e, b := range s.body.Values() {
		st := Keyed{E: e, Entity: Entity{Body: b}}
		if sh, ok := s.ship.Get(e); ok {
			st.Player = sh.Player
		} else if bu, ok := s.bullet.Get(e); ok {
			st.Player, st.Bullet, st.Born = bu.Player, true, bu.Born
		}
		dst = append(dst, st)
	}
	return dst
}

// Keyed is an Entity with its server entity.
type Keyed struct {
	E ecs.Entity
	Entity
}
