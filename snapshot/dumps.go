package snapshot

import (
	"fmt"
	"io"
	"os"

	"github.com/rewindgo/rewind/tick"
)

// Dumps keeps the Dumps of the last few frames captured, for the frame a
// desync is found at (a checked frame is compared some time after it was
// simulated, when both sides' checksums are known). Capturing the same
// frame again (a rollback re-simulated it) replaces its dump; with
// KeepFirst the first capture is kept as well (FirstAt), which is what a
// SyncTest compares with the re-simulation. A Dumps reuses the memory of
// the dumps it evicts.
type Dumps struct {
	reg   *Registry
	opts  DumpOptions
	last  []Dump
	first []Dump
	held  []bool
	frame []tick.Tick
	has   []bool // first[i] captured
}

// NewDumps returns a Dumps of reg holding the last n frames captured (at
// least 1), each captured with opts.
func NewDumps(reg *Registry, n int, opts DumpOptions) *Dumps {
	n = max(n, 1)
	return &Dumps{reg: reg, opts: opts, last: make([]Dump, n), first: make([]Dump, n), held: make([]bool, n), frame: make([]tick.Tick, n), has: make([]bool, n)}
}

// Capture dumps the live world as the state of frame f.
func (d *Dumps) Capture(f tick.Tick) error {
	i := int(uint32(f) % uint32(len(d.last)))
	if !d.held[i] || d.frame[i] != f {
		d.held[i], d.frame[i], d.has[i] = false, f, false
	}
	if !d.has[i] {
		if err := d.reg.DumpInto(&d.first[i], f, d.opts); err != nil {
			return err
		}
		d.has[i], d.held[i] = true, true
		return d.reg.DumpInto(&d.last[i], f, d.opts)
	}
	return d.reg.DumpInto(&d.last[i], f, d.opts)
}

// At returns the latest dump of frame f (shared: Clone it to keep it
// beyond the next Capture), or false when f is not held.
func (d *Dumps) At(f tick.Tick) (*Dump, bool) {
	i := int(uint32(f) % uint32(len(d.last)))
	if !d.held[i] || d.frame[i] != f {
		return nil, false
	}
	return &d.last[i], true
}

// FirstAt returns the first dump captured of frame f (before any
// re-simulation), or false when f is not held.
func (d *Dumps) FirstAt(f tick.Tick) (*Dump, bool) {
	i := int(uint32(f) % uint32(len(d.last)))
	if !d.held[i] || d.frame[i] != f || !d.has[i] {
		return nil, false
	}
	return &d.first[i], true
}

// WriteDumpFile writes d's encoding to the file at path (created or
// truncated), for "rewind diff" or ReadDumpFile.
func WriteDumpFile(path string, d *Dump) error {
	b, err := d.MarshalBinary()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// ReadDumpFile reads a dump written by WriteDumpFile. A file over the
// decoder's bound is ErrDumpTooLarge, a malformed one ErrDumpFormat.
func ReadDumpFile(path string) (*Dump, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const limit = DefaultDumpMaxBytes + 1<<20
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrDumpTooLarge, path, limit)
	}
	d := new(Dump)
	if err := d.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
