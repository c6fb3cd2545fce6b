package replicate

// The client's side of resyncs, and resync requests: a client asks the
// server for a full resync (Client.RequestResync: a prediction range
// fault, or a network interruption it noticed), the server honours at most
// one request per ServerConfig.ResyncRequestInterval.
//
// Decision (interruption): the client detects it. A client that received
// nothing for ClientConfig.ResyncAfterSilence asks for a full resync with
// the first message that arrives after the silence. The server sends every
// client at least an (empty) mutation message each tick (tick tracking, on
// by default), so silence means the path was broken; the client is where
// that is seen first and unambiguously (the server cannot tell a client
// that receives but whose acks are lost from one that receives nothing),
// and a late joiner busy receiving a large first update is never silent.

import (
	"fmt"
	"time"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// DefaultResyncRequestInterval is the default of
// ServerConfig.ResyncRequestInterval and ClientConfig.ResyncRequestInterval.
const DefaultResyncRequestInterval = time.Second

// cliResync is the client's pending resync, and its requests.
type cliResync struct {
	pending bool
	msg     resyncMsg
	// requested: a request was sent at reqAt and no resync applied since.
	requested bool
	reqAt     time.Time
	// lastRecv is when the client last received a message (silence).
	lastRecv time.Time
}

// resyncMsg handles the server's Resync message.
func (c *Client) resyncMsg(body []byte) {
	if err := readResync(body, len(c.comps), &c.resyncs.msg); err != nil || c.state != Connected {
		c.stats.Malformed++
		c.resyncs.pending = false
		return
	}
	c.resyncs.pending = true
}

// beforeUpdate, when the update in body is the one a pending resync names
// (or a later one), calls the Resync hook, then clears the replicated
// state (full) or the part of it the resync replaces (partial, RNG-only).
func (c *Client) beforeUpdate(body []byte) {
	if !c.resyncs.pending {
		return
	}
	r := bin.NewReader(body)
	t := tick.Tick(r.Uvarint32())
	m := &c.resyncs.msg
	if r.Err() != nil || m.at.After(t) {
		return
	}
	c.resyncs.pending, c.resyncs.requested = false, false
	if h := c.hooks.Resync; h != nil {
		h(t, m.kind, m.reason)
	}
	if m.kind == ResyncFull {
		c.clearReplicated()
	} else {
		c.clearPartial(t, m)
	}
	c.stats.Resyncs++
	c.stats.ResyncKinds.add(m.kind)
	c.events = append(c.events, ClientEvent{Kind: EventResync, Tick: t, Reason: m.reason, Resync: m.kind})
}

// clearPartial removes what a partial or RNG-only resync of tick t
// replaces and the server does not send: the components of the scope an
// entry does not list, and the entities the server does not have.
func (c *Client) clearPartial(t tick.Tick, m *resyncMsg) {
	for _, en := range m.entries {
		rec, ok := c.record(en.e)
		if !ok {
			continue
		}
		if !c.w.Alive(rec.client) {
			// The game despawned it: the update spawns it again.
			c.dropRecord(en.e)
			continue
		}
		if en.gone {
			if h := c.hooks.Despawn; h == nil || !h(rec.client, t) {
				_ = c.w.Despawn(rec.client)
			}
			c.dropRecord(en.e)
			continue
		}
		for id := range c.comps {
			bit := uint64(1) << uint(id)
			if m.scope&bit == 0 || en.mask&bit != 0 || !c.comps[id].has(rec.client) {
				continue
			}
			c.comps[id].remove(rec.client, t)
			c.forget(rec, id)
		}
	}
}

// RequestResync asks the server for a full resync, reason saying why (a
// prediction range fault, an interruption): the server honours it unless
// it honoured one of this client less than its
// ServerConfig.ResyncRequestInterval ago. A request made while an earlier
// one is unanswered and less than ClientConfig.ResyncRequestInterval old
// is not sent again (nil error). ClientCounters.ResyncRequests counts the
// requests sent.
func (c *Client) RequestResync(reason string) error {
	if c.state != Connected {
		return ErrNotConnected
	}
	now := c.cfg.Now()
	if c.resyncs.requested && now.Sub(c.resyncs.reqAt) < c.cfg.ResyncRequestInterval {
		return nil
	}
	if len(reason) > maxResyncReason {
		reason = reason[:maxResyncReason]
	}
	b := appendResyncRequest(c.out[:0], reason)
	c.out = b
	if err := c.send(transport.ReliableOrdered, b); err != nil {
		return err
	}
	c.resyncs.requested, c.resyncs.reqAt = true, now
	c.stats.ResyncRequests++
	return nil
}

// received notes, after an Update's receive loop, whether anything
// arrived; with ClientConfig.ResyncAfterSilence, something arriving after
// a silence that long requests a resync.
func (c *Client) received(got bool) {
	if !got || c.cfg.ResyncAfterSilence <= 0 {
		return
	}
	now := c.cfg.Now()
	last := c.resyncs.lastRecv
	c.resyncs.lastRecv = now
	if d := c.cfg.ResyncAfterSilence; d > 0 && !last.IsZero() && c.state == Connected && now.Sub(last) >= d {
		_ = c.RequestResync(fmt.Sprintf("network interruption: nothing received for %v", now.Sub(last).Round(time.Millisecond)))
	}
}

// appendResyncRequest lays out a ResyncRequest message (kind 5).
func appendResyncRequest(dst []byte, reason string) []byte {
	dst = append(dst, kindResyncRequest)
	return bin.AppendBytes(dst, []byte(reason))
}

// readResyncRequest reads the body of a ResyncRequest message.
func readResyncRequest(body []byte) (string, error) {
	r := bin.NewReader(body)
	reason := r.LenBytes(maxResyncReason)
	return string(reason), r.End()
}

// resyncRequest handles a client's ResyncRequest: a full resync, unless
// the client's resync budget is spent (a resync requested or answering a
// desync less than ResyncRequestInterval ago: refused, counted).
func (s *Server) resyncRequest(c *serverClient, body []byte) {
	reason, err := readResyncRequest(body)
	if err != nil {
		s.violation(c, "malformed resync request")
		return
	}
	if !s.resyncBudget(c, true) {
		c.stats.ResyncRequestsRefused++
		return
	}
	c.stats.ResyncRequests++
	_ = s.queueResync(c.id, ResyncFull, nil, 0, "client request: "+reason)
}
