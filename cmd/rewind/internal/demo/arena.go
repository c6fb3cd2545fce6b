package demo

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/transport"
)

// The arena is the server-authoritative world of "rewind demo server": the
// server simulates it and replicates it to its clients with package
// replicate. Unlike Game it is not rolled back, so it keeps its random
// generator and bookkeeping outside the world.

// Health is an arena entity's hit points. An entity whose health reaches
// zero is destroyed (despawned).
type Health struct{ HP int32 }

// Shield absorbs damage before Health does. It comes and goes: the arena
// inserts it on random entities and removes it when it is used up.
type Shield struct{ Strength int32 }

// Kind says what an arena entity is. It never changes, so it is replicated
// once (replicate.Once).
type Kind struct{ K uint8 }

// Motor drives a drone: it dashes in a direction for a while, then rests
// for a while. It lives on the server only (it is not replicated).
type Motor struct {
	// Ticks counts the ticks until the drone switches between dashing and
	// resting.
	Ticks int32
}

// Kinds of arena entities.
const (
	// KindDrone moves (it has a Velocity).
	KindDrone uint8 = 1
	// KindRock stays where it is (it has no Velocity).
	KindRock uint8 = 2
)

// Ping is the message a client sends to the arena server; the server
// answers every Ping with an Echo to every client.
type Ping struct{ Seq uint32 }

// Echo is the server's broadcast of a client's Ping.
type Echo struct {
	// Client is the replicate.ClientID of the client that sent the Ping.
	Client uint64
	// Seq is the Ping's sequence number.
	Seq uint32
}

// ArenaProtocol is the replication protocol of the arena, with its message
// types. Server and clients each build their own with NewArenaProtocol.
type ArenaProtocol struct {
	Protocol *replicate.Protocol
	// Ping goes from clients to the server, Echo from the server to every
	// client, both reliable and ordered.
	Ping replicate.MessageType[Ping]
	Echo replicate.MessageType[Echo]
}

// NewArenaProtocol registers the arena's replicated components and
// messages, in the same order on every call, so a server and its clients
// get equal protocol hashes.
func NewArenaProtocol() (*ArenaProtocol, error) {
	p := replicate.NewProtocol()
	ap := &ArenaProtocol{Protocol: p}
	var errs [7]error
	// Every component replicates on its own, wherever an entity has it.
	own := replicate.WithOwnRule()
	_, errs[0] = replicate.Component[Position](p, own, replicate.WithWireForm(positionWire, positionFromWire, "1/256"))
	_, errs[1] = replicate.Component[Velocity](p, own)
	_, errs[2] = replicate.Component[Health](p, own)
	_, errs[3] = replicate.Component[Shield](p, own)
	_, errs[4] = replicate.Component[Kind](p, replicate.WithMode(replicate.Once), own)
	ap.Ping, errs[5] = replicate.RegisterMessage[Ping](p, replicate.ClientToServer, transport.ReliableOrdered)
	ap.Echo, errs[6] = replicate.RegisterMessage[Echo](p, replicate.ServerToClient, transport.ReliableOrdered)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	if err := p.AddCustom("rewind demo arena/1"); err != nil {
		return nil, err
	}
	return ap, nil
}

// ArenaConfig sets up an Arena.
type ArenaConfig struct {
	// Entities is the population the arena keeps: destroyed entities are
	// replaced by new ones, a few per tick. 1..MaxArenaEntities.
	Entities int
	// Seed seeds the arena's random generator.
	Seed uint64
}

// MaxArenaEntities bounds ArenaConfig.Entities.
const MaxArenaEntities = 100_000

// Arena rules, per tick.
const (
	arenaHP          = 100
	arenaMaxDamage   = 40
	arenaRockEvery   = 5  // one entity in 5 is a rock
	arenaDashMin     = 30 // a dash lasts 30..119 ticks
	arenaDashSpread  = 90
	arenaRestMin     = 120 // a rest 120..479 ticks: about a fifth of the drones dash
	arenaRestSpread  = 360
	arenaShieldEvery = 4   // a shield appears every 4 ticks (on average)
	arenaSpawnPerTk  = 2   // at most this many replacements per tick, or one per arenaHitsPer entities
	arenaHitsPer     = 300 // one hit per tick per this many entities
)

