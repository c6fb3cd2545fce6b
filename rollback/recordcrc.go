package rollback

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// Integrity of recordings (format version 2): the header and every block
// end with the CRC-32C (Castagnoli) of their bytes, little-endian, so
// that a damaged file is refused (ErrRecordingDamaged) instead of replayed
// with altered inputs. Version 1 recordings, without CRCs, still play.

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcSize is the size of the CRC after the header and each block.
const crcSize = 4

// blockReader reads a recording, summing what it reads since begin.
type blockReader struct {
	r   *bufio.Reader
	sum uint32
	off int64 // bytes read so far
	one [1]byte
}

// begin starts the CRC of a new block (or the header).
func (b *blockReader) begin() { b.sum = 0 }

// ReadByte reads one byte and adds it to the CRC.
func (b *blockReader) ReadByte() (byte, error) {
	c, err := b.r.ReadByte()
	if err == nil {
		b.one[0] = c
		b.sum = crc32.Update(b.sum, castagnoli, b.one[:])
		b.off++
	}
	return c, err
}

// Read reads into p and adds what it read to the CRC.
func (b *blockReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.sum = crc32.Update(b.sum, castagnoli, p[:n])
	b.off += int64(n)
	return n, err
}

// Peek returns the next n bytes without reading them.
func (b *blockReader) Peek(n int) ([]byte, error) { return b.r.Peek(n) }

// check reads the CRC that follows what was read since begin and reports
// whether it matches.
func (b *blockReader) check() (bool, error) {
	var c [crcSize]byte
	if _, err := io.ReadFull(b.r, c[:]); err != nil {
		return false, err
	}
	b.off += crcSize
	return binary.LittleEndian.Uint32(c[:]) == b.sum, nil
}

// sealed checks the CRC of the header or block what, which started at
// byte start, in a recording that has CRCs; it returns the error that
// refuses the recording, or nil.
func (s *ReplaySession) sealed(what string, start int64) error {
	if s.version < 2 {
		return nil
	}
	ok, err := s.r.check()
	switch {
	case err != nil:
		return s.fail("%s at byte %d: %w", what, start, err)
	case !ok:
		s.err = fmt.Errorf("%w: %s at byte %d fails its CRC-32C check", ErrRecordingDamaged, what, start)
		return s.err
	}
	return nil
}

// seal writes the CRC of what was written since the last seal.
func (r *recorder) seal() {
	var c [crcSize]byte
	binary.LittleEndian.PutUint32(c[:], r.crc)
	r.crc = 0
	if r.err == nil {
		if _, err := r.w.Write(c[:]); err != nil {
			r.err = fmt.Errorf("%w: %w", ErrRecording, err)
		}
	}
}
