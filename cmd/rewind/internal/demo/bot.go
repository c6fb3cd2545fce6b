package demo

import (
	"encoding/binary"
	"fmt"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
)

// Bot returns the input of player h at frame f: a pure function of (seed, f,
// h). A bot holds its keys for a stretch of frames (a length that depends on
// the player, 7 to 28 frames) before picking new ones, like a human holding
// keys, and fires in about a third of the stretches.
func Bot(seed uint64, f rollback.Frame, h rollback.PlayerHandle) [InputSize]byte {
	period := rollback.Frame(7 + 3*(int(h)%8))
	stretch := f / period
	r := rng.Stream(seed, uint64(h)<<32|uint64(uint32(stretch)))
	x := r.Uint64()
	// Standing still or one of eight directions.
	moves := [...]byte{0, Up, Down, Left, Right, Up | Left, Up | Right, Down | Left, Down | Right}
	buttons := moves[x%uint64(len(moves))]
	if (x>>8)%5 == 0 {
		buttons |= Boost
	}
	if (x>>16)%3 == 0 {
		buttons |= Fire
	}
	return [InputSize]byte{buttons, byte((x >> 24) % Directions)}
}

// NewRunner returns a runner.Runner that plays g with sess: cfg's World,
// Registry and Session are filled in, Step when nil with g.Step, and
// ReadInput when nil with the Bot of each local player at the session's
// current frame (sessions with local players have a CurrentFrame method).
func (g *Game) NewRunner(sess runner.Session, cfg runner.Config) (*runner.Runner, error) {
	cfg.World, cfg.Registry, cfg.Session = g.w, g.reg, sess
	if cfg.Step == nil {
		cfg.Step = g.Step
	}
	if cfg.ReadInput == nil {
		if cf, ok := sess.(interface{ CurrentFrame() rollback.Frame }); ok {
			var buf [InputSize]byte
			seed := g.cfg.Seed
			cfg.ReadInput = func(h rollback.PlayerHandle) []byte {
				buf = Bot(seed, cf.CurrentFrame(), h)
				return buf[:]
			}
		}
	}
	return runner.New(cfg)
}

// metaMagic starts the recording metadata of the demo (Config.RecordMeta).
const metaMagic = "rwdemo"

// metaVersion is the version of the metadata layout.
const metaVersion = 1

// AppendMeta appends c in the form stored in a recording's metadata
// (rollback.Config.RecordMeta): what a replay needs to rebuild the game.
func (c Config) AppendMeta(b []byte) []byte {
	b = append(b, metaMagic...)
	b = append(b, metaVersion)
	b = binary.AppendUvarint(b, uint64(c.Players))
	b = binary.AppendUvarint(b, uint64(c.NPCs))
	return binary.LittleEndian.AppendUint64(b, c.Seed)
}

// ParseMeta reads a Config written by AppendMeta.
func ParseMeta(b []byte) (Config, error) {
	var c Config
	if len(b) < len(metaMagic)+1 || string(b[:len(metaMagic)]) != metaMagic {
		return c, fmt.Errorf("%w: recording metadata is not from the demo", ErrConfig)
	}
	if v := b[len(metaMagic)]; v != metaVersion {
		return c, fmt.Errorf("%w: demo metadata version %d, this build reads %d", ErrConfig, v, metaVersion)
	}
	r := bin.NewReader(b[len(metaMagic)+1:])
	players, npcs := r.Uvarint(), r.Uvarint()
	seed := r.Uint64()
	if err := r.End(); err != nil {
		return c, fmt.Errorf("%w: bad player count, NPC count or seed in metadata: %w", ErrConfig, err)
	}
	if players > rollback.MaxPlayers || npcs > MaxNPCs {
		return c, fmt.Errorf("%w: metadata says %d players, %d NPCs", ErrConfig, players, npcs)
	}
	c = Config{Players: int(players), NPCs: int(npcs), Seed: seed}
	return c, c.check()
}
