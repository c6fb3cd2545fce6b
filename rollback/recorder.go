package rollback

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/rewindgo/rewind/rollback/internal/wire"
)

// Recording format, version 2 (all integers uvarints unless noted, minimal
// as internal/bin requires):
//
//	header:  "RWND" (4 bytes), version byte (2), NumPlayers, MaxInputSize, FPS,
//	         checksum interval, len(meta), meta, len(default input), default
//	         input, CRC
//	blocks:  a kind byte, then the block's fields below, then CRC
//	  1 inputs:   first frame, frame count n (1..recordBlock), payload length,
//	              payload = n records compressed as on the wire (each record
//	              one byte per player: input length | 0x80 if disconnected,
//	              then the input), delta-chained from the previous block's
//	              last record (an empty record before frame 0)
//	  2 checksum: frame, checksum (8 bytes little-endian), part count,
//	              per part: name length, name, sum (8 bytes little-endian)
//	  3 end:      number of frames recorded
//
// CRC is the CRC-32C (Castagnoli) of the header's or the block's bytes from
// its first byte (the magic, the kind), 4 bytes little-endian: a reader
// refuses a recording whose header or block does not match
// (ErrRecordingDamaged). Version 1 was the same without the CRCs; it is
// still read, without that check.
//
// Frames are consecutive from 0. A reader rejects anything else. The
// checksum block of frame c follows the inputs of the frames before c and
// precedes the inputs of frame c, so a reader that reaches frame c has read
// its checksum. (Recordings of earlier builds could write it after the inputs
// block holding frame c and the next; ReplaySession accepts both.)
const (
	recordMagic   = "RWND"
	recordVersion = 2
	recordBlock   = 64
	maxRecordMeta = 1 << 16
	maxBlockBytes = 1 << 20
	maxFileParts  = 256
	maxFileName   = 255 // longest part name in a recording (shortName)

	blockInputs   = 1
	blockChecksum = 2
	blockEnd      = 3
)

// recorder writes a recording as frames become confirmed.
type recorder struct {
	w        *bufio.Writer
	cfg      *resolved
	err      error
	enc      wire.InputEncoder
	base     []byte
	pending  []byte // records of the block being built, back to back
	lens     []int
	first    Frame
	next     Frame // next frame expected
	lastSum  Frame
	payload  []byte
	tmp      []byte
	finished bool
	crc      uint32 // CRC-32C of what was written since the last seal
}

func newRecorder(w io.Writer, cfg *resolved) (*recorder, error) {
	r := &recorder{w: bufio.NewWriter(w), cfg: cfg, next: 0, lastSum: NullFrame}
	h := []byte(recordMagic)
	h = append(h, recordVersion)
	h = binary.AppendUvarint(h, uint64(cfg.NumPlayers))
	h = binary.AppendUvarint(h, uint64(cfg.MaxInputSize))
	h = binary.AppendUvarint(h, uint64(cfg.FPS))
	h = binary.AppendUvarint(h, uint64(cfg.RecordChecksumInterval))
	h = binary.AppendUvarint(h, uint64(len(cfg.RecordMeta)))
	h = append(h, cfg.RecordMeta...)
	h = binary.AppendUvarint(h, uint64(len(cfg.DefaultInput)))
	h = append(h, cfg.DefaultInput...)
	r.write(h)
	r.seal()
	if r.err != nil {
		return nil, r.err
	}
	return r, nil
}

func (r *recorder) write(b []byte) {
	if r.err != nil {
		return
	}
	r.crc = crc32.Update(r.crc, castagnoli, b)
	if _, err := r.w.Write(b); err != nil {
		r.err = fmt.Errorf("%w: %w", ErrRecording, err)
	}
}

// inputs adds the full record of frame f (frames arrive in order, each
// final, and so is the state saved at f): the checksum of f, when due, is
// written first (see checksums, whose result it returns).
func (r *recorder) inputs(f Frame, rec []byte, h *sumHistory) (missing int) {
	if f != r.next || r.finished {
		return 0
	}
	missing = r.checksums(h, f)
	if len(r.lens) == 0 {
		r.first = f
	}
	r.pending = append(r.pending, rec...)
	r.lens = append(r.lens, len(rec))
	r.next = f + 1
	if len(r.lens) == recordBlock {
		r.flushInputs()
	}
	return missing
}

func (r *recorder) flushInputs() {
	if len(r.lens) == 0 {
		return
	}
	r.enc.Reset(r.base)
	off := 0
	for _, l := range r.lens {
		r.enc.Add(r.pending[off : off+l])
		off += l
	}
	last := r.pending[off-r.lens[len(r.lens)-1] : off]
	r.base = append(r.base[:0], last...)
	r.payload = r.enc.AppendTo(r.payload[:0])
	b := append(r.tmp[:0], blockInputs)
	b = binary.AppendUvarint(b, uint64(r.first))
	b = binary.AppendUvarint(b, uint64(len(r.lens)))
	b = binary.AppendUvarint(b, uint64(len(r.payload)))
	r.tmp = b
	r.write(b)
	r.write(r.payload)
	r.seal()
	r.pending = r.pending[:0]
	r.lens = r.lens[:0]
}

// checksums writes the checksums of the interval frames up to final, whose
// saved states are final. Each is written before the inputs of its frame
// (inputs calls checksums first) and after the inputs of every earlier
// frame, so a reader meets it before it simulates the frame. It returns the
// number of due checksums the game did not report (not recorded: see
// P2PSession.ReportChecksum).
func (r *recorder) checksums(h *sumHistory, final Frame) (missing int) {
	if r.finished {
		return 0
	}
	iv := Frame(r.cfg.RecordChecksumInterval)
	for c := nextCheck(r.lastSum, iv); c <= final; c += iv {
		r.lastSum = c
		sum, ok := h.get(c)
		if !ok {
			missing++
			continue
		}
		parts, _ := h.getParts(c)
		r.checksum(c, sum, parts)
	}
	return missing
}

// nextCheck is the first multiple of iv after last (0 when last is
// NullFrame).
func nextCheck(last, iv Frame) Frame {
	if last < 0 {
		return 0
	}
	return (last/iv + 1) * iv
}

func (r *recorder) checksum(c Frame, sum uint64, parts []Part) {
	// Inputs before the checksum's frame go first, so a reader has them.
	r.flushInputs()
	b := append(r.tmp[:0], blockChecksum)
	b = binary.AppendUvarint(b, uint64(c))
	b = binary.LittleEndian.AppendUint64(b, sum)
	if len(parts) > maxFileParts {
		parts = parts[:maxFileParts]
	}
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		name := shortName(p.Name, maxFileName)
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.LittleEndian.AppendUint64(b, p.Sum)
	}
	r.tmp = b
	r.write(b)
	r.seal()
}

func (r *recorder) close(Frame) error {
	if r.finished {
		return r.err
	}
	r.finished = true
	r.flushInputs()
	b := append(r.tmp[:0], blockEnd)
	b = binary.AppendUvarint(b, uint64(r.next))
	r.write(b)
	r.seal()
	if r.err == nil {
		if err := r.w.Flush(); err != nil {
			r.err = fmt.Errorf("%w: %w", ErrRecording, err)
		}
	}
	return r.err
}
