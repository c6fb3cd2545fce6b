package rollback

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/rollback/internal/wire"
)

// ReplayInfo is the header of a recording.
type ReplayInfo struct {
	// NumPlayers, MaxInputSize, FPS and ChecksumInterval are the recording
	// session's settings.
	NumPlayers, MaxInputSize, FPS, ChecksumInterval int
	// Meta is what the recording session stored in Config.RecordMeta.
	Meta []byte
	// DefaultInput is the recording session's Config.DefaultInput.
	DefaultInput []byte
}

// ReplaySession plays a recording back through the same requests as a live
// session: Advance for every frame with the recorded inputs, and Save for
// every frame that has a recorded checksum, whose checksum the game reports
// with ReportChecksum. A checksum that differs from the recording makes the
// next AdvanceFrame return a *MismatchError naming the differing types.
type ReplaySession struct {
	r        *blockReader
	version  byte
	info     ReplayInfo
	dec      wire.InputDecoder
	base     []byte
	payload  []byte
	records  []byte
	lens     []int
	recIdx   int
	next     Frame // first frame of the records loaded
	current  Frame
	ended    bool
	total    Frame
	sums     []fileSum
	reported []fileSum // reported checksums whose recorded one is not read yet
	inputs   []Input
	inBuf    []byte
	reqs     []Request
	verified int
	mismatch *MismatchError
	err      error
	// endSave: the Save of the last frame's resulting state was requested.
	endSave bool
}

type fileSum struct {
	frame Frame
	sum   uint64
	parts []Part
}

// NewReplay reads the header of a recording and returns a session that plays
// it. The reader is read as frames are needed.
func NewReplay(r io.Reader) (*ReplaySession, error) {
	s := &ReplaySession{r: &blockReader{r: bufio.NewReader(r)}}
	var magic [5]byte
	if _, err := io.ReadFull(s.r, magic[:]); err != nil {
		return nil, s.fail("header: %w", err)
	}
	if string(magic[:4]) != recordMagic {
		return nil, s.fail("not a rewind recording")
	}
	if magic[4] != recordVersion && magic[4] != 1 {
		return nil, s.fail("recording version %d, this build reads 1 and %d", magic[4], recordVersion)
	}
	s.version = magic[4]
	var vals [5]uint64
	limits := [5]uint64{MaxPlayers, MaxInputLimit, 1000, 1 << 20, maxRecordMeta}
	for i := range vals {
		v, err := bin.ReadUvarint(s.r)
		if err != nil || v > limits[i] || (i < 4 && v == 0) {
			return nil, s.fail("bad header field %d", i)
		}
		vals[i] = v
	}
	s.info = ReplayInfo{NumPlayers: int(vals[0]), MaxInputSize: int(vals[1]), FPS: int(vals[2]), ChecksumInterval: int(vals[3])}
	s.info.Meta = make([]byte, vals[4])
	if _, err := io.ReadFull(s.r, s.info.Meta); err != nil {
		return nil, s.fail("header meta: %w", err)
	}
	dl, err := bin.ReadUvarint(s.r)
	if err != nil || dl > uint64(s.info.MaxInputSize) {
		return nil, s.fail("bad default input")
	}
	s.info.DefaultInput = make([]byte, dl)
	if _, err := io.ReadFull(s.r, s.info.DefaultInput); err != nil {
		return nil, s.fail("default input: %w", err)
	}
	if err := s.sealed("the header", 0); err != nil {
		return nil, err
	}
	s.inputs = make([]Input, s.info.NumPlayers)
	s.inBuf = make([]byte, 0, s.info.NumPlayers*s.info.MaxInputSize)
	return s, nil
}

func (s *ReplaySession) fail(format string, args ...any) error {
	s.err = fmt.Errorf("%w: %s", ErrRecording, fmt.Errorf(format, args...))
	return s.err
}

// Info returns the recording's header.
func (s *ReplaySession) Info() ReplayInfo { return s.info }

func (s *ReplaySession) maxRecord() int { return s.info.NumPlayers * (1 + s.info.MaxInputSize) }

