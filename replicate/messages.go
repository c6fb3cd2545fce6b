package replicate

// Typed game messages both ways: registration, sending, receiving and
// their queues.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/typename"
	"github.com/rewindgo/rewind/transport"
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
	spec.validate = func(payload []byte, m ecs.EntityMapper, scratch *any) error {
		v := &typedOf[M](scratch).check
		if err := codec.Decode(payload, v); err != nil {
			return err
		}
		if isMap {
			any(v).(ecs.MapEntitieser).MapEntities(m)
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

// ReceiveFromClients returns the messages of this type received by the
// server since the last call, with their senders, and forgets them.
//
// The returned slice, and the memory its messages refer to, belong to the
// server and are reused by the next call for this type: read them before
// calling again, and copy what you keep (a copy of a message that holds
// slices must copy the slices too). In exchange, receiving allocates
// nothing once the server has seen a tick's worth of messages.
func (mt MessageType[M]) ReceiveFromClients(s *Server) []FromClient[M] {
	if mt.spec == nil || mt.spec.dir != ClientToServer {
		return nil
	}
	q := s.inbox(mt.spec.id)
	sc := typedOf[M](&q.typed)
	out := sc.from[:0]
	for _, raw := range q.items {
		s.unqueued(raw)
		out = grow(out)
		m := &out[len(out)-1]
		m.Client = raw.client
		if err := mt.codec.Decode(raw.data, &m.Message); err != nil {
			out = out[:len(out)-1]
			continue // validated on arrival
		}
		if mt.isMap {
			c := s.client(raw.client)
			if c == nil {
				out = out[:len(out)-1]
				continue
			}
			s.refs = clientRefMapper{s: s, c: c}
			any(&m.Message).(ecs.MapEntitieser).MapEntities(&s.refs)
			if s.refs.bad {
				out = out[:len(out)-1]
				continue
			}
		}
	}
	s.refs = clientRefMapper{}
	q.reset()
	sc.from = out
	return out
}

// typedScratch is an inbox's memory for decoding messages of type M: the
// value arrivals are validated into, and the slices ReceiveFromClients and
// ReceiveFromServer return, reused from call to call so that receiving
// allocates nothing in steady state.
type typedScratch[M any] struct {
	check M
	from  []FromClient[M]
	to    []M
}

// typedOf returns the typedScratch kept in *slot, making it on first use.
func typedOf[M any](slot *any) *typedScratch[M] {
	sc, _ := (*slot).(*typedScratch[M])
	if sc == nil {
		sc = new(typedScratch[M])
		*slot = sc
	}
	return sc
}

// grow extends s by one element, reusing the one already there if any:
// the caller overwrites it.
func grow[E any](s []E) []E {
	return slices.Grow(s, 1)[:len(s)+1]
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
	b := appendClientMsgHeader(c.out[:0], mt.spec.id)
	b = mt.codec.Append(b, &v)
	c.out = b
	return c.send(mt.spec.ch, b)
}

// ReceiveFromServer returns the server messages of this type delivered to
// the client since the last call (in order per channel), and forgets them.
//
// The returned slice, and the memory its messages refer to, belong to the
// client and are reused by the next call for this type: read them before
// calling again, and copy what you keep (a copy of a message that holds
// slices must copy the slices too).
func (mt MessageType[M]) ReceiveFromServer(c *Client) []M {
	if mt.spec == nil || mt.spec.dir != ServerToClient {
		return nil
	}
	q := c.inbox(mt.spec.id)
	sc := typedOf[M](&q.typed)
	out := sc.to[:0]
	for _, raw := range q.items {
		out = grow(out)
		v := &out[len(out)-1]
		if err := mt.codec.Decode(raw.data, v); err != nil {
			c.stats.Malformed++
			out = out[:len(out)-1]
			continue
		}
		if mt.isMap {
			any(v).(ecs.MapEntitieser).MapEntities(c.fromServer())
		}
	}
	q.reset()
	sc.to = out
	return out
}

// check validates a received payload of message type id without keeping it.
func (p *Protocol) checkMessage(id int, dir Direction) (*messageSpec, bool) {
	if id < 0 || id >= len(p.msgs) || p.msgs[id].dir != dir {
		return nil, false
	}
	return p.msgs[id], true
}

// messageQueues holds the server's game messages: received ones per type
// (inboxes) and the ones to send at the end of the tick (out, payloads in
// outBuf). Invariants, kept by its methods (this file): each out entry's
// payload is outBuf[off:off+n], out holds at most maxQueuedMessages, and
// both empty at each flush. refs is a reused entity mapper (a mapper
// passed as an interface escapes) and scratch an encoding buffer that any
// step borrows for one message.
type messageQueues struct {
	inboxes []msgQueue
	refs    clientRefMapper
	out     []queuedMsg
	outBuf  []byte
	scratch []byte
}

type queuedMsg struct {
	spec *messageSpec
	to   Target
	off  int
	n    int
}

// maxQueuedMessages bounds the server messages queued in one tick.
const maxQueuedMessages = 1 << 16

// queueMessage queues a server message for the end of the tick, once it
// is known to fit its targets' channels.
func (s *Server) queueMessage(spec *messageSpec, to Target, payload []byte) error {
	if len(s.out) >= maxQueuedMessages {
		return fmt.Errorf("%w: outgoing message queue full", ErrTooLarge)
	}
	if err := s.checkMessageSize(spec, to, len(payload)); err != nil {
		return err
	}
	s.push(spec, to, payload)
	return nil
}

// push queues a copy of payload (the caller checked the queue's bound).
func (q *messageQueues) push(spec *messageSpec, to Target, payload []byte) {
	off := len(q.outBuf)
	q.outBuf = append(q.outBuf, payload...)
	q.out = append(q.out, queuedMsg{spec: spec, to: to, off: off, n: len(payload)})
}

// flushed forgets the queued server messages once they are sent.
func (q *messageQueues) flushed() {
	q.out = q.out[:0]
	q.outBuf = q.outBuf[:0]
}

// checkMessageSize refuses a server message that would not fit the channel
// of a client it is sent to: its header (kind, type id, update tick) and
// payload must fit MaxMessageSize on the reliable channels, and the
// unreliable limit of every targeted connected client on Unreliable.
func (s *Server) checkMessageSize(spec *messageSpec, to Target, n int) error {
	size := serverMsgHeaderMax(spec.id) + n
	limit := s.cfg.MaxMessageSize
	if spec.ch == transport.Unreliable {
		limit = transport.DefaultMaxUnreliableSize
		first := true
		for _, c := range s.order {
			if c.authed && !c.gone && to.includes(c.id) {
				if m := c.conn.MaxUnreliableSize(); first || m < limit {
					limit, first = m, false
				}
			}
		}
	}
	if size > limit {
		return fmt.Errorf("%w: server message %s of %d bytes (%d with its header) over the %v limit of %d bytes: %w",
			ErrTooLarge, spec.name, n, size, spec.ch, limit, &transport.SizeError{Channel: spec.ch, Size: size, Limit: limit})
	}
	return nil
}

// flushMessages sends the server messages queued since the last tick.
func (s *Server) flushMessages() {
	for _, q := range s.out {
		payload := s.outBuf[q.off : q.off+q.n]
		for _, c := range s.order {
			if !c.authed || c.gone || !q.to.includes(c.id) {
				continue
			}
			req := c.lastUpdate
			if q.spec.independent {
				req = 0
			}
			b := appendServerMsgHeader(s.scratch[:0], q.spec.id, req)
			b = append(b, payload...)
			s.scratch = b
			err := c.conn.Send(q.spec.ch, b)
			if errors.Is(err, transport.ErrTooLarge) {
				// SendToClients checked the size against MaxMessageSize and
				// the clients of the time: this conn's limits are smaller.
				// The game message is lost for this client; its
				// replication state is not, so it stays connected.
				s.log.Warn("replicate: server message too large for a client's conn", "client", c.id, "message", q.spec.name, "err", err)
				continue
			}
			if s.afterSend(c, q.spec.ch, kindServerMsg, len(b), err) {
				c.countMessage(q.spec, len(b))
			}
		}
	}
	s.flushed()
}

// inbox returns the inbox of client message type id.
func (q *messageQueues) inbox(id int) *msgQueue { return &q.inboxes[id] }

func (c *Client) inbox(id int) *msgQueue { return &c.inboxes[id] }

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
	typed any // *typedScratch[M] of the queue's message type M
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
