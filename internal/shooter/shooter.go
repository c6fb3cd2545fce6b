package shooter

import (
	"encoding/binary"
	"errors"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/quant"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
)

// Body is an entity's position and velocity, in arena units: the state a
// client predicts.
type Body struct{ X, Y, VX, VY int32 }

// Ship marks a player's ship: Player is the replicate.ClientID of the
// player steering it.
type Ship struct{ Player uint64 }

// Bullet marks a bullet: the player who fired it and the server tick it
// was fired at.
type Bullet struct {
	Player uint64
	Born   uint32
}

// Stick is a player's input for one tick: Buttons is a mask of Up, Down,
// Left, Right, Fire and Scan; Seen, with Scan, is what the player's
// screen showed of the ships it interpolates (lag compensation's claim,
// relative to the input's tick).
type Stick struct {
	Buttons uint8
	Seen    lagcomp.Recent
}

// Buttons of a Stick.
const (
	Up uint8 = 1 << iota
	Down
	Left
	Right
	Fire
	Scan
)

// Rules of the game.
const (
	// Size is the side of the square arena; ships wrap around its edges.
	Size = 1 << 12
	// ShipSpeed is how far a ship moves per tick along each axis it is
	// steered on.
	ShipSpeed = 6
	// BulletSpeed is how far a bullet moves per tick along each axis.
	BulletSpeed = 16
	// BulletTTL is how many ticks a bullet lives.
	BulletTTL = 30
	// FireEvery is the number of ticks between two shots of a player
	// holding Fire.
	FireEvery = 8
	// ScanEvery is the number of ticks between two hit-scans of a player
	// holding Scan; ScanRange how near (Distance) the nearest other ship
	// must be for a scan to hit it.
	ScanEvery = 12
	ScanRange = 700
)

// Protocol is the replication protocol of the game, the same on server
// and clients: Ship, Bullet and Body (registered in that order, so a spawn
// writes the marker before the body), predict.SpawnKey (a bullet's key,
// sent with its spawn, so a client's predicted bullet is adopted), and the
// Stick inputs.
//
// What goes on the wire is chosen for bandwidth. A ship's Body is sent
// when it changes, a bullet's only with its spawn (a Rule with Mode
// replicate.Once): a bullet flies straight, so a client predicts all of
// its flight from the spawn. Body travels quantized (BodyCodec: 5 bytes
// instead of 16), which is exact: positions and velocities are small
// integers; Bullet as two uvarints (about 3 bytes instead of 12).
type Protocol struct {
	*replicate.Protocol
	Inputs *input.Type[Stick]
}

// Bounds of a Body on the wire: a bullet leaves the arena by at most
// BulletTTL moves of BulletSpeed, and no velocity exceeds BulletSpeed.
const (
	bodyMin = -BulletTTL * BulletSpeed
	bodyMax = Size + BulletTTL*BulletSpeed
)

// BodyCodec is Body's wire form: positions in [bodyMin, bodyMax] (13
// bits each), velocities in [-BulletSpeed, BulletSpeed] (6 bits each),
// bit-packed by package quant into 5 bytes. Every Body the game makes is
// in range, so it is exact.
func BodyCodec() *quant.Codec[Body] {
	pos := quant.Must(quant.NewInt(bodyMin, bodyMax))
	vel := quant.Must(quant.NewInt(-BulletSpeed, BulletSpeed))
	return quant.NewCodec(
		quant.IntField(pos, func(b *Body) *int32 { return &b.X }),
		quant.IntField(pos, func(b *Body) *int32 { return &b.Y }),
		quant.IntField(vel, func(b *Body) *int32 { return &b.VX }),
		quant.IntField(vel, func(b *Body) *int32 { return &b.VY }),
	)
}

// bulletCodec is Bullet's wire form: Player and Born as minimal uvarints.
// Decode refuses anything else, so what it accepts encodes back to itself.
type bulletCodec struct{}

func (bulletCodec) Append(dst []byte, b *Bullet) []byte {
	dst = binary.AppendUvarint(dst, b.Player)
	return binary.AppendUvarint(dst, uint64(b.Born))
}

var errBullet = errors.New("shooter: malformed bullet")

func (bulletCodec) Decode(src []byte, b *Bullet) error {
	r := bin.NewReader(src)
	b.Player = r.Uvarint()
	b.Born = r.Uvarint32()
	if r.End() != nil {
		return errBullet
	}
	return nil
}

// NewProtocol returns the game's protocol, inputs sent with cfg.
func NewProtocol(cfg input.Config) (*Protocol, error) {
	p := replicate.NewProtocol()
	if _, err := replicate.Component[Ship](p, replicate.WithOwnRule()); err != nil {
		return nil, err
	}
	if _, err := replicate.Component[Bullet](p, replicate.WithOwnRule(), replicate.WithCodec[Bullet](bulletCodec{}, "shooter.Bullet/uvarint")); err != nil {
		return nil, err
	}
	body, err := replicate.Component[Body](p, replicate.WithCodec[Body](BodyCodec(), "shooter.Body/v1"))
	if err != nil {
		return nil, err
	}
	once := replicate.Once
	if err := errors.Join(
		p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{body}, Filters: []replicate.Filter{replicate.With[Ship]()}}),
		p.AddRule(replicate.Rule{Components: []replicate.ComponentIndex{body}, Filters: []replicate.Filter{replicate.With[Bullet]()}, Mode: &once}),
	); err != nil {
		return nil, err
	}
	if _, err := predict.RegisterSpawnKey(p); err != nil {
		return nil, err
	}
	in, err := input.Register[Stick](p, nil, cfg)
	if err != nil {
		return nil, err
	}
	return &Protocol{Protocol: p, Inputs: in}, nil
}