// readBlock reads the next block: inputs into the record buffer, checksums
// into the pending list, or the end marker.
func (s *ReplaySession) readBlock() error {
	start := s.r.off
	s.r.begin()
	kind, err := s.r.ReadByte()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return s.fail("recording ends without an end marker at frame %d", s.current)
		}
		return s.fail("%w", err)
	}
	switch kind {
	case blockInputs:
		first, err1 := bin.ReadUvarint(s.r)
		n, err2 := bin.ReadUvarint(s.r)
		size, err3 := bin.ReadUvarint(s.r)
		if err := errors.Join(err1, err2, err3); err != nil {
			return s.fail("inputs block: %w", err)
		}
		if Frame(first) != s.next+Frame(len(s.lens)) || n == 0 || n > recordBlock || size > maxBlockBytes {
			return s.fail("inputs block out of sequence at frame %d", first)
		}
		if cap(s.payload) < int(size) {
			s.payload = make([]byte, size)
		}
		s.payload = s.payload[:size]
		if _, err := io.ReadFull(s.r, s.payload); err != nil {
			return s.fail("inputs block: %w", err)
		}
		if err := s.sealed(fmt.Sprintf("the inputs block of frames %d..%d", first, first+n-1), start); err != nil {
			return err
		}
		if err := s.dec.Reset(s.payload, s.base, int(n), s.maxRecord()); err != nil {
			return s.fail("inputs block: %w", err)
		}
		// Drop consumed records, then append the new ones.
		if s.recIdx == len(s.lens) {
			s.next += Frame(s.recIdx)
			s.records, s.lens, s.recIdx = s.records[:0], s.lens[:0], 0
		}
		for {
			rec, ok, err := s.dec.Next()
			if err != nil {
				return s.fail("inputs block: %w", err)
			}
			if !ok {
				break
			}
			if !splitRecord(rec, s.info.NumPlayers, s.info.MaxInputSize, nil) {
				return s.fail("bad input record")
			}
			s.records = append(s.records, rec...)
			s.lens = append(s.lens, len(rec))
			s.base = append(s.base[:0], rec...)
		}
	case blockChecksum:
		f, err1 := bin.ReadUvarint(s.r)
		var sb [8]byte
		_, err2 := io.ReadFull(s.r, sb[:])
		np, err3 := bin.ReadUvarint(s.r)
		if err := errors.Join(err1, err2, err3); err != nil || np > maxFileParts || f > 1<<31-1 {
			return s.fail("checksum block")
		}
		fs := fileSum{frame: Frame(f), sum: binary.LittleEndian.Uint64(sb[:])}
		for i := uint64(0); i < np; i++ {
			l, err := bin.ReadUvarint(s.r)
			if err != nil || l > 255 {
				return s.fail("checksum block part")
			}
			name := make([]byte, l)
			if _, err := io.ReadFull(s.r, name); err != nil {
				return s.fail("checksum block part: %w", err)
			}
			if _, err := io.ReadFull(s.r, sb[:]); err != nil {
				return s.fail("checksum block part: %w", err)
			}
			fs.parts = append(fs.parts, Part{Name: string(name), Sum: binary.LittleEndian.Uint64(sb[:])})
		}
		if err := s.sealed(fmt.Sprintf("the checksum block of frame %d", fs.frame), start); err != nil {
			return err
		}
		if i := indexSum(s.reported, fs.frame); i >= 0 {
			s.verify(fs, s.reported[i].sum, s.reported[i].parts)
			s.reported = slices.Delete(s.reported, i, i+1)
			return nil
		}
		if len(s.sums) >= maxPendingSums {
			return s.fail("too many pending checksums")
		}
		s.sums = append(s.sums, fs)
	case blockEnd:
		n, err := bin.ReadUvarint(s.r)
		if err == nil {
			err = s.sealed("the end marker", start)
		}
		if errors.Is(err, ErrRecordingDamaged) {
			return err
		}
		if err != nil || Frame(n) != s.next+Frame(len(s.lens)) {
			return s.fail("end marker says %d frames, recording has %d", n, s.next+Frame(len(s.lens)))
		}
		s.ended = true
		s.total = Frame(n)
	default:
		return s.fail("unknown block kind %d", kind)
	}
	return nil
}

// AdvanceFrame returns the requests for the next recorded frame: a Save when
// the recording has a checksum for the frame, then the Advance. It returns
// ErrReplayEnded after the last frame, and a *MismatchError once a reported
// checksum differed from the recording.
func (s *ReplaySession) AdvanceFrame() ([]Request, error) {
	if s.mismatch != nil {
		return nil, s.mismatch
	}
	if s.err != nil {
		return nil, s.err
	}
	for s.recIdx >= len(s.lens) && !s.ended {
		if err := s.readBlock(); err != nil {
			return nil, err
		}
	}
	if s.recIdx >= len(s.lens) {
		// The state after the last frame has a checksum when the match
		// ended on a checksum frame: check it too.
		if !s.endSave && s.hasSum(s.current) {
			s.endSave = true
			s.reqs = append(s.reqs[:0], Request{Kind: SaveRequest, Frame: s.current})
			return s.reqs, nil
		}
		return nil, ErrReplayEnded
	}
	// Checksum blocks for this frame come before the next inputs block;
	// read ahead so that a checksum of this frame is known.
	off := 0
	for i := 0; i < s.recIdx; i++ {
		off += s.lens[i]
	}
	rec := s.records[off : off+s.lens[s.recIdx]]
	s.inBuf = s.inBuf[:0]
	splitRecord(rec, s.info.NumPlayers, s.info.MaxInputSize, func(i int, in []byte, disc bool) {
		k := len(s.inBuf)
		s.inBuf = append(s.inBuf, in...)
		st := Confirmed
		if disc {
			st = Disconnected
		}
		s.inputs[i] = Input{Bytes: s.inBuf[k:len(s.inBuf):len(s.inBuf)], Status: st}
	})
	s.reqs = s.reqs[:0]
	if s.info.ChecksumInterval > 0 && int(s.current)%s.info.ChecksumInterval == 0 {
		s.reqs = append(s.reqs, Request{Kind: SaveRequest, Frame: s.current})
	}
	s.reqs = append(s.reqs, Request{Kind: AdvanceRequest, Frame: s.current, Inputs: s.inputs})
	s.recIdx++
	s.current++
	return s.reqs, nil
}

