package replicate

// Resync: the server sends a client its whole visible world again, as to
// a late joiner, and the client replaces its replicated state with it.
//
// Decision: the server forgets what it believes the client has (its view
// of every entity slot and resource, visibility kept) and marks it fresh,
// so the ordinary late-join path builds the update (in parts when large).
// A Resync message (kind 17) on the reliable-ordered channel names the
// tick of that update; the client clears its replicated state when it
// applies the update of that tick, within the same call, so the game never
// sees the state in between. Mutations sent before the resync are older
// than the update and count as stale.

import (
	"fmt"

	"github.com/rewindgo/rewind/internal/bin"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// maxResyncReason bounds the reason a Resync message carries.
const maxResyncReason = 256

// clientResync is a client's pending resync on the server.
type clientResync struct {
	resync  bool
	reason  string
	forcing bool // this tick's update is a resync: send it even if empty
}

// cliResync is the client's pending resync.
type cliResync struct {
	pending bool
	at      tick.Tick
	reason  string
}

// Resync makes the server send client id its whole visible world in the
// update of the next Send, as to a client that just joined (in parts if
// large), and the client replace its replicated state with it atomically:
// entities the server no longer has are despawned, values and resources
// restored. reason travels with it: ServerEvent ClientResync and ClientEvent
// EventResync carry it, and ConnectionStats.Resyncs and
// ClientCounters.Resyncs count resyncs.
func (s *Server) Resync(id ClientID, reason string) error {
	c := s.clients[id]
	if c == nil || !c.authed || c.gone {
		return ErrNotConnected
	}
	if len(reason) > maxResyncReason {
		reason = reason[:maxResyncReason]
	}
	c.resync, c.reason = true, reason
	return nil
}

// desyncDetected resyncs c after a desync when ServerConfig.ResyncOnDesync.
func (s *Server) desyncDetected(c *serverClient, t tick.Tick, types []string) {
	if s.cfg.ResyncOnDesync {
		_ = s.Resync(c.id, fmt.Sprintf("desync at tick %v: %v", t, types))
	}
}

// startResync, at the start of c's send of tick t, forgets what c has and
// tells it the update of t replaces its state.
func (s *Server) startResync(c *serverClient, t tick.Tick) {
	c.forcing = false
	if !c.resync {
		return
	}
	c.resync = false
	for i := range s.ents {
		ce := &s.cstate[i*s.slotCap+c.slot]
		*ce = clientEnt{vis: ce.vis}
	}
	clear(c.res)
	c.fresh, c.forcing = true, true
	b := append(s.scratch[:0], kindResync)
	b = appendUvarint(b, uint64(t))
	b = bin.AppendBytes(b, []byte(c.reason))
	s.scratch = b
	if !s.sendTo(c, transport.ReliableOrdered, b) {
		return
	}
	c.stats.Resyncs++
	s.event(ServerEvent{Kind: ClientResync, Client: c.id, Tick: t, Reason: c.reason})
}

// readResync reads the body of a Resync message.
func readResync(body []byte) (tick.Tick, string, error) {
	r := bin.NewReader(body)
	t := tick.Tick(r.Uvarint32())
	reason := r.LenBytes(maxResyncReason)
	return t, string(reason), r.End()
}

// resyncMsg handles the server's Resync message.
func (c *Client) resyncMsg(body []byte) {
	t, reason, err := readResync(body)
	if err != nil || c.state != Connected {
		c.stats.Malformed++
		return
	}
	c.resyncs = cliResync{pending: true, at: t, reason: reason}
}

// beforeUpdate clears the replicated state when the update in body is the
// one a pending resync names (or a later one).
func (c *Client) beforeUpdate(body []byte) {
	if !c.resyncs.pending {
		return
	}
	r := bin.NewReader(body)
	t := tick.Tick(r.Uvarint32())
	if r.Err() != nil || c.resyncs.at.After(t) {
		return
	}
	c.resyncs.pending = false
	c.clearReplicated()
	c.stats.Resyncs++
	c.events = append(c.events, ClientEvent{Kind: EventResync, Tick: t, Reason: c.resyncs.reason})
}
