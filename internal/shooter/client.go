package shooter

import (
	"errors"
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/lagcomp"
	"github.com/rewindgo/rewind/predict"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// KindBullet is the predict.SpawnKey Kind of a bullet.
const KindBullet uint32 = 1

// BulletKey returns the SpawnKey of the bullet player's ship fires at tick
// t. A ship fires at most one bullet a tick, so Index is 0. Server and
// clients name a bullet with it, so that a client's predicted bullet is
// adopted as the server's.
func BulletKey(player uint64, t tick.Tick) predict.SpawnKey {
	return predict.SpawnKey{Client: replicate.ClientID(player), Tick: t, Kind: KindBullet}
}

// Client is the game on a client's World, predicted by a Timeline: Body
// and Bullet are predicted components (a bullet the client fires is
// predicted whole, its marker included, so a rollback before its spawn
// tick leaves nothing of it), Ship is replicated only.
type Client struct {
	tl      *predict.Timeline
	body    *predict.Component[Body]
	bullet  *predict.Component[Bullet]
	ships   *ecs.Query2[Body, Ship]
	bullets *ecs.Query2[Body, Bullet]
	expired []ecs.Entity
	shots   []shot
	err     error
	// The keys of the shots refused lately (a ring, so that a key
	// refused again by each re-simulation of its tick counts once), and
	// the distinct keys refused, per player and in all.
	refusedKeys     []predict.SpawnKey
	refusedAt       int
	refusedBy       map[uint64]uint64
	refusedDistinct uint64
	firstFired      map[uint64]uint64 // shots fired in the first simulation of their tick, per player

	// Hit-scans of the client's own player (SetScanner).
	player  uint64
	shown   func(c lagcomp.Claim, t tick.Tick, dst []Target) []Target
	targets []Target
	scans   []ScanResult

	// Presentation effects (SetEffects).
	onShot func(t tick.Tick, key predict.SpawnKey, b Body)
	onScan func(t tick.Tick, r ScanResult)
}

// SetEffects makes Step report what a game presents as effects: shot is
// called for each bullet spawned (its key and body), scan for each
// hit-scan of the own player (SetScanner), in every simulation of their
// tick, re-simulations included, which is what an effect.Tracker's Fire
// needs to play an effect once and cancel it when a rollback no longer
// fires it. Either may be nil.
func (c *Client) SetEffects(shot func(t tick.Tick, key predict.SpawnKey, b Body), scan func(t tick.Tick, r ScanResult)) {
	c.onShot, c.onScan = shot, scan
}

// SetScanner makes the client judge its own player's hit-scans: player
// is the Player of its ship, shown appends to dst the other ships as the
// screen showed them when the input of tick t was made, for the claim
// the input carries (the ships it interpolates at the claim, those it
// predicts at the present). Each scan is judged once, in the first
// simulation of its tick (not in re-simulations), as the player saw it.
func (c *Client) SetScanner(player uint64, shown func(cl lagcomp.Claim, t tick.Tick, dst []Target) []Target) {
	c.player, c.shown = player, shown
}

// Scans returns the verdicts of the own player's scans so far.
func (c *Client) Scans() []ScanResult { return c.scans }

// refusedRing is how many recently refused keys a Client remembers to
// count each once: more than the keys a rollback window can refuse again.
const refusedRing = 256

// shot is a bullet fired in the tick being simulated, spawned after the
// ships' loop (the World's structure does not change while a query runs).
type shot struct {
	player uint64
	body   Body
}

// NewClient registers Body (with opts) and Bullet as predicted types of
// tl and returns the client's simulation of the game. The game attaches
// them to replication (predict.AttachComponent or AttachSplit).
func NewClient(tl *predict.Timeline, opts ...predict.Option) (*Client, error) {
	body, err := predict.Register[Body](tl, opts...)
	if err != nil {
		return nil, err
	}
	bullet, err := predict.Register[Bullet](tl)
	if err != nil {
		return nil, err
	}
	w := tl.World()
	return &Client{tl: tl, body: body, bullet: bullet,
		ships:   ecs.NewQuery2(body.Store().Write(), ecs.Register[Ship](w).Read()),
		bullets: ecs.NewQuery2(body.Store().Write(), bullet.Store().Read()),
	}, nil
}

// Body returns the predicted Body.
func (c *Client) Body() *predict.Component[Body] { return c.body }

// Bullet returns the predicted Bullet.
func (c *Client) Bullet() *predict.Component[Bullet] { return c.bullet }

// Step is the simulation of tick t on the client's World, the same as
// Server.Step's: bullets past their lifetime are despawned with a despawn
// marker (Timeline.Despawn, undone by a rollback before t), the others
// fly; every ship with a Body (the client's own, and the others' when it
// predicts them) steers with input(player) and, when Shoot says it fires,
// spawns its bullet as a predicted spawn under BulletKey(player, t)
// (Timeline.Spawn), with its Body and Bullet; a bullet the Timeline
// refuses (predict.ErrSpawnRefused: its tick is complete on the client
// and the server did not fire it) is simply not fired. Entities without
// a Body (shown by interpolation) are left alone. Call it from the
// function given to Timeline.Step; it is deterministic and changes the
// World only as Step allows. Any other error (a bad key, a Despawn
// refused) is kept, the first one, for Err.
//
// A ship exists on the client only once replicated, so its Player, which
// names the key, is the server's id of its player: a client fires with
// the key the server uses. The game must not give the own ship an input
// before it knows its id (replicate.Client.ID), as the demo does by
// adding ships once every client is connected.
//
// With SetScanner, the own player's hit-scans of tick t are judged after
// the ships have moved, in the first simulation of t (Scans), and with
// SetEffects in every simulation of t for the scan effect.
func (c *Client) Step(t tick.Tick, input func(player uint64) Stick) {
	c.expired, c.shots = c.expired[:0], c.shots[:0]
	for e, r := range c.bullets.All() {
		if Expired(*r.B, t) {
			c.expired = append(c.expired, e)
			continue
		}
		Fly(r.A)
	}
	for _, e := range c.expired {
		c.keep(c.tl.Despawn(e))
	}
	for _, r := range c.ships.All() {
		in := input(r.B.Player)
		Steer(r.A, in)
		if b, ok := Shoot(*r.A, in, t); ok {
			c.shots = append(c.shots, shot{player: r.B.Player, body: b})
			if !c.tl.InRollback() {
				if c.firstFired == nil {
					c.firstFired = map[uint64]uint64{}
				}
				c.firstFired[r.B.Player]++
			}
		}
	}
	if c.shown != nil && (!c.tl.InRollback() || c.onScan != nil) {
		for _, r := range c.ships.All() {
			if r.B.Player != c.player {
				continue
			}
			if in := input(c.player); Scans(in, t) {
				c.targets = c.shown(in.Seen.Claim(t), t, c.targets[:0])
				res := HitScan(c.player, t, *r.A, c.targets)
				if !c.tl.InRollback() {
					c.scans = append(c.scans, res)
				}
				if c.onScan != nil {
					c.onScan(t, res)
				}
			}
		}
	}
	for _, s := range c.shots {
		e, err := c.tl.Spawn(BulletKey(s.player, t))
		if errors.Is(err, predict.ErrSpawnRefused) {
			c.noteRefused(BulletKey(s.player, t))
			continue // the server did not fire it (its tick is complete without it)
		}
		if err != nil {
			c.keep(err)
			continue
		}
		c.keep(errors.Join(
			c.body.Store().Set(e, s.body),
			c.bullet.Store().Set(e, Bullet{Player: s.player, Born: uint32(t)}),
		))
		if c.onShot != nil {
			c.onShot(t, BulletKey(s.player, t), s.body)
		}
	}
}

// noteRefused counts a refused shot's key, once.
func (c *Client) noteRefused(k predict.SpawnKey) {
	for _, r := range c.refusedKeys {
		if r == k {
			return
		}
	}
	if len(c.refusedKeys) < refusedRing {
		c.refusedKeys = append(c.refusedKeys, k)
	} else {
		c.refusedKeys[c.refusedAt] = k
		c.refusedAt = (c.refusedAt + 1) % refusedRing
	}
	if c.refusedBy == nil {
		c.refusedBy = map[uint64]uint64{}
	}
	c.refusedBy[uint64(k.Client)]++
	c.refusedDistinct++
}

// RefusedShots returns how many distinct shots the Timeline refused
// (predict.ErrSpawnRefused: fired in the prediction, not by the server)
// of player's ship, and of every ship.
func (c *Client) RefusedShots(player uint64) (of, all uint64) {
	return c.refusedBy[player], c.refusedDistinct
}

// FiredShots returns how many shots player's ship fired in the first
// simulation of their tick (not in a re-simulation): for the client's own
// ship, every shot its player made.
func (c *Client) FiredShots(player uint64) uint64 { return c.firstFired[player] }

func (c *Client) keep(err error) {
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("shooter: client simulation: %w", err)
	}
}

// Err returns the first error of Step, or nil.
func (c *Client) Err() error { return c.err }