// ReportChecksum compares the checksum of saved frame f with the recording.
// When the recording holds it further on, it is compared once read.
func (s *ReplaySession) ReportChecksum(f Frame, sum uint64, parts []Part) {
	// Checksum blocks precede the inputs that follow them; they may not be
	// read yet when f is the last frame of a block.
	for !s.ended && s.err == nil && !s.hasSum(f) && s.peekChecksum() {
		if s.readBlock() != nil {
			return
		}
	}
	if i := indexSum(s.sums, f); i >= 0 {
		s.verify(s.sums[i], sum, parts)
		s.sums = slices.Delete(s.sums, i, i+1)
		return
	}
	if s.ended {
		return // the recording has no checksum of f
	}
	if len(s.reported) >= maxLateSums {
		s.reported = slices.Delete(s.reported, 0, 1)
	}
	s.reported = append(s.reported, fileSum{frame: f, sum: sum, parts: slices.Clone(parts)})
}

// maxPendingSums bounds the recorded checksums read ahead of their frame;
// maxLateSums the reported checksums whose recorded one is not read yet
// (the oldest are dropped: a recording may lack some checksums).
const (
	maxPendingSums = 1024
	maxLateSums    = 64
)

// verify compares the recorded checksum rec with the game's sum and parts.
func (s *ReplaySession) verify(rec fileSum, sum uint64, parts []Part) {
	s.verified++
	if rec.sum != sum && s.mismatch == nil {
		s.mismatch = &MismatchError{CurrentFrame: s.current, Frame: rec.frame, Want: rec.sum, Got: sum, Types: diffShort(parts, rec.parts, maxFileName)}
	}
}

func indexSum(sums []fileSum, f Frame) int {
	return slices.IndexFunc(sums, func(fs fileSum) bool { return fs.frame == f })
}

func (s *ReplaySession) hasSum(f Frame) bool { return indexSum(s.sums, f) >= 0 }

func (s *ReplaySession) peekChecksum() bool {
	b, err := s.r.Peek(1)
	return err == nil && b[0] == blockChecksum
}

// Verified is the number of recorded checksums compared so far.
func (s *ReplaySession) Verified() int { return s.verified }

// CurrentFrame is the frame the next Advance simulates.
func (s *ReplaySession) CurrentFrame() Frame { return s.current }

// Frames is the number of frames in the recording, known once the end has
// been read (0 before).
func (s *ReplaySession) Frames() Frame { return s.total }

// LocalHandles returns nil: a replay's inputs come from the recording.
func (s *ReplaySession) LocalHandles() []PlayerHandle { return nil }

// AddLocalInput returns ErrInvalidHandle: a replay has no local players.
func (s *ReplaySession) AddLocalInput(PlayerHandle, []byte) error { return ErrInvalidHandle }

// WantsChecksum reports whether frame f has a recorded checksum (a replay
// asks to save only those frames).
func (s *ReplaySession) WantsChecksum(f Frame) bool {
	return s.info.ChecksumInterval > 0 && int(f)%s.info.ChecksumInterval == 0
}

// ConfirmedFrame is CurrentFrame()-1: a replay never rolls back.
func (s *ReplaySession) ConfirmedFrame() Frame { return s.current - 1 }

// SnapshotDepth is 0: a replay never loads.
func (s *ReplaySession) SnapshotDepth() int { return 0 }

// FramesAhead is 0: a replay has no peers.
func (s *ReplaySession) FramesAhead() int { return 0 }

// ChecksDeterminism reports false: a replay compares its checksums with
// the recording's, which does not need the strictest mode.
func (s *ReplaySession) ChecksDeterminism() bool { return false }

// Poll does nothing: a replay has no network.
func (s *ReplaySession) Poll() {}

// Events returns nil: a replay reports through AdvanceFrame's errors.
func (s *ReplaySession) Events() []Event { return nil }

// Finished reports whether every recorded frame was played and every
// recorded checksum requested (AdvanceFrame then returns ErrReplayEnded, or
// the mismatch).
func (s *ReplaySession) Finished() bool {
	return s.ended && s.recIdx >= len(s.lens) && (s.endSave || !s.hasSum(s.current))
}

// Close does nothing; it exists for the Session contract.
func (s *ReplaySession) Close() error { return nil }