// ArenaStats counts what happened in an Arena.
type ArenaStats struct {
	Ticks                 int
	Spawned, Despawned    int
	Hits, ShieldsRaised   int
	ShieldsBroken, Dashes int
	// Moving is the number of drones dashing after the last step.
	Moving int
}

// Arena is the server demo's world: drones that dash around (wrapping at
// the edges) and rest in turn, and rocks, all marked replicate.Replicated,
// hit at random; hits take shields and health, destroyed entities are
// despawned and replaced. Every structural change replication knows
// (spawn, despawn, insert, remove) happens, and the position of every
// dashing drone changes every tick. The result depends only on the
// configuration and the number of steps.
type Arena struct {
	cfg    ArenaConfig
	w      *ecs.World
	rep    *ecs.Store[replicate.Replicated]
	pos    *ecs.Store[Position]
	vel    *ecs.Store[Velocity]
	health *ecs.Store[Health]
	shield *ecs.Store[Shield]
	kind   *ecs.Store[Kind]
	motor  *ecs.Store[Motor]
	rand   rng.Rand
	live   []ecs.Entity // alive entities; order depends only on the steps
	born   []ecs.Entity // spawned by the last step
	dirs   [Directions]fixed.Vec2
	stats  ArenaStats
}

// NewArena builds an arena world with cfg.Entities entities.
func NewArena(cfg ArenaConfig) (*Arena, error) {
	if cfg.Entities < 1 || cfg.Entities > MaxArenaEntities {
		return nil, fmt.Errorf("%w: %d arena entities, want 1..%d", ErrConfig, cfg.Entities, MaxArenaEntities)
	}
	w := ecs.New()
	a := &Arena{
		cfg:    cfg,
		w:      w,
		rep:    ecs.Register[replicate.Replicated](w),
		pos:    ecs.Register[Position](w),
		vel:    ecs.Register[Velocity](w),
		health: ecs.Register[Health](w),
		shield: ecs.Register[Shield](w),
		kind:   ecs.Register[Kind](w),
		motor:  ecs.Register[Motor](w),
		rand:   rng.NewSeed(cfg.Seed),
	}
	for i := range a.dirs {
		angle := fixed.TwoPi.Mul(fixed.FromFraction(int64(i), Directions))
		s, c := angle.SinCos()
		a.dirs[i] = fixed.Vec2{X: c, Y: s}
	}
	for range cfg.Entities {
		if err := a.spawn(); err != nil {
			return nil, err
		}
		// The first entities are worn already, so some fall from the start.
		if err := a.health.Set(a.live[len(a.live)-1], Health{HP: int32(1 + a.rand.IntN(arenaHP))}); err != nil {
			return nil, err
		}
	}
	a.stats.Spawned = 0 // count replacements only
	return a, nil
}

// World returns the arena's world (the server's replicated world).
func (a *Arena) World() *ecs.World { return a.w }

// Entities returns the number of entities alive.
func (a *Arena) Entities() int { return len(a.live) }

// Stats returns what happened so far.
func (a *Arena) Stats() ArenaStats { return a.stats }

// Spawned returns the entities the last Step spawned (after NewArena: the
// initial ones). The slice is reused by the next Step.
func (a *Arena) Spawned() []ecs.Entity { return a.born }

