package replicate

// Checkpoints: full captures of the replicated state at a tick, kept in a
// bounded ring (the checksum they carry is assembled in checksum.go).
//
// Decision: a capture is a memory copy, not an encoding. It copies every
// replicated store's column (entities and values) and every replicated
// resource into buffers of the ring, as package snapshot's copy strategy
// does (values holding pointers are encoded with their codec instead, so
// a checkpoint never shares memory with the live world). The saved state
// form (what LoadState reads and a resync or save sends) is written from
// the copy when it is asked for (Checkpoint.AppendState), and so is the
// checksum (Checkpoint.Checksum): most checkpoints are dropped unsent, so
// the encoding cost is paid only for the ones used. The checksum is
// computed over server entity ids and the codecs' bytes, equal to
// StateChecksum (or Server.Checksum) at the capture tick, so a client can
// compute the same one from its own world (Client.Checksum).

import (
	"fmt"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/tick"
)

// Defaults of CheckpointConfig.
const (
	// DefaultCheckpointInterval is 300 ticks: 5 s at 60 ticks per second.
	DefaultCheckpointInterval = 300
	// DefaultMaxCheckpoints is the number of checkpoints kept: with the
	// default interval, the last 40 s at 60 ticks per second.
	DefaultMaxCheckpoints = 8
	// DefaultCheckpointBytes bounds the ring's memory: 64 MiB, room for
	// about 8 checkpoints of a 100,000-entity world of 80 bytes of copied
	// columns per entity.
	DefaultCheckpointBytes = 64 << 20
)

// CheckpointConfig configures Checkpoints. Zero fields take the defaults.
type CheckpointConfig struct {
	// Interval is the number of ticks between captures (Checkpoints.Due):
	// DefaultCheckpointInterval (300) by default.
	Interval int
	// Max is the most checkpoints kept: DefaultMaxCheckpoints (8).
	Max int
	// MaxBytes bounds the memory of the ring (Checkpoints.Bytes: the
	// capacity of the kept checkpoints' buffers and of the one spare set
	// the next capture reuses): DefaultCheckpointBytes (64 MiB). The oldest
	// checkpoints are dropped to stay under it.
	MaxBytes int
}

func (c CheckpointConfig) withDefaults() CheckpointConfig {
	if c.Interval <= 0 {
		c.Interval = DefaultCheckpointInterval
	}
	if c.Max <= 0 {
		c.Max = DefaultMaxCheckpoints
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultCheckpointBytes
	}
	return c
}

// Checkpoint is the full replicated state of a world at a tick: every
// Replicated entity with its registered components, and the present
// replicated resources (RNG streams included: rng.Rand is plain data),
// held as copies of the stores' columns. It belongs to its ring and is
// valid until the ring drops it; its methods then report an empty state.
type Checkpoint struct {
	// Tick is the tick the checkpoint was captured at.
	Tick tick.Tick

	r      *Checkpoints
	st     *ckState
	size   int // st.bytes() at capture
	summed bool
	sum    uint64
	parts  []Part
}

// Entities is the number of replicated entities in the checkpoint.
func (cp *Checkpoint) Entities() int {
	if cp.st == nil {
		return 0
	}
	return len(cp.st.rep)
}

// Bytes is the memory the checkpoint holds (the capacity of its buffers).
func (cp *Checkpoint) Bytes() int {
	if cp.st == nil {
		return 0
	}
	return cp.size
}

// AppendState appends the checkpoint in the saved state form (SaveState's
// format, which LoadState reads) to dst: what a save, or a client being
// sent the checkpoint, gets. The encoding is done now, from the copy; in
// steady state (dst and the ring's scratch large enough) it allocates
// nothing.
func (cp *Checkpoint) AppendState(dst []byte) []byte {
	if cp.st == nil {
		return dst
	}
	return cp.r.scratch.appendState(dst, cp.r.enc.p, cp.st)
}

// Checksum returns the checksum of the checkpoint's state and its parts,
// one per type: StateChecksum of the world at the capture tick, or, for a
// ring of Server.NewCheckpoints, Server.Checksum at that tick (only the
// components the rules replicated then), so it compares with the
// Client.Checksum of a client at that tick. It is computed on the first
// call, from the copy, and kept; the parts belong to the checkpoint.
func (cp *Checkpoint) Checksum() (uint64, []Part) {
	if cp.st == nil {
		return 0, nil
	}
	if !cp.summed {
		cp.sum, cp.parts = cp.r.scratch.checksum(cp.r.enc.p, cp.st, cp.r.srv != nil, cp.parts[:0])
		cp.summed = true
	}
	return cp.sum, cp.parts
}

