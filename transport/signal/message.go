package signal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Limits of the protocol.
const (
	// MaxPeers is the largest room.
	MaxPeers = 16
	// MaxMessageSize is the longest message, in bytes, that the server
	// and the client accept. An SDP offer of one data channel is about 500
	// bytes to 2 KiB.
	MaxMessageSize = 16 << 10
	// MaxRoomName is the longest room name, in bytes.
	MaxRoomName = 64
)

// Message types.
const (
	// TypeWelcome (server to peer) is the first message on a connection:
	// Index is the peer's index in the room, N the room's size.
	TypeWelcome = "welcome"
	// TypeReady (server to every peer) says the room is complete: N peers
	// are in it.
	TypeReady = "ready"
	// TypeOffer, TypeAnswer and TypeCandidate carry WebRTC signalling
	// (Data: a session description or an ICE candidate, as JSON). A peer
	// sends them with To set; the server relays them with From set.
	TypeOffer     = "offer"
	TypeAnswer    = "answer"
	TypeCandidate = "candidate"
	// TypeLeave (server to peer) says peer From has left the room.
	TypeLeave = "leave"
)

// Message is one signalling message.
type Message struct {
	// Type is one of the Type constants.
	Type string `json:"type"`
	// From is the index of the sender (set by the server on relayed
	// messages, and on TypeLeave).
	From int `json:"from"`
	// To is the index of the recipient of a relayed message.
	To int `json:"to"`
	// Index is this peer's index (TypeWelcome).
	Index int `json:"index"`
	// N is the room's size (TypeWelcome, TypeReady).
	N int `json:"n"`
	// Data is the payload of an offer, an answer or a candidate: opaque to
	// the server.
	Data string `json:"data,omitempty"`
}

// ErrMalformed is returned by Decode for a message that is not a valid
// signalling message; it wraps the reason.
var ErrMalformed = errors.New("signal: malformed message")

// Errors of the client and the server.
var (
	// ErrRoomFull is returned by Join when the room already has all its
	// peers.
	ErrRoomFull = errors.New("signal: room full")
	// ErrRoomSize is returned by Join when the room exists with another
	// size (another n).
	ErrRoomSize = errors.New("signal: room exists with another size")
	// ErrBadRoom is returned by Join for a room name or size the server
	// refuses (see ValidRoomName).
	ErrBadRoom = errors.New("signal: invalid room name or size")
	// ErrClosed is returned by a Client after Close, or after the server
	// closed the connection (the room expired, the server shut down).
	ErrClosed = errors.New("signal: connection closed")
)

// Decode parses one message received from the network and checks it: at
// most MaxMessageSize bytes, a known type, indexes in 0..MaxPeers-1 and a
// room size in 0..MaxPeers. It never panics; any problem is an error that
// matches ErrMalformed.
func Decode(b []byte) (Message, error) {
	var m Message
	if len(b) > MaxMessageSize {
		return m, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformed, len(b), MaxMessageSize)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Message{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := m.check(); err != nil {
		return Message{}, err
	}
	return m, nil
}

func (m Message) check() error {
	switch m.Type {
	case TypeWelcome, TypeReady, TypeOffer, TypeAnswer, TypeCandidate, TypeLeave:
	default:
		if len(m.Type) > 16 {
			m.Type = m.Type[:16] + "..."
		}
		return fmt.Errorf("%w: unknown type %q", ErrMalformed, m.Type)
	}
	for _, v := range [...]int{m.From, m.To, m.Index} {
		if v < 0 || v >= MaxPeers {
			return fmt.Errorf("%w: index %d out of 0..%d", ErrMalformed, v, MaxPeers-1)
		}
	}
	if m.N < 0 || m.N > MaxPeers {
		return fmt.Errorf("%w: room size %d out of 0..%d", ErrMalformed, m.N, MaxPeers)
	}
	return nil
}

// Encode returns the JSON form of m, checked as Decode checks it.
func Encode(m Message) ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMessageSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformed, len(b), MaxMessageSize)
	}
	return b, nil
}

// ValidRoomName reports whether name may name a room: 1..MaxRoomName
// bytes of ASCII letters, digits, '-', '_' and '.'.
func ValidRoomName(name string) bool {
	if name == "" || len(name) > MaxRoomName {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) < 0
}
