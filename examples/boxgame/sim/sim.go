// Package sim is the box game's simulation: the rollback state (one Box
// component per player and a FrameCount resource), the Step that advances it
// by one frame, and the scripted inputs used by headless runs and tests.
//
// It is the Go counterpart of bevy_ggrs's box_game: each player moves a box
// on a flat arena with four direction keys; pressing a direction accelerates
// the box, releasing it lets friction slow it down, speed is capped, and the
// box stays inside the arena. Boxes that overlap push each other apart.
//
// Everything here is deterministic: positions and velocities are fixed-point
// (package fixed), the Step reads only the world and the inputs, and the
// world iterates in an order that depends only on the sequence of
// operations. The package imports no display code, so its tests run without
// a screen.
package sim

import (
	"errors"
	"fmt"
	"image/color"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/fixed"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
)

// InputSize is the size in bytes of one player's input: one byte of
// direction bits.
const InputSize = 1

// Direction bits of an input byte.
const (
	Up byte = 1 << iota
	Down
	Left
	Right
)

// MinPlayers and MaxPlayers bound Config.Players.
const (
	MinPlayers = 1
	MaxPlayers = 4
)

// Arena and movement constants, in arena units (one unit is one pixel at
// scale 1) and frames (60 per second). They follow box_game's proportions.
const (
	// ArenaW and ArenaH are the arena's size.
	ArenaW = 480 * fixed.One
	ArenaH = 360 * fixed.One
	// BoxSize is the side of a box.
	BoxSize = 32 * fixed.One

	accel    = fixed.One / 2      // units per frame², while a key is held
	maxSpeed = 6 * fixed.One      // units per frame
	friction = 9 * fixed.One / 10 // velocity kept per frame on a released axis
)

// Box is a player's box: its owner, position (top-left corner) and velocity.
type Box struct {
	// Handle is the player's rollback.PlayerHandle.
	Handle int32
	// Pos is the top-left corner, Vel the displacement per frame.
	Pos, Vel fixed.Vec2
}

// FrameCount counts the simulated frames (a resource, like box_game's).
type FrameCount struct {
	Frame int32
}

// Config sets up a game. Every peer of a match must use the same Config.
type Config struct {
	// Players is the number of players, MinPlayers..MaxPlayers.
	Players int
}

// ErrConfig wraps invalid configurations.
var ErrConfig = errors.New("sim: invalid config")

// Game is one instance of the box game: its world, the snapshot registry of
// its rollback state, and the stores its Step uses. Each peer has its own.
type Game struct {
	cfg   Config
	w     *ecs.World
	reg   *snapshot.Registry
	boxes *ecs.Store[Box]
	count *ecs.Resource[FrameCount]
}