// spawn creates one entity: a rock now and then, otherwise a drone.
func (a *Arena) spawn() error {
	e := a.w.Spawn()
	k := KindDrone
	if a.rand.IntN(arenaRockEvery) == 0 {
		k = KindRock
	}
	err := errors.Join(
		a.rep.Set(e, replicate.Replicated{}),
		a.kind.Set(e, Kind{K: k}),
		a.pos.Set(e, Position(randomPoint(&a.rand))),
		a.health.Set(e, Health{HP: arenaHP}),
	)
	if k == KindDrone {
		err = errors.Join(err,
			a.vel.Set(e, Velocity{}),
			a.motor.Set(e, Motor{Ticks: int32(1 + a.rand.IntN(arenaRestMin+arenaRestSpread))}))
	}
	if err != nil {
		return err
	}
	a.live = append(a.live, e)
	a.born = append(a.born, e)
	a.stats.Spawned++
	return nil
}

// velocity draws a dashing drone's velocity: a direction at 1/2 to 3/2
// units per tick.
func (a *Arena) velocity() fixed.Vec2 {
	speed := fixed.FromFraction(int64(2+a.rand.IntN(5)), 4)
	v := a.dirs[a.rand.IntN(Directions)].Scale(speed)
	return fixed.Vec2{X: onGrid(v.X), Y: onGrid(v.Y)}
}

// The arena's positions travel in 6 bytes (PositionWire) instead of 16:
// they lie on a grid of 1/256 unit, since entities start at whole units
// and velocities are rounded down to the grid (onGrid), and the wire form
// carries the grid coordinates. It is exact: clients hold the server's
// positions bit for bit.

// gridShift is the grid's step: 2^-8 unit, 24 fraction bits of Q32.32
// below it.
const gridShift = 24

// onGrid rounds v down to the grid.
func onGrid(v fixed.Fixed) fixed.Fixed { return v &^ (1<<gridShift - 1) }

// PositionWire is an arena position on the wire: its grid coordinates
// (the arena is 320 x 180 units, 81,920 x 46,080 grid steps).
type PositionWire struct {
	X uint32
	Y uint16
}

func positionWire(p Position) PositionWire {
	return PositionWire{X: uint32(p.X >> gridShift), Y: uint16(p.Y >> gridShift)}
}

func positionFromWire(w PositionWire) Position {
	return Position{X: fixed.Fixed(w.X) << gridShift, Y: fixed.Fixed(w.Y) << gridShift}
}

// Step simulates one tick: drones move, turn or stop now and then, shields
// appear, random entities are hit, destroyed ones are replaced.
func (a *Arena) Step() error {
	a.stats.Ticks++
	a.born = a.born[:0]
	// Move. Only drones that move are written, so resting ones do not look
	// changed.
	a.stats.Moving = 0
	for e, v := range a.vel.Values() {
		if v == (Velocity{}) {
			continue
		}
		if p := a.pos.Ptr(e); p != nil {
			*p = Position(wrap(fixed.Vec2(*p).Add(fixed.Vec2(v))))
			a.stats.Moving++
		}
	}
	// Dash or rest.
	for e, m := range a.motor.All() {
		if m.Ticks--; m.Ticks > 0 {
			continue
		}
		v, ok := a.vel.Get(e)
		if !ok {
			continue
		}
		if v == (Velocity{}) {
			v = Velocity(a.velocity())
			m.Ticks = int32(arenaDashMin + a.rand.IntN(arenaDashSpread))
			a.stats.Dashes++
		} else {
			v = Velocity{}
			m.Ticks = int32(arenaRestMin + a.rand.IntN(arenaRestSpread))
		}
		if err := a.vel.Set(e, v); err != nil {
			return err
		}
	}
	n := len(a.live)
	// Shields.
	if a.rand.IntN(arenaShieldEvery) == 0 {
		e := a.live[a.rand.IntN(n)]
		if !a.shield.Has(e) {
			if err := a.shield.Set(e, Shield{Strength: int32(10 + a.rand.IntN(40))}); err != nil {
				return err
			}
			a.stats.ShieldsRaised++
		}
	}
	// Hits: one per 300 entities per tick (at least one).
	for range max(1, n/arenaHitsPer) {
		i := a.rand.IntN(len(a.live))
		if err := a.hit(i, int32(1+a.rand.IntN(arenaMaxDamage))); err != nil {
			return err
		}
	}
	// Replace the destroyed, as many per tick as hits can destroy (so a
	// large population is kept too).
	for k := 0; k < max(arenaSpawnPerTk, n/arenaHitsPer) && len(a.live) < a.cfg.Entities; k++ {
		if err := a.spawn(); err != nil {
			return err
		}
	}
	return nil
}

