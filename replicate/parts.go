package replicate

// Updates larger than one message: cut into parts and paced by the
// server, reassembled by the client.

import (
	"encoding/binary"
	"fmt"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/transport"
)

const (
	// updatePart is the most update bytes one message carries: a larger
	// update (a late joiner's whole world) is cut into parts of this size,
	// or smaller when ServerConfig.MaxMessageSize leaves less room
	// (Server.partSize).
	updatePart = 64 << 10
	// updateBudget is the most bytes of queued updates sent to one client
	// per tick (at least one message): a huge first update is paced over a
	// few ticks instead of filling the connection's send queue at once.
	updateBudget = 1 << 20
	// shrinkAbove: update buffers above this are released after use.
	shrinkAbove = 16384
)

// sendUpdate sends update message b, or queues it behind the client's
// backlog of updates: cut into parts when larger than updatePart, or when
// earlier updates still wait (updates stay in order). The client applies
// an update only once it has all of its parts, so it stays atomic. Its
// mutations and messages are held by the client until then, as for any
// update that has not arrived yet. It reports false when the client was
// dropped (also when its queue would exceed ServerConfig.MaxUpdateBacklog).
func (s *Server) sendUpdate(c *serverClient, b []byte) bool {
	part := s.partSize()
	if len(b) <= part && c.backOff == len(c.backlog) {
		return s.sendTo(c, transport.ReliableOrdered, b)
	}
	if len(c.backlog)-c.backOff+len(b) > s.cfg.MaxUpdateBacklog {
		s.drop(c, fmt.Sprintf("not keeping up (more than %d bytes of updates queued)", s.cfg.MaxUpdateBacklog))
		return false
	}
	if len(b) <= part {
		c.backlog = bin.AppendBytes(c.backlog, b)
		return true
	}
	var hdr [partHeader]byte
	for off := 0; off < len(b); off += part {
		h := appendPartHeader(hdr[:0], len(b), off)
		p := b[off:min(off+part, len(b))]
		c.backlog = binary.AppendUvarint(c.backlog, uint64(len(h)+len(p)))
		c.backlog = append(append(c.backlog, h...), p...)
	}
	return true
}

// partSize is the most update bytes one message carries: updatePart, or
// less when MaxMessageSize is smaller, so every part fits the conn.
func (s *Server) partSize() int {
	return min(updatePart, s.cfg.MaxMessageSize-partHeader)
}

// flushBacklog sends the client's queued update messages, up to
// updateBudget bytes (at least one message). It reports false when the
// client was dropped.
func (s *Server) flushBacklog(c *serverClient) bool {
	sent := 0
	for c.backOff < len(c.backlog) && sent < updateBudget {
		r := bin.NewReader(c.backlog[c.backOff:])
		msg := r.LenBytes(len(c.backlog)) // queued by sendUpdate: well formed
		if !s.sendTo(c, transport.ReliableOrdered, msg) {
			return false
		}
		c.backOff = len(c.backlog) - r.Len()
		sent += len(msg)
	}
	if c.backOff == len(c.backlog) {
		c.backlog, c.backOff = c.backlog[:0], 0
		if cap(c.backlog) > shrinkAbove {
			c.backlog = nil
		}
	}
	return true
}

// updateParts reassembles an update message sent in parts (kindUpdatePart:
// the update's length, the part's offset, its bytes). Parts arrive in order
// on the reliable-ordered channel; anything else is malformed. The buffer
// grows only with the bytes received, up to the announced length, which is
// capped by ClientConfig.MaxUpdateBytes.
type updateParts struct {
	buf   []byte
	total int // announced length of the update being assembled, 0: none
}

// add takes one part's body. It returns the whole update message (valid
// until done) when this part completes it, nil while parts are missing.
func (u *updateParts) add(body []byte, maxBytes int) ([]byte, error) {
	r := bin.NewReader(body)
	total := r.Uvarint()
	off := r.Uvarint()
	data := r.Rest()
	switch {
	case r.Err() != nil:
		return nil, malformed(r.Err())
	case total < 2 || total > uint64(maxBytes):
		return nil, fmt.Errorf("%w: update of %d bytes (at most %d)", errRange, total, maxBytes)
	case len(data) == 0 || off != uint64(len(u.buf)) || (u.total != 0 && uint64(u.total) != total) || off+uint64(len(data)) > total:
		return nil, fmt.Errorf("%w: update part out of sequence", errRange)
	case off == 0 && data[0] != kindUpdate:
		return nil, fmt.Errorf("%w: parts of a message that is no update", errRange)
	}
	u.total = int(total)
	u.buf = append(u.buf, data...)
	if len(u.buf) < u.total {
		return nil, nil
	}
	return u.buf, nil
}

// done forgets the update being assembled (releasing a large buffer).
func (u *updateParts) done() {
	u.total = 0
	u.buf = u.buf[:0]
	if cap(u.buf) > shrinkAbove {
		u.buf = nil
	}
}
