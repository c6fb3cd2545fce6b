package replicate

import (
	"fmt"
	"reflect"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/typename"
	"github.com/rewindgo/rewind/transport"
)

// Message kinds (the first byte of every message on the connection).
const (
	kindHello     = 1 // client: version, protocol hash, token
	kindAcks      = 2 // client: mutation message sequence numbers
	kindClientMsg = 3 // client: typed message
	kindWelcome   = 10
	kindUpdate    = 12
	kindMutations = 13
	kindServerMsg = 14
	// kindUpdatePart carries a slice of an update message too large for one
	// message: the update's length, the slice's offset in it, its bytes.
	kindUpdatePart = 15

	// wireVersion 2: updates larger than updatePart travel in parts.
	wireVersion  = 2
	maxTokenLen  = 1024
	maxAcks      = 1024
	maxReasonLen = 256
)

// Reject reasons.
const (
	rejectProtocol = 1
	rejectAuth     = 2
	rejectFull     = 3
	rejectVersion  = 4
	rejectTimeout  = 5
)

// MessageOption configures a message type.
type MessageOption func(*messageSpec, *messageCodec)

type messageCodec struct {
	codec any
}

// Independent marks server messages that the client delivers at once,
// instead of holding them until it has applied the update of the tick they
// were sent in.
func Independent() MessageOption {
	return func(s *messageSpec, _ *messageCodec) { s.independent = true }
}

// WithMessageCodec replaces the default codec of a message type; tag names
// the encoding in the protocol hash.
func WithMessageCodec[M any](c Codec[M], tag string) MessageOption {
	return func(s *messageSpec, mc *messageCodec) { mc.codec, s.tag = c, "custom:"+tag }
}

// MessageType is a registered message type M. Messages whose *M implements
// ecs.MapEntitieser have their entity fields mapped: server entities to the
// client's when a client receives, client entities to the server's when a
// client sends (a client entity that replicates no server entity maps to
// none; the server accepts none, an empty reference, and refuses references
// to entities the client cannot see).
type MessageType[M any] struct {
	spec  *messageSpec
	codec Codec[M]
	isMap bool
}

// RegisterMessage registers message type M sent in direction dir on channel ch.
func RegisterMessage[M any](p *Protocol, dir Direction, ch transport.Channel, opts ...MessageOption) (MessageType[M], error) {
	if err := p.check(); err != nil {
		return MessageType[M]{}, err
	}
	if dir != ClientToServer && dir != ServerToClient {
		return MessageType[M]{}, fmt.Errorf("%w: bad direction %d", ErrRegistered, dir)
	}
	if ch > transport.Unreliable {
		return MessageType[M]{}, fmt.Errorf("%w: bad channel %d", ErrRegistered, ch)
	}
	t := reflect.TypeFor[M]()
	spec := &messageSpec{id: len(p.msgs), name: typename.Of(t), dir: dir, ch: ch}
	var mc messageCodec
	for _, o := range opts {
		o(spec, &mc)
	}
	var codec Codec[M]
	switch c := mc.codec.(type) {
	case nil:
		pc, err := newPlainCodec[M]()
		if err != nil {
			return MessageType[M]{}, err
		}
		codec = pc
		spec.tag = fmt.Sprintf("plain:%d", pc.l.Encoded)
	case Codec[M]:
		codec = c
	}
	for _, m := range p.msgs {
		if m.name == spec.name && m.dir == dir {
			return MessageType[M]{}, fmt.Errorf("%w: message %s registered twice", ErrRegistered, spec.name)
		}
	}
	_, isMap := any((*M)(nil)).(ecs.MapEntitieser)
	spec.validate = func(payload []byte, m ecs.EntityMapper) error {
		var v M
		if err := codec.Decode(payload, &v); err != nil {
			return err
		}
		if isMap {
			any(&v).(ecs.MapEntitieser).MapEntities(m)
		}
		return nil
	}
	p.msgs = append(p.msgs, spec)
	return MessageType[M]{spec: spec, codec: codec, isMap: isMap}, nil
}

// Target selects the clients a server message goes to.
type Target struct {
	kind   uint8
	client ClientID
}

// All sends to every connected client.
func All() Target { return Target{kind: 0} }

// AllExcept sends to every connected client but id.
func AllExcept(id ClientID) Target { return Target{kind: 1, client: id} }

// Single sends to client id only.
func Single(id ClientID) Target { return Target{kind: 2, client: id} }

func (t Target) includes(id ClientID) bool {
	switch t.kind {
	case 1:
		return id != t.client
	case 2:
		return id == t.client
	}
	return true
}