// New builds the world and spawns one box per player, in handle order, on a
// circle around the arena's centre. The result depends only on cfg.
func New(cfg Config) (*Game, error) {
	if cfg.Players < MinPlayers || cfg.Players > MaxPlayers {
		return nil, fmt.Errorf("%w: %d players, want %d..%d", ErrConfig, cfg.Players, MinPlayers, MaxPlayers)
	}
	w := ecs.New()
	reg := snapshot.NewRegistry(w)
	if err := errors.Join(snapshot.Copy[Box](reg), snapshot.CopyResource[FrameCount](reg)); err != nil {
		return nil, err
	}
	g := &Game{cfg: cfg, w: w, reg: reg, boxes: ecs.StoreOf[Box](w), count: ecs.ResourceOf[FrameCount](w)}
	g.count.Set(FrameCount{})
	half := BoxSize.Div(fixed.FromInt(2))
	centre := fixed.Vec2{X: ArenaW.Div(fixed.FromInt(2)).Sub(half), Y: ArenaH.Div(fixed.FromInt(2)).Sub(half)}
	radius := ArenaH.Div(fixed.FromInt(4))
	for h := range cfg.Players {
		angle := fixed.TwoPi.Mul(fixed.FromFraction(int64(h), int64(cfg.Players)))
		s, c := angle.SinCos()
		pos := centre.Add(fixed.Vec2{X: c, Y: s}.Scale(radius))
		if err := g.boxes.Set(w.Spawn(), Box{Handle: int32(h), Pos: pos}); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Config returns the game's configuration.
func (g *Game) Config() Config { return g.cfg }

// World returns the game's world.
func (g *Game) World() *ecs.World { return g.w }

// Registry returns the snapshot registry of the rollback state.
func (g *Game) Registry() *snapshot.Registry { return g.reg }

// Frame returns the number of frames simulated so far.
func (g *Game) Frame() int32 {
	c, _ := g.count.Get()
	return c.Frame
}

// Boxes appends every box, in handle order, to dst and returns it (for
// drawing and tests).
func (g *Game) Boxes(dst []Box) []Box {
	start := len(dst)
	for range g.cfg.Players {
		dst = append(dst, Box{Handle: -1})
	}
	for _, b := range g.boxes.Values() {
		if h := int(b.Handle); h >= 0 && h < g.cfg.Players {
			dst[start+h] = b
		}
	}
	return dst
}

// Checksum returns the checksum of the current state.
func (g *Game) Checksum() (uint64, error) {
	sum, _, err := g.reg.Checksum(nil)
	return sum, err
}

// NewRunner returns a runner.Runner that plays g with sess: cfg's World,
// Registry, Session and Step are filled in.
func (g *Game) NewRunner(sess runner.Session, cfg runner.Config) (*runner.Runner, error) {
	cfg.World, cfg.Registry, cfg.Session, cfg.Step = g.w, g.reg, sess, g.Step
	return runner.New(cfg)
}

// Step simulates one frame; it is a runner.Step. Each box accelerates along
// the held directions, slows down on released axes, is capped at the top
// speed, moves, and is kept inside the arena; then overlapping boxes are
// pushed apart, lower handle first.
func (g *Game) Step(ctx *runner.Context) {
	for _, b := range g.boxes.All() {
		var in byte
		if h := int(b.Handle); h < len(ctx.Inputs) && ctx.Inputs[h].Status != rollback.Disconnected && len(ctx.Inputs[h].Bytes) > 0 {
			in = ctx.Inputs[h].Bytes[0]
		}
		b.Vel.X = axis(b.Vel.X, in&Left != 0, in&Right != 0)
		b.Vel.Y = axis(b.Vel.Y, in&Up != 0, in&Down != 0)
		if l2 := b.Vel.LengthSquared(); l2 > maxSpeed.Mul(maxSpeed) {
			b.Vel = b.Vel.Scale(maxSpeed.Div(l2.Sqrt()))
		}
		b.Pos = clampArena(b.Pos.Add(b.Vel))
	}
	g.separate()
	g.count.Ptr().Frame++
}

// axis updates one velocity component: accelerate towards the held
// direction, or apply friction when neither or both are held.
func axis(v fixed.Fixed, neg, pos bool) fixed.Fixed {
	switch {
	case neg && !pos:
		return v.Sub(accel)
	case pos && !neg:
		return v.Add(accel)
	}
	return v.Mul(friction)
}

func clampArena(p fixed.Vec2) fixed.Vec2 {
	return fixed.Vec2{X: p.X.Clamp(0, ArenaW.Sub(BoxSize)), Y: p.Y.Clamp(0, ArenaH.Sub(BoxSize))}
}

// separate pushes every overlapping pair of boxes apart along the axis of
// least overlap, each box by half the overlap, and stops their approach on
// that axis. Pairs are visited in handle order.
func (g *Game) separate() {
	var ptrs [MaxPlayers]*Box
	for _, b := range g.boxes.All() {
		if h := int(b.Handle); h >= 0 && h < MaxPlayers {
			ptrs[h] = b
		}
	}
	two := fixed.FromInt(2)
	for i := range ptrs {
		for j := i + 1; j < len(ptrs); j++ {
			a, b := ptrs[i], ptrs[j]
			if a == nil || b == nil {
				continue
			}
			d := b.Pos.Sub(a.Pos)
			ox, oy := BoxSize.Sub(d.X.Abs()), BoxSize.Sub(d.Y.Abs())
			if ox <= 0 || oy <= 0 {
				continue
			}
			if ox <= oy {
				push := ox.Div(two)
				if d.X < 0 {
					push = push.Neg()
				}
				a.Pos.X, b.Pos.X = a.Pos.X.Sub(push), b.Pos.X.Add(push)
				a.Vel.X, b.Vel.X = stopApproach(a.Vel.X, b.Vel.X, d.X)
			} else {
				push := oy.Div(two)
				if d.Y < 0 {
					push = push.Neg()
				}
				a.Pos.Y, b.Pos.Y = a.Pos.Y.Sub(push), b.Pos.Y.Add(push)
				a.Vel.Y, b.Vel.Y = stopApproach(a.Vel.Y, b.Vel.Y, d.Y)
			}
			a.Pos, b.Pos = clampArena(a.Pos), clampArena(b.Pos)
		}
	}
}

// stopApproach gives two boxes moving towards each other on one axis (b is
// on the side d points to) their mean velocity on that axis, like an
// inelastic collision.
func stopApproach(va, vb, d fixed.Fixed) (fixed.Fixed, fixed.Fixed) {
	rel := vb.Sub(va)
	if (d >= 0 && rel >= 0) || (d < 0 && rel <= 0) {
		return va, vb // already separating
	}
	m := va.Add(vb).Div(fixed.FromInt(2))
	return m, m
}

// Script returns the scripted input of player h at frame f, for headless
// runs and tests: a pure function of (f, h). Each player holds a direction
// for a stretch of frames whose length depends on the player, then picks
// another, so the boxes wander, meet and collide.
func Script(f rollback.Frame, h rollback.PlayerHandle) byte {
	period := 20 + 7*int32(h)
	stretch := uint32(int32(f)/period) + 1
	x := stretch*2654435761 ^ uint32(h+1)*40503
	x ^= x >> 13
	x *= 0x5bd1e995
	x ^= x >> 15
	moves := [...]byte{Up, Down, Left, Right, Up | Left, Up | Right, Down | Left, Down | Right, 0}
	return moves[x%uint32(len(moves))]
}

// Color is the colour of player h's box (the display and the screenshot
// checker share it).
func Color(h int) color.RGBA {
	colors := [MaxPlayers]color.RGBA{
		{R: 0xe6, G: 0x39, B: 0x46, A: 0xff}, // red
		{R: 0x2a, G: 0x9d, B: 0xf4, A: 0xff}, // blue
		{R: 0x2e, G: 0xc4, B: 0x5a, A: 0xff}, // green
		{R: 0xf4, G: 0xa2, B: 0x61, A: 0xff}, // orange
	}
	return colors[h%MaxPlayers]
}