// hit deals damage to live[i]: its shield first (removed when used up),
// then its health; at zero health it is despawned.
func (a *Arena) hit(i int, damage int32) error {
	e := a.live[i]
	a.stats.Hits++
	if s := a.shield.Ptr(e); s != nil {
		if s.Strength > damage {
			s.Strength -= damage
			return nil
		}
		damage -= s.Strength
		if err := a.shield.Remove(e); err != nil {
			return err
		}
		a.stats.ShieldsBroken++
	}
	h := a.health.Ptr(e)
	if h == nil {
		return nil
	}
	h.HP -= damage
	if h.HP > 0 {
		return nil
	}
	if err := a.w.Despawn(e); err != nil {
		return err
	}
	a.live = slices.Delete(a.live, i, i+1)
	a.stats.Despawned++
	return nil
}

// ArenaEntity is the replicated state of one arena entity: each component
// and whether the entity has it. It is comparable.
type ArenaEntity struct {
	Position    Position
	Velocity    Velocity
	Health      Health
	Shield      Shield
	Kind        Kind
	HasPosition bool
	HasVelocity bool
	HasHealth   bool
	HasShield   bool
	HasKind     bool
}

// ArenaView returns the replicated state of a world keyed by server entity.
// For the server's world, pass toServer nil: every entity marked
// replicate.Replicated is listed under itself. For a client's world, pass
// the client's ServerEntity: every entity it maps is listed under its
// server entity.
func ArenaView(w *ecs.World, toServer func(ecs.Entity) (ecs.Entity, bool)) map[ecs.Entity]ArenaEntity {
	rep := ecs.Register[replicate.Replicated](w)
	pos, vel := ecs.Register[Position](w), ecs.Register[Velocity](w)
	hp, sh, kind := ecs.Register[Health](w), ecs.Register[Shield](w), ecs.Register[Kind](w)
	out := make(map[ecs.Entity]ArenaEntity, w.Len())
	for e := range w.Entities() {
		key := e
		if toServer == nil {
			if !rep.Has(e) {
				continue
			}
		} else {
			se, ok := toServer(e)
			if !ok {
				continue
			}
			key = se
		}
		var v ArenaEntity
		v.Position, v.HasPosition = pos.Get(e)
		v.Velocity, v.HasVelocity = vel.Get(e)
		v.Health, v.HasHealth = hp.Get(e)
		v.Shield, v.HasShield = sh.Get(e)
		v.Kind, v.HasKind = kind.Get(e)
		out[key] = v
	}
	return out
}

// DiffArenaViews compares a client's view with the server's (see
// ArenaView). It returns "" when they are equal, otherwise how many
// entities differ and a description of the first (in entity order).
func DiffArenaViews(server, client map[ecs.Entity]ArenaEntity) string {
	var bad []ecs.Entity
	for e, want := range server {
		if got, ok := client[e]; !ok || got != want {
			bad = append(bad, e)
		}
	}
	for e := range client {
		if _, ok := server[e]; !ok {
			bad = append(bad, e)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	slices.Sort(bad)
	e := bad[0]
	want, onServer := server[e]
	got, onClient := client[e]
	var first string
	switch {
	case !onClient:
		first = fmt.Sprintf("entity %v missing on the client", e)
	case !onServer:
		first = fmt.Sprintf("entity %v on the client but not on the server", e)
	default:
		first = fmt.Sprintf("entity %v: client %+v, server %+v", e, got, want)
	}
	return fmt.Sprintf("%d entities differ; first: %s", len(bad), first)
}
