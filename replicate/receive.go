package replicate

// The server's receiving side: new connections, hellos, acks, client
// messages, per-client quotas and violations.

import (
	"errors"
	"fmt"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/transport"
)

// accept moves new connections into the client table.
func (s *Server) accept() {
	for _, conn := range s.takeNew() {
		if s.pending >= s.cfg.MaxPending {
			if old := s.oldestPending(); old != nil {
				s.reject(old, rejectFull, fmt.Sprintf("server busy: %d connections waiting for their hello", s.cfg.MaxPending))
			}
		}
		s.add(&serverClient{
			clientLink:  clientLink{conn: conn, batch: batcher(conn), helloBy: s.now.Add(s.cfg.HelloTimeout)},
			clientMeter: clientMeter{violationStart: s.now, rateStart: s.now},
		})
	}
}

// receive reads each client's messages (at most MaxMessagesPerTick).
func (s *Server) receive() {
	for i := 0; i < len(s.order); i++ {
		c := s.order[i]
		select {
		case <-c.conn.Done():
			s.drop(c, "connection closed")
			i--
			continue
		default:
		}
		for n, read := 0, 0; s.quotaLeft(c, n, read); n++ {
			ch, msg, ok := c.conn.Receive()
			if !ok {
				break
			}
			read += len(msg)
			kind := byte(0)
			if len(msg) > 0 {
				kind = msg[0]
			}
			c.countIn(kind, len(msg))
			s.handle(c, ch, msg)
		}
		if !c.authed && !c.gone && !s.now.Before(c.helloBy) {
			if c.waiting {
				s.reject(c, rejectFull, fmt.Sprintf("server busy: %d clients joining", s.joining))
			} else {
				s.reject(c, rejectTimeout, fmt.Sprintf("hello timeout: no hello within %v", s.cfg.HelloTimeout))
			}
		}
		if c.gone {
			i--
		}
	}
}

func (s *Server) handle(c *serverClient, ch transport.Channel, msg []byte) {
	if len(msg) == 0 {
		s.violation(c, "empty message")
		return
	}
	switch msg[0] {
	case kindHello:
		if c.authed || c.waiting {
			s.violation(c, "second hello")
			return
		}
		ver, hash, token, err := readHello(msg[1:])
		if err != nil {
			s.reject(c, rejectVersion, "malformed hello")
			return
		}
		if ver != wireVersion {
			s.reject(c, rejectVersion, fmt.Sprintf("wire version %d, server speaks %d", ver, wireVersion))
			return
		}
		if hash != s.p.hash {
			s.reject(c, rejectProtocol, s.p.mismatchReason(hash))
			return
		}
		if s.cfg.Authenticate != nil {
			if err := s.cfg.Authenticate(c.id, token); err != nil {
				s.reject(c, rejectAuth, "authentication failed: "+err.Error())
				return
			}
		}
		if s.authed() >= s.cfg.MaxClients {
			s.reject(c, rejectFull, "server full")
			return
		}
		if !s.canJoin(s.cfg.MaxJoining) {
			c.wait() // admitted when a joining client proves itself or leaves
			return
		}
		s.admit(c)
	case kindAcks:
		if !c.authed {
			s.violation(c, "acks before hello")
			return
		}
		if readAcks(msg[1:], func(seq uint32) { s.ack(c, seq) }) != nil {
			s.violation(c, "malformed acks")
		}
	case kindClientMsg:
		if !c.authed {
			s.violation(c, "message before hello")
			return
		}
		id, payload, err := readClientMsg(msg[1:])
		if err != nil {
			s.violation(c, "malformed message header")
			return
		}
		spec, ok := s.p.checkMessage(id, ClientToServer)
		if !ok {
			s.violation(c, "unknown message type")
			return
		}
		if ch != spec.ch && !(spec.ch == transport.Unreliable) {
			// Reliable types must arrive on their channel.
			s.violation(c, "message on the wrong channel")
			return
		}
		q := s.inbox(id)
		if err := s.checkClientMessage(c, id, payload, &q.typed); err != nil {
			s.violation(c, err.Error())
			return
		}
		q.add(c.id, payload)
		c.inboxed(len(payload))
	case kindChecksum:
		if !c.authed {
			s.violation(c, "checksum before hello")
			return
		}
		s.checksumReport(c, msg[1:])
	case kindResyncRequest:
		if !c.authed {
			s.violation(c, "resync request before hello")
			return
		}
		s.resyncRequest(c, msg[1:])
	default:
		s.violation(c, "unknown message kind")
	}
}

// admit makes pending client c, whose hello passed, a connected client:
// it gets its entity states and, in the next send phase, its first
// update. It is joining until it proves itself (its first ack).
func (s *Server) admit(c *serverClient) {
	c.ackBits, c.whole = new([ackWindow / 64]uint64), new([wholeRing]wholeTick)
	s.assignSlot(c)
	s.admitted(c)
	c.admitLink()
	b := appendWelcome(s.scratch[:0], c.id, s.tick)
	s.scratch = b
	s.sendTo(c, transport.ReliableOrdered, b)
	s.event(ServerEvent{Kind: ClientConnected, Client: c.id})
}

// admitWaiting admits the clients whose hello waits, oldest first, while
// fewer than MaxJoining clients are joining.
func (s *Server) admitWaiting() {
	for i := 0; i < len(s.order) && s.canJoin(s.cfg.MaxJoining); i++ {
		c := s.order[i]
		if !c.waiting || c.gone {
			continue
		}
		if s.authed() >= s.cfg.MaxClients {
			s.reject(c, rejectFull, "server full")
			i--
			continue
		}
		s.admit(c)
	}
}

