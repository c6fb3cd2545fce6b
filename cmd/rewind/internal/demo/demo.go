package demo

import (
	"errors"
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
)

// InputSize is the size in bytes of one player's input: Buttons, then the
// aim direction (0..Directions-1).
const InputSize = 2

// Buttons of the first input byte.
const (
	Up byte = 1 << iota
	Down
	Left
	Right
	Fire
	Boost
)

// Directions is the number of aim and wander directions.
const Directions = 16

// Game rules, in arena units and frames.
const (
	// ArenaW and ArenaH are the arena's size; positions wrap around it.
	ArenaW = 320 * fixed.One
	ArenaH = 180 * fixed.One

	playerSpeedNum = 3 // player speed 3/2 units per frame, twice that boosted
	playerSpeedDen = 2
	npcSpeedNum    = 3 // NPC speed 3/4
	npcSpeedDen    = 4
	shotSpeed      = 4
	hitRadius      = 6
	// ProjectileTTL is how many frames a projectile lives.
	ProjectileTTL = 40
	// FireCooldown is how many frames a player waits between shots.
	FireCooldown = 12
)

// Position is where an entity is; it wraps around the arena.
type Position fixed.Vec2

// Velocity is how far an entity moves each frame.
type Velocity fixed.Vec2

// Player marks a player's ship.
type Player struct {
	// Handle is the player's rollback.PlayerHandle.
	Handle int32
	// Cooldown counts the frames until the player may fire again.
	Cooldown int32
	// Aim is the direction shots fly in, 0..Directions-1.
	Aim int32
}

// NPC marks a wandering non-player entity.
type NPC struct {
	// Wander counts the frames until the NPC picks a new direction.
	Wander int32
}

// Projectile is a shot in flight.
type Projectile struct {
	// Owner is the handle of the player who fired it.
	Owner int32
	// TTL counts the frames it has left.
	TTL int32
}

// Score is the game's score board (a resource).
type Score struct {
	// Points per player handle.
	Points [rollback.MaxPlayers]int32
	// Shots counts every projectile fired, Hits those that hit an NPC.
	Shots, Hits int32
	// Frames counts the simulated frames.
	Frames int32
}

// Config sets up a game. Every peer of a match must use the same Config.
type Config struct {
	// Players is the number of players, 1..rollback.MaxPlayers.
	Players int
	// NPCs is the number of wandering NPCs, 0..MaxNPCs.
	NPCs int
	// Seed seeds the world's random generator (NPC placement and
	// wandering) and the bots.
	Seed uint64
}

// MaxNPCs bounds Config.NPCs.
const MaxNPCs = 1024

// DefaultNPCs is the NPC count cmd/rewind uses.
const DefaultNPCs = 6

func (c Config) check() error {
	if c.Players < 1 || c.Players > rollback.MaxPlayers {
		return fmt.Errorf("%w: %d players, want 1..%d", ErrConfig, c.Players, rollback.MaxPlayers)
	}
	if c.NPCs < 0 || c.NPCs > MaxNPCs {
		return fmt.Errorf("%w: %d NPCs, want 0..%d", ErrConfig, c.NPCs, MaxNPCs)
	}
	return nil
}

// Game is one instance of the demo game: its world, its snapshot registry,
// and the queries its Step uses. Each peer has its own Game.
type Game struct {
	cfg     Config
	w       *ecs.World
	reg     *snapshot.Registry
	pos     *ecs.Store[Position]
	vel     *ecs.Store[Velocity]
	players *ecs.Store[Player]
	npcs    *ecs.Store[NPC]
	shots   *ecs.Store[Projectile]
	rand    *ecs.Resource[rng.Rand]
	score   *ecs.Resource[Score]

	qPlayers *ecs.Query3[Player, Position, Velocity]
	qNPCs    *ecs.Query2[NPC, Velocity]
	qMove    *ecs.Query2[Position, Velocity]
	qShots   *ecs.Query2[Projectile, Position]
	qTargets *ecs.Query2[NPC, Position]

	dirs [Directions]fixed.Vec2

	// Scratch space of one Step (not state: empty between steps).
	spawns []spawn
	dead   []ecs.Entity
	hits   []hit

	// leak, when set, makes the game non-deterministic on purpose (tests):
	// a counter kept outside the world is written into a Position.
	leak    bool
	counter int64
}

type spawn struct {
	owner    int32
	pos, vel fixed.Vec2
}

type hit struct {
	shot, npc ecs.Entity
	owner     int32
}

