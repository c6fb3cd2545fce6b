package quic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/rewindgo/rewind/transport"
)

// The framing of reliable messages on QUIC streams: each message is its
// length as a minimal unsigned LEB128 varint (encoding/binary's uvarint),
// then that many bytes. The ordered stream carries a sequence of frames
// after a one-byte preface; a unidirectional stream carries exactly one
// frame.

// preface is the first byte the dialer writes on the ordered stream: the
// server can only accept a stream once data arrives on it. It also
// versions the framing (ALPN versions the protocol as a whole).
const preface byte = 1

// appendFrameHeader appends the length prefix of an n-byte message.
func appendFrameHeader(dst []byte, n int) []byte {
	return binary.AppendUvarint(dst, uint64(n))
}

var (
	errVarintOverflow   = &protocolError{"length prefix overflows 64 bits"}
	errVarintNonMinimal = &protocolError{"length prefix not minimally encoded"}
)

// protocolError is a framing error. It matches transport.ErrProtocol.
type protocolError struct{ msg string }

func (e *protocolError) Error() string  { return "transport: protocol violation: " + e.msg }
func (e *protocolError) Unwrap() error  { return transport.ErrProtocol }
func (e *protocolError) detail() string { return e.msg }

// readFrameHeader reads one length prefix and checks it against limit. At a
// frame boundary it returns io.EOF when the stream ends; inside a prefix,
// io.ErrUnexpectedEOF. A prefix that overflows, is not minimal or exceeds
// limit is an error matching transport.ErrProtocol; for a length over the
// limit it is a *frameTooLargeError. It reads at most
// binary.MaxVarintLen64 bytes and allocates nothing.
func readFrameHeader(r io.ByteReader, limit int) (int, error) {
	var x uint64
	var s uint
	for i := range binary.MaxVarintLen64 {
		b, err := r.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, errVarintOverflow
			}
			if i > 0 && b == 0 {
				return 0, errVarintNonMinimal
			}
			x |= uint64(b) << s
			if x > uint64(limit) {
				return 0, &frameTooLargeError{size: x, limit: limit}
			}
			return int(x), nil
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	return 0, errVarintOverflow
}

// frameTooLargeError reports a length prefix over the limit.
type frameTooLargeError struct {
	size  uint64
	limit int
}

func (e *frameTooLargeError) Error() string { return "transport: protocol violation: " + e.detail() }

func (e *frameTooLargeError) detail() string {
	return fmt.Sprintf("message of %d bytes over the %d-byte limit", e.size, e.limit)
}

func (e *frameTooLargeError) Unwrap() error { return transport.ErrProtocol }

// readFrame reads one whole frame: used by tests and the fuzz target, and
// to document the format. The conn reads the header and the body
// separately, reserving room for the body in between.
func readFrame(r interface {
	io.Reader
	io.ByteReader
}, limit int) ([]byte, error) {
	n, err := readFrameHeader(r, limit)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return msg, nil
}