// proven notes that joining client c acknowledged a mutation message:
// every one it was sent needs its first update, which an honest client
// applies before it acknowledges, so the first update arrived.
func (s *Server) proven(c *serverClient) {
	c.markProven()
	s.connTable.proven(c)
}

// joinTimedOut disconnects c when it is joining and its first update was
// handed to its connection JoinTimeout ago without an ack since. It
// reports whether it did.
func (s *Server) joinTimedOut(c *serverClient) bool {
	if c.proven || c.joinSent.IsZero() || s.now.Sub(c.joinSent) < s.cfg.JoinTimeout {
		return false
	}
	s.drop(c, fmt.Sprintf("join timeout: first update not acknowledged within %v", s.cfg.JoinTimeout))
	return true
}

// quotaLeft reports whether more may be read from c this tick, having read
// n messages of read bytes: its per-tick quota and its quota of messages
// waiting in the inboxes both have room.
func (s *Server) quotaLeft(c *serverClient, n, read int) bool {
	return !c.gone && n < s.cfg.MaxMessagesPerTick && read < s.cfg.MaxBytesPerTick &&
		c.inboxRoom(s.cfg.MaxMessagesPerTick, s.cfg.MaxBytesPerTick)
}

// The client's lifecycle (clientLink): wait, admitLink, markProven and
// leave move it forward; takeFresh and refresh mark the tick that sends it
// everything it may see; joined notes when its first update was all
// handed to its connection.

// wait notes that the client's hello passed while MaxJoining clients
// join: it waits for admission.
func (l *clientLink) wait() { l.waiting = true }

// admitLink makes the client connected (authed), to be sent everything
// it may see in its first update.
func (l *clientLink) admitLink() {
	l.waiting = false
	l.authed, l.fresh = true, true
}

// markProven notes the client's first ack.
func (l *clientLink) markProven() { l.proven = true }

// leave marks the client gone; false if it was already.
func (l *clientLink) leave() bool {
	if l.gone {
		return false
	}
	l.gone = true
	return true
}

// takeFresh reports whether this tick's update is to send the client
// everything it may see, and clears that.
func (l *clientLink) takeFresh() bool {
	f := l.fresh
	l.fresh = false
	return f
}

// refresh makes the next update send the client everything it may see
// (a full resync).
func (l *clientLink) refresh() { l.fresh = true }

// joined notes, once, that the client's first update was all handed to
// its connection at now (JoinTimeout counts from then) while it has not
// proven itself.
func (l *clientLink) joined(now time.Time) {
	if !l.proven && l.joinSent.IsZero() {
		l.joinSent = now
	}
}

// inboxed counts a message of n bytes the client has waiting in the
// server's inboxes; taken gives it back when the game takes it.
func (l *clientLink) inboxed(n int) { l.queued, l.queuedBytes = l.queued+1, l.queuedBytes+n }
func (l *clientLink) taken(n int)   { l.queued, l.queuedBytes = l.queued-1, l.queuedBytes-n }

// inboxRoom reports whether the client's messages waiting in the inboxes
// are below its quota.
func (l *clientLink) inboxRoom(maxMsgs, maxBytes int) bool {
	return l.queued < maxMsgs && l.queuedBytes < maxBytes
}

// unqueued gives a message taken from an inbox back to its sender's quota.
func (s *Server) unqueued(m rawMessage) {
	if c := s.client(m.client); c != nil {
		c.taken(len(m.data))
	}
}

// checkClientMessage decodes a client message into the inbox's scratch
// value to validate it (the typed decode happens again when the game reads
// it).
func (s *Server) checkClientMessage(c *serverClient, id int, payload []byte, scratch *any) error {
	s.refs = clientRefMapper{s: s, c: c}
	err := s.p.msgs[id].validate(payload, &s.refs, scratch)
	bad := s.refs.bad
	s.refs = clientRefMapper{}
	if err != nil {
		return err
	}
	if bad {
		return errors.New("message refers to an entity the client cannot see")
	}
	return nil
}

// reject refuses a client. The reason travels in the connection's close
// reason (messages queued before a close may be discarded), prefixed with
// the code: "reject/1 protocol mismatch: ...".
func (s *Server) reject(c *serverClient, code byte, reason string) {
	s.event(ServerEvent{Kind: ClientRejected, Client: c.id, Reason: reason})
	s.drop(c, rejectReason(code, reason))
}

// violation counts a protocol violation of c, which is dropped when it
// has more than MaxViolations in a second.
func (s *Server) violation(c *serverClient, what string) {
	s.log.Debug("replicate: client violation", "client", c.id, "what", what)
	if c.violation(s.now) > s.cfg.MaxViolations {
		s.drop(c, "protocol violations: "+what)
	}
}

// clientRefMapper checks that entity references in a client's message are
// entities spawned on that client. The zero Entity (none: an empty
// reference) is valid data and maps to itself.
type clientRefMapper struct {
	s   *Server
	c   *serverClient
	bad bool
}

func (m *clientRefMapper) MapEntity(e ecs.Entity) ecs.Entity {
	if e.IsZero() {
		return e
	}
	idx := int(e.Index())
	if idx >= len(m.s.ents) {
		m.bad = true
		return 0
	}
	if ce := m.s.ce(m.c, idx); ce.flags&ceSpawned == 0 || ce.gen != e.Generation() {
		m.bad = true
		return 0
	}
	return e
}