// New builds the game's world and registry and spawns the initial entities:
// the players' ships in handle order, then the NPCs at places drawn from the
// world's generator. The result depends only on cfg.
func New(cfg Config) (*Game, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	err := errors.Join(
		snapshot.Copy[Position](reg),
		snapshot.Copy[Velocity](reg),
		snapshot.Copy[Player](reg),
		snapshot.Copy[NPC](reg),
		snapshot.Copy[Projectile](reg),
		snapshot.CopyResource[rng.Rand](reg),
		snapshot.CopyResource[Score](reg),
	)
	if err != nil {
		return nil, err
	}
	g := &Game{
		cfg: cfg, w: w, reg: reg,
		pos:     ecs.StoreOf[Position](w),
		vel:     ecs.StoreOf[Velocity](w),
		players: ecs.StoreOf[Player](w),
		npcs:    ecs.StoreOf[NPC](w),
		shots:   ecs.StoreOf[Projectile](w),
		rand:    ecs.ResourceOf[rng.Rand](w),
		score:   ecs.ResourceOf[Score](w),
	}
	g.qPlayers = ecs.NewQuery3(g.players.Write(), g.pos.Read(), g.vel.Write())
	g.qNPCs = ecs.NewQuery2(g.npcs.Write(), g.vel.Write())
	g.qMove = ecs.NewQuery2(g.pos.Write(), g.vel.Read())
	g.qShots = ecs.NewQuery2(g.shots.Write(), g.pos.Read())
	g.qTargets = ecs.NewQuery2(g.npcs.Read(), g.pos.Read())
	for i := range g.dirs {
		angle := fixed.TwoPi.Mul(fixed.FromFraction(int64(i), Directions))
		s, c := angle.SinCos()
		g.dirs[i] = fixed.Vec2{X: c, Y: s}
	}

	g.rand.Set(rng.NewSeed(cfg.Seed))
	g.score.Set(Score{})
	for h := range cfg.Players {
		e := w.Spawn()
		p := fixed.Vec2{
			X: ArenaW.Mul(fixed.FromFraction(int64(h+1), int64(cfg.Players+1))),
			Y: ArenaH.Div(fixed.FromInt(2)),
		}
		err = errors.Join(err,
			g.players.Set(e, Player{Handle: int32(h), Aim: int32(h * Directions / cfg.Players)}),
			g.pos.Set(e, Position(p)),
			g.vel.Set(e, Velocity{}))
	}
	r := g.rand.Ptr()
	for range cfg.NPCs {
		e := w.Spawn()
		err = errors.Join(err,
			g.npcs.Set(e, NPC{}),
			g.pos.Set(e, Position(randomPoint(r))),
			g.vel.Set(e, Velocity{}))
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// randomPoint draws a point of the arena (whole units).
func randomPoint(r *rng.Rand) fixed.Vec2 {
	return fixed.Vec2{
		X: fixed.FromInt(r.Int64N(ArenaW.Int())),
		Y: fixed.FromInt(r.Int64N(ArenaH.Int())),
	}
}

// Corrupt moves player 0 one unit to the right, outside the simulation's
// rules: called by one peer only (rewind demo --corrupt), it is a
// deliberate desync of one field of one entity, for the desync dumps and
// "rewind diff" to find.
func (g *Game) Corrupt() {
	for e, row := range g.qPlayers.All() {
		if row.A.Handle == 0 {
			g.pos.Ptr(e).X = g.pos.Ptr(e).X.Add(fixed.FromInt(1))
			return
		}
	}
}

// Config returns the game's configuration.
func (g *Game) Config() Config { return g.cfg }

// World returns the game's world.
func (g *Game) World() *ecs.World { return g.w }

// Registry returns the snapshot registry of the game's rollback state.
func (g *Game) Registry() *snapshot.Registry { return g.reg }

// Score returns the current score board.
func (g *Game) Score() Score {
	s, _ := g.score.Get()
	return s
}

// Checksum returns the checksum of the current state (see
// snapshot.Registry.Checksum).
func (g *Game) Checksum() (uint64, error) {
	sum, _, err := g.reg.Checksum(nil)
	return sum, err
}

// Step simulates one frame; it is a runner.Step. Order: players read their
// input (velocity, aim, firing), NPCs pick new directions, everything moves
// and wraps, new projectiles appear, projectiles age and hit NPCs.
func (g *Game) Step(ctx *runner.Context) {
	g.spawns, g.dead, g.hits = g.spawns[:0], g.dead[:0], g.hits[:0]

	for _, row := range g.qPlayers.All() {
		p := row.A
		var in []byte
		disconnected := false
		if h := int(p.Handle); h < len(ctx.Inputs) {
			in = ctx.Inputs[h].Bytes
			disconnected = ctx.Inputs[h].Status == rollback.Disconnected
		}
		buttons, aim := decode(in)
		if disconnected {
			buttons = 0
		}
		*row.C = Velocity(g.steer(buttons))
		if buttons&(Up|Down|Left|Right) != 0 {
			p.Aim = int32(aim)
		}
		if p.Cooldown > 0 {
			p.Cooldown--
		}
		if buttons&Fire != 0 && p.Cooldown == 0 {
			p.Cooldown = FireCooldown
			d := g.dirs[p.Aim%Directions]
			g.spawns = append(g.spawns, spawn{
				owner: p.Handle,
				pos:   fixed.Vec2(*row.B).Add(d.Scale(fixed.FromInt(hitRadius))),
				vel:   d.Scale(fixed.FromInt(shotSpeed)),
			})
		}
	}

	if g.npcs.Len() > 0 {
		r := g.rand.Ptr()
		speed := fixed.FromFraction(npcSpeedNum, npcSpeedDen)
		for _, row := range g.qNPCs.All() {
			if row.A.Wander--; row.A.Wander > 0 {
				continue
			}
			row.A.Wander = 20 + r.Int32N(60)
			if r.Int32N(4) == 0 {
				*row.B = Velocity{} // rest a while
				continue
			}
			*row.B = Velocity(g.dirs[r.IntN(Directions)].Scale(speed))
		}
	}

	for b := range g.qMove.Batches() {
		for i := range b.A {
			b.A[i] = Position(wrap(fixed.Vec2(b.A[i]).Add(fixed.Vec2(b.B[i]))))
		}
	}

	score := g.score.Ptr()
	for _, s := range g.spawns {
		e := g.w.Spawn()
		ctx.Fail(errors.Join(
			g.shots.Set(e, Projectile{Owner: s.owner, TTL: ProjectileTTL}),
			g.pos.Set(e, Position(wrap(s.pos))),
			g.vel.Set(e, Velocity(s.vel))))
		score.Shots++
	}

	r2 := fixed.FromInt(hitRadius * hitRadius)
	for e, row := range g.qShots.All() {
		if row.A.TTL--; row.A.TTL <= 0 {
			g.dead = append(g.dead, e)
			continue
		}
		at := fixed.Vec2(*row.B)
		for n, t := range g.qTargets.All() {
			if fixed.Vec2(*t.B).Sub(at).LengthSquared() < r2 && !g.npcHit(n) {
				g.hits = append(g.hits, hit{shot: e, npc: n, owner: row.A.Owner})
				break
			}
		}
	}
	if len(g.hits) > 0 {
		r := g.rand.Ptr()
		for _, h := range g.hits {
			score.Points[h.owner]++
			score.Hits++
			ctx.Fail(g.pos.Set(h.npc, Position(randomPoint(r))))
			g.dead = append(g.dead, h.shot)
		}
	}
	for _, e := range g.dead {
		ctx.Fail(g.w.Despawn(e))
	}
	score.Frames++

	if g.leak {
		// Deliberately wrong: state from outside the world.
		g.counter++
		for e, row := range g.qPlayers.All() {
			if row.A.Handle == 0 {
				g.pos.Ptr(e).X = fixed.FromInt(g.counter % 300)
				break
			}
		}
	}
}

func (g *Game) npcHit(n ecs.Entity) bool {
	for _, h := range g.hits {
		if h.npc == n {
			return true
		}
	}
	return false
}

// steer turns buttons into a velocity.
func (g *Game) steer(buttons byte) fixed.Vec2 {
	var v fixed.Vec2
	if buttons&Up != 0 {
		v.Y = v.Y.Sub(fixed.One)
	}
	if buttons&Down != 0 {
		v.Y = v.Y.Add(fixed.One)
	}
	if buttons&Left != 0 {
		v.X = v.X.Sub(fixed.One)
	}
	if buttons&Right != 0 {
		v.X = v.X.Add(fixed.One)
	}
	if v == (fixed.Vec2{}) {
		return v
	}
	speed := fixed.FromFraction(playerSpeedNum, playerSpeedDen)
	if buttons&Boost != 0 {
		speed = speed.Mul(fixed.FromInt(2))
	}
	return v.Normalize().Scale(speed)
}

// wrap brings p back into the arena.
func wrap(p fixed.Vec2) fixed.Vec2 {
	for p.X >= ArenaW {
		p.X = p.X.Sub(ArenaW)
	}
	for p.X < 0 {
		p.X = p.X.Add(ArenaW)
	}
	for p.Y >= ArenaH {
		p.Y = p.Y.Sub(ArenaH)
	}
	for p.Y < 0 {
		p.Y = p.Y.Add(ArenaH)
	}
	return p
}

// decode reads an input; a short input (the empty default input before a
// player's first) presses nothing.
func decode(in []byte) (buttons byte, aim int) {
	if len(in) >= 1 {
		buttons = in[0]
	}
	if len(in) >= 2 {
		aim = int(in[1] % Directions)
	}
	return buttons, aim
}
