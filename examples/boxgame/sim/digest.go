package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"

	"github.com/rewindgo/rewind/rollback"
)

// Digest folds the confirmed checksums of consecutive frames 0, 1, 2, ...
// into one value, so that two processes can compare whole matches by
// printing one string: equal digests over the same frames mean equal states
// at every one of those frames.
type Digest struct {
	h    hash.Hash
	next rollback.Frame // the next frame expected
	buf  [12]byte
}

// Add folds in the checksum of frame f. Frames must come in order from 0;
// Add ignores a frame that is not the next one and reports false (a gap
// would make digests over different frame sets look comparable).
func (d *Digest) Add(f rollback.Frame, sum uint64) bool {
	if d.h == nil {
		d.h = sha256.New()
	}
	if f != d.next {
		return false
	}
	binary.LittleEndian.PutUint32(d.buf[:4], uint32(f))
	binary.LittleEndian.PutUint64(d.buf[4:], sum)
	d.h.Write(d.buf[:])
	d.next++
	return true
}

// Frames is the number of frames folded in (frames 0..Frames()-1).
func (d *Digest) Frames() int { return int(d.next) }

// String returns the digest in hex (the first 16 bytes of a SHA-256 over
// each frame's number and checksum, little-endian).
func (d *Digest) String() string {
	if d.h == nil {
		d.h = sha256.New()
	}
	return hex.EncodeToString(d.h.Sum(nil)[:16])
}