// Checkpoints captures checkpoints of one world and keeps the latest ones
// in a ring of at most CheckpointConfig.Max, within MaxBytes. A server
// calls Capture when Due(tick) after running the tick. A capture copies
// the replicated stores into the buffers of the checkpoint it drops, so in
// steady state it allocates nothing. A Checkpoints is used from one
// goroutine.
type Checkpoints struct {
	cfg     CheckpointConfig
	enc     *stateEncoder
	srv     *Server      // rings of Server.NewCheckpoints: whose view the checksum takes
	ring    []Checkpoint // oldest first from head
	head    int
	n       int
	spare   *ckState // a dropped checkpoint's buffers, for the next capture
	last    int      // bytes of the last capture
	scratch ckScratch
}

// NewCheckpoints returns an empty ring capturing world's replicated state
// under protocol p.
func NewCheckpoints(world *ecs.World, p *Protocol, cfg CheckpointConfig) *Checkpoints {
	cfg = cfg.withDefaults()
	return &Checkpoints{cfg: cfg, enc: newStateEncoder(world, p), ring: make([]Checkpoint, cfg.Max)}
}

// NewCheckpoints returns an empty ring capturing the server's world, whose
// checkpoints' Checksum is Server.Checksum at their tick (only the
// components the rules replicate), so they compare with Client.Checksum.
// Capture it right after Send.
func (s *Server) NewCheckpoints(cfg CheckpointConfig) *Checkpoints {
	r := NewCheckpoints(s.w, s.p, cfg)
	r.srv = s
	return r
}

// Config returns the configuration with defaults applied.
func (r *Checkpoints) Config() CheckpointConfig { return r.cfg }

// Due reports whether tick t is a capture tick (a multiple of Interval).
func (r *Checkpoints) Due(t tick.Tick) bool { return uint64(t)%uint64(r.cfg.Interval) == 0 }

// Capture captures the world's replicated state as the checkpoint of tick
// t, dropping the oldest checkpoints as needed to stay within Max and
// MaxBytes, and returns it (valid until dropped). Room is made first (by
// the size of the last capture), since the state is copied into the
// buffers of a dropped checkpoint. A state larger than MaxBytes on its
// own is refused with an error wrapping ErrTooLarge (and the ring is left
// empty).
func (r *Checkpoints) Capture(t tick.Tick) (*Checkpoint, error) {
	if r.n == len(r.ring) {
		r.drop(true)
	}
	for r.n > 0 && r.kept()+max(r.spareBytes(), r.last) > r.cfg.MaxBytes {
		r.drop(true)
	}
	st := r.spare
	r.spare = nil
	if st == nil {
		st = newCkState(r.enc)
	}
	st.capture(r.enc, r.srv)
	size := st.bytes()
	r.last = size
	if size > r.cfg.MaxBytes {
		for r.n > 0 {
			r.drop(false)
		}
		return nil, fmt.Errorf("%w: checkpoint of %d bytes exceeds MaxBytes %d", ErrTooLarge, size, r.cfg.MaxBytes)
	}
	for r.n > 0 && r.kept()+size > r.cfg.MaxBytes {
		r.drop(false) // its buffers are freed: the ring holds no spare beyond the bound
	}
	cp := &r.ring[(r.head+r.n)%len(r.ring)]
	r.n++
	cp.Tick, cp.r, cp.st, cp.size, cp.summed = t, r, st, size, false
	return cp, nil
}

// drop drops the oldest checkpoint; when keep, the largest dropped buffers
// are kept as the spare set the next capture copies into.
func (r *Checkpoints) drop(keep bool) {
	old := &r.ring[r.head]
	if keep && (r.spare == nil || old.size > r.spare.bytes()) {
		r.spare = old.st
	}
	old.st, old.size, old.summed = nil, 0, false
	r.head = (r.head + 1) % len(r.ring)
	r.n--
}

// kept is the memory of the kept checkpoints.
func (r *Checkpoints) kept() int {
	b := 0
	for i := range r.n {
		b += r.ring[(r.head+i)%len(r.ring)].size
	}
	return b
}

func (r *Checkpoints) spareBytes() int {
	if r.spare == nil {
		return 0
	}
	return r.spare.bytes()
}

// Bytes is the memory the ring holds: the capacity of the kept
// checkpoints' buffers and of the spare set the next capture copies into;
// at most MaxBytes. (The scratch of AppendState and Checksum, 4 bytes per
// entity index and component type, comes on top.)
func (r *Checkpoints) Bytes() int { return r.kept() + r.spareBytes() }

// Len is the number of checkpoints kept.
func (r *Checkpoints) Len() int { return r.n }

// Latest returns the newest checkpoint.
func (r *Checkpoints) Latest() (*Checkpoint, bool) {
	if r.n == 0 {
		return nil, false
	}
	return &r.ring[(r.head+r.n-1)%len(r.ring)], true
}

// At returns the checkpoint of tick t, if kept.
func (r *Checkpoints) At(t tick.Tick) (*Checkpoint, bool) {
	for i := range r.n {
		if cp := &r.ring[(r.head+i)%len(r.ring)]; cp.Tick == t {
			return cp, true
		}
	}
	return nil, false
}
