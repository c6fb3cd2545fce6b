package websocket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/rewindgo/rewind/transport"
)

// The wire format. Every WebSocket message is binary and is one frame:
// a kind byte, then the kind's body. WebSocket delimits the messages, so
// no frame carries a length.
//
//	kind 0, 1, 2   a message on transport.Channel(kind); the body is the
//	               message (reliable: at most MaxMessageSize bytes, or
//	               the conn closes with ErrProtocol; unreliable: at most
//	               MaxUnreliableSize, or it is dropped and counted)
//	kind 16 hello   client -> server, first frame: body = version (1 byte)
//	kind 17 welcome server -> client, answers hello: body = version
//	kind 18 ping    body = 8 bytes (the sender's clock, opaque to the peer)
//	kind 19 pong    body = the 8 bytes of the ping it answers
//	kind 20 close   body = cause (1 byte: 0 close, 1 receive overflow,
//	               2 protocol, 3 refused) + reason (at most
//	               transport.MaxReasonLength bytes of UTF-8)
//
// Any other kind, a body of the wrong length, a text message, or hello
// and welcome out of place close the conn with transport.ErrProtocol.
const (
	kindHello   byte = 16
	kindWelcome byte = 17
	kindPing    byte = 18
	kindPong    byte = 19
	kindClose   byte = 20
)

// version is the framing version carried by hello and welcome.
const version byte = 1

// Close causes carried by a close frame.
const (
	causeClose    byte = 0
	causeOverflow byte = 1
	causeProtocol byte = 2
	causeRefused  byte = 3
)

// maxControl bounds a control frame: the kind byte, a cause and a reason.
const maxControl = 2 + transport.MaxReasonLength

func causeOf(err error) byte {
	switch {
	case errors.Is(err, transport.ErrReceiveOverflow):
		return causeOverflow
	case errors.Is(err, transport.ErrProtocol):
		return causeProtocol
	case errors.Is(err, transport.ErrRefused):
		return causeRefused
	}
	return causeClose
}

func errOfCause(c byte) error {
	switch c {
	case causeOverflow:
		return transport.ErrReceiveOverflow
	case causeProtocol:
		return transport.ErrProtocol
	case causeRefused:
		return transport.ErrRefused
	}
	return nil
}

// protocolError is a framing error. It matches transport.ErrProtocol.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "transport: protocol violation: " + e.msg }
func (e *protocolError) Unwrap() error { return transport.ErrProtocol }

func protocolf(format string, args ...any) error {
	return &protocolError{fmt.Sprintf(format, args...)}
}

// control is a decoded control frame.
type control struct {
	kind  byte
	stamp uint64 // ping, pong
	cause byte   // close
	text  string // close reason, sanitised
}

// parseControl decodes a whole control frame (kind byte included). It
// allocates only the reason string, at most maxControl bytes.
func parseControl(b []byte) (control, error) {
	if len(b) == 0 {
		return control{}, protocolf("empty frame")
	}
	c := control{kind: b[0]}
	body := b[1:]
	switch c.kind {
	case kindHello, kindWelcome:
		if len(body) != 1 {
			return c, protocolf("hello of %d bytes", len(body))
		}
		if body[0] != version {
			return c, protocolf("framing version %d (want %d)", body[0], version)
		}
	case kindPing, kindPong:
		if len(body) != 8 {
			return c, protocolf("ping of %d bytes", len(body))
		}
		c.stamp = binary.LittleEndian.Uint64(body)
	case kindClose:
		if len(body) < 1 || len(body) > 1+transport.MaxReasonLength {
			return c, protocolf("close frame of %d bytes", len(body))
		}
		if body[0] > causeRefused {
			return c, protocolf("close cause %d", body[0])
		}
		c.cause = body[0]
		c.text = transport.TruncateReason(string(body[1:]))
	default:
		return c, protocolf("unknown frame kind %d", c.kind)
	}
	return c, nil
}

// appendControl appends the encoding of c.
func appendControl(dst []byte, c control) []byte {
	dst = append(dst, c.kind)
	switch c.kind {
	case kindHello, kindWelcome:
		dst = append(dst, version)
	case kindPing, kindPong:
		dst = binary.LittleEndian.AppendUint64(dst, c.stamp)
	case kindClose:
		dst = append(dst, c.cause)
		dst = append(dst, transport.TruncateReason(c.text)...)
	}
	return dst
}

// minGrow is the first allocation for a message body; it doubles from
// there as bytes arrive.
const minGrow = 512

// errTooLong is readPayload's error for a body longer than its limit.
var errTooLong = errors.New("websocket: message over the limit")

// readPayload reads the rest of a WebSocket message (after the kind
// byte) from r, at most limit bytes: a longer one returns errTooLong
// with what was read. The buffer grows only with bytes that arrived: it
// reads a byte before each allocation, starts at minGrow bytes and
// doubles, capped at limit, so its capacity is at most max(minGrow, 2 ×
// the bytes received) and never more than limit. Before each allocation
// it asks reserve for the extra capacity; an error from reserve ends the
// read. cap(body) is what reserve granted in all.
func readPayload(r io.Reader, limit int, reserve func(extra int) error) (body []byte, err error) {
	var one [1]byte
	for {
		if len(body) == cap(body) {
			n, err := io.ReadFull(r, one[:])
			if n == 0 {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					if body == nil {
						body = []byte{}
					}
					return body, nil // the message ended
				}
				return body, err
			}
			if len(body) >= limit {
				return body, errTooLong
			}
			grown := min(limit, max(2*cap(body), minGrow))
			if err := reserve(grown - cap(body)); err != nil {
				return body, err
			}
			nb := make([]byte, len(body), grown)
			copy(nb, body)
			body = append(nb, one[0])
			continue
		}
		k, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+k]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return body, nil
			}
			return body, err
		}
	}
}

// wsHeaderLen is the length of the WebSocket frame header (RFC 6455,
// section 5.2) of an unfragmented message of n bytes: masked (client to
// server) or not. It is what Stats adds to each frame's bytes.
func wsHeaderLen(n int, masked bool) int {
	h := 2
	switch {
	case n >= 1<<16:
		h = 10
	case n >= 126:
		h = 4
	}
	if masked {
		h += 4
	}
	return h
}