// Steer sets a ship's velocity from its input and moves it, wrapping
// around the arena.
func Steer(b *Body, in Stick) {
	b.VX, b.VY = 0, 0
	if in.Buttons&Left != 0 {
		b.VX -= ShipSpeed
	}
	if in.Buttons&Right != 0 {
		b.VX += ShipSpeed
	}
	if in.Buttons&Up != 0 {
		b.VY -= ShipSpeed
	}
	if in.Buttons&Down != 0 {
		b.VY += ShipSpeed
	}
	b.X = (b.X + b.VX + Size) % Size
	b.Y = (b.Y + b.VY + Size) % Size
}

// Fly moves a bullet by its velocity (bullets do not wrap).
func Fly(b *Body) {
	b.X += b.VX
	b.Y += b.VY
}

// Shoot reports whether a ship steered with in fires at tick t, and the
// bullet's body: it starts at the ship, flying in the ship's direction
// (straight up when the ship stands still) at BulletSpeed. It is the one
// place the firing rule lives.
func Shoot(ship Body, in Stick, t tick.Tick) (Body, bool) {
	if in.Buttons&Fire == 0 || uint32(t)%FireEvery != 0 {
		return Body{}, false
	}
	dx, dy := sign(ship.VX), sign(ship.VY)
	if dx == 0 && dy == 0 {
		dy = -1
	}
	return Body{X: ship.X, Y: ship.Y, VX: dx * BulletSpeed, VY: dy * BulletSpeed}, true
}

// Scans reports whether a ship steered with in hit-scans at tick t.
func Scans(in Stick, t tick.Tick) bool { return in.Buttons&Scan != 0 && uint32(t)%ScanEvery == 0 }

// ScanResult is the verdict of one hit-scan: the shooting player, its
// tick, the player of the ship aimed at (the nearest other ship, as the
// shooter saw it; 0: no other ship) and whether it was within ScanRange.
type ScanResult struct {
	Player uint64
	Tick   tick.Tick
	Target uint64
	Hit    bool
}

// Target is another ship as a shooter saw it.
type Target struct {
	Player uint64
	Body   Body
}

// HitScan judges a scan of the ship at own against the other ships as
// the shooter saw them: it aims at the nearest (ties: the lower player
// id) and hits when it is within ScanRange. The client and the server
// call it on what the shooter saw (a server through package lagcomp), so
// they agree when they see the same.
func HitScan(player uint64, t tick.Tick, own Body, others []Target) ScanResult {
	r := ScanResult{Player: player, Tick: t}
	best := int32(-1)
	for _, o := range others {
		if o.Player == player {
			continue
		}
		d := Distance(own, o.Body)
		if best < 0 || d < best || d == best && o.Player < r.Target {
			best, r.Target = d, o.Player
		}
	}
	r.Hit = best >= 0 && best < ScanRange
	return r
}

// LerpBody interpolates a body between two ticks (f in [0, 1)): the
// position along the straight line, the later velocity. Clients show
// interpolated ships with it and the server's lag compensation rewinds
// them with it, so both compute the same positions.
func LerpBody(a, b Body, f float64) Body {
	return Body{X: a.X + int32(f*float64(b.X-a.X)), Y: a.Y + int32(f*float64(b.Y-a.Y)), VX: b.VX, VY: b.VY}
}

func sign(v int32) int32 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// Expired reports whether bullet b is past its lifetime at tick t.
func Expired(b Bullet, t tick.Tick) bool { return t.Sub(tick.Tick(b.Born)) >= BulletTTL }

// Bot returns a bot player's input for tick t: a pure function of (seed,
// player, t). It holds a direction for a stretch of 10 to 31 ticks, like a
// human holding keys, stands still in one stretch of nine, fires in
// about half of them and holds Scan in about a third. The bot sets no
// claim (Stick.Seen): the client adds what its screen shows.
func Bot(seed, player uint64, t tick.Tick) Stick {
	period := uint64(10 + 7*(player%4))
	r := rng.Stream(seed, player<<32|uint64(uint32(t))/period)
	x := r.Uint64()
	moves := [...]uint8{0, Up, Down, Left, Right, Up | Left, Up | Right, Down | Left, Down | Right}
	b := moves[x%uint64(len(moves))]
	if (x>>16)%2 == 0 {
		b |= Fire
	}
	if (x>>24)%3 == 0 {
		b |= Scan
	}
	return Stick{Buttons: b}
}

// Distance returns how far apart two positions are, in arena units: the
// larger of the two axes, each measured the short way around the arena's
// wrapping edges.
func Distance(a, b Body) int32 {
	return max(wrapDist(a.X-b.X), wrapDist(a.Y-b.Y))
}

func wrapDist(d int32) int32 {
	d = max(d, -d) % Size
	return min(d, Size-d)
}
