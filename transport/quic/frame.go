package quic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/transport"
)

// The framing of reliable messages on QUIC streams: each message is its
// length as a minimal unsigned LEB128 varint (encoding/binary's uvarint;
// internal/bin's rule), then that many bytes. The ordered stream carries a sequence of frames
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
	x, err := bin.ReadUvarint(r)
	switch {
	case err == bin.ErrOverflow:
		return 0, errVarintOverflow
	case err == bin.ErrNonMinimal:
		return 0, errVarintNonMinimal
	case err != nil:
		return 0, err
	case x > uint64(limit):
		return 0, &frameTooLargeError{size: x, limit: limit}
	}
	return int(x), nil
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

// frameReader is what the frame decoder reads from: a bufio.Reader over a
// QUIC stream, or a bytes.Reader in tests.
type frameReader interface {
	io.Reader
	io.ByteReader
}

// minGrow is the first allocation for a message body: the buffer of a frame
// starts at this size (or the frame's length if smaller) and doubles.
const minGrow = 512

// readBody reads the n-byte body of a frame whose header was read. Its
// buffer grows only with bytes that arrived: it waits for a byte before
// each allocation, starts at minGrow bytes and doubles up to n, so its
// capacity is at most max(minGrow, 2 × the bytes received) and never
// more than n. Before each allocation it asks reserve for the extra
// capacity; an error from reserve ends the read. It returns the buffer
// read so far with the error; cap(body) is what reserve granted in all.
func readBody(r frameReader, n int, reserve func(extra int) error) (body []byte, err error) {
	if n == 0 {
		return []byte{}, nil
	}
	for len(body) < n {
		if len(body) == cap(body) {
			b, err := r.ReadByte() // something arrived: room for more is due
			if err != nil {
				return body, unexpectedEOF(err)
			}
			grown := min(n, max(2*cap(body), minGrow))
			if err := reserve(grown - cap(body)); err != nil {
				return body, err
			}
			nb := make([]byte, len(body), grown)
			copy(nb, body)
			body = append(nb, b)
			continue
		}
		k, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+k]
		if err != nil && len(body) < n {
			return body, unexpectedEOF(err)
		}
	}
	return body, nil
}

// unexpectedEOF turns io.EOF inside a frame into io.ErrUnexpectedEOF.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readFrame reads one whole frame with no reservation limit: used by tests
// and the fuzz target, and to document the format. The conn reads the
// header, then the body with readBody under its budgets.
func readFrame(r frameReader, limit int) ([]byte, error) {
	n, err := readFrameHeader(r, limit)
	if err != nil {
		return nil, err
	}
	body, err := readBody(r, n, func(int) error { return nil })
	if err != nil {
		return nil, err
	}
	return body, nil
}