// SendToClients queues m for the targeted clients; it leaves with the
// server's next Send (after that tick's update). A message too large for
// its channel (ServerConfig.MaxMessageSize on the reliable channels, the
// smallest MaxUnreliableSize of the targeted clients' conns on Unreliable)
// is refused with an error matching ErrTooLarge (and transport.ErrTooLarge,
// with a *transport.SizeError), and no client is affected.
func (mt MessageType[M]) SendToClients(s *Server, to Target, m M) error {
	if mt.spec == nil || mt.spec.dir != ServerToClient {
		return fmt.Errorf("%w: not a server message type", ErrUnknownType)
	}
	s.scratch = mt.codec.Append(s.scratch[:0], &m)
	return s.queueMessage(mt.spec, to, s.scratch)
}

// Receive returns the messages of this type received by the server since
// the last call, with their senders, and forgets them.
func (mt MessageType[M]) ReceiveFromClients(s *Server) []FromClient[M] {
	if mt.spec == nil || mt.spec.dir != ClientToServer {
		return nil
	}
	q := s.inbox(mt.spec.id)
	var out []FromClient[M]
	for _, raw := range q.items {
		s.unqueued(raw)
		var v M
		if err := mt.codec.Decode(raw.data, &v); err != nil {
			continue // validated on arrival
		}
		if mt.isMap {
			c := s.clients[raw.client]
			if c == nil {
				continue
			}
			m := &clientRefMapper{s: s, c: c}
			any(&v).(ecs.MapEntitieser).MapEntities(m)
			if m.bad {
				continue
			}
		}
		out = append(out, FromClient[M]{Client: raw.client, Message: v})
	}
	q.reset()
	return out
}

// FromClient is a message received by the server.
type FromClient[M any] struct {
	Client  ClientID
	Message M
}

// SendToServer sends m to the server (at once).
func (mt MessageType[M]) SendToServer(c *Client, m M) error {
	if mt.spec == nil || mt.spec.dir != ClientToServer {
		return fmt.Errorf("%w: not a client message type", ErrUnknownType)
	}
	if c.state != Connected {
		return ErrNotConnected
	}
	v := m
	if mt.isMap {
		any(&v).(ecs.MapEntitieser).MapEntities(c.toServer())
	}
	b := append(c.out[:0], kindClientMsg)
	b = appendUvarint(b, uint64(mt.spec.id))
	b = mt.codec.Append(b, &v)
	c.out = b
	return c.send(mt.spec.ch, b)
}

// ReceiveFromServer returns the server messages of this type delivered to
// the client since the last call (in order per channel), and forgets them.
func (mt MessageType[M]) ReceiveFromServer(c *Client) []M {
	if mt.spec == nil || mt.spec.dir != ServerToClient {
		return nil
	}
	q := c.inbox(mt.spec.id)
	var out []M
	for _, raw := range q.items {
		var v M
		if err := mt.codec.Decode(raw.data, &v); err != nil {
			c.stats.Malformed++
			continue
		}
		if mt.isMap {
			any(&v).(ecs.MapEntitieser).MapEntities(c.fromServer())
		}
		out = append(out, v)
	}
	q.reset()
	return out
}

// check validates a received payload of message type id without keeping it.
func (p *Protocol) checkMessage(id int, dir Direction) (*messageSpec, bool) {
	if id < 0 || id >= len(p.msgs) || p.msgs[id].dir != dir {
		return nil, false
	}
	return p.msgs[id], true
}

// rawMessage is a received message waiting for the game to read it.
type rawMessage struct {
	client ClientID
	data   []byte
}

// msgQueue holds received messages of one type; its buffer is reused.
type msgQueue struct {
	items []rawMessage
	buf   []byte
	bytes int
}

func (q *msgQueue) push(client ClientID, data []byte, maxItems, maxBytes int) bool {
	if len(q.items) >= maxItems || q.bytes+len(data) > maxBytes {
		return false
	}
	q.add(client, data)
	return true
}

// add queues a copy of data (the conn owns data) without a cap: the server
// bounds what each client has queued.
func (q *msgQueue) add(client ClientID, data []byte) {
	start := len(q.buf)
	q.buf = append(q.buf, data...)
	q.items = append(q.items, rawMessage{client: client, data: q.buf[start:len(q.buf):len(q.buf)]})
	q.bytes += len(data)
}

func (q *msgQueue) reset() {
	q.items = q.items[:0]
	// Items may still alias buf if the caller kept none; reuse is safe
	// because decoded values were copied out.
	q.buf = q.buf[:0]
	q.bytes = 0
}
