package replicate

// The server's connection table: connections handed over by AddConn, and
// the clients, pending (no hello yet, or waiting for admission) or
// connected (joining until their first ack, then proven).

import (
	"slices"
	"sync"

	"github.com/rewindgo/rewind/transport"
)

// connTable holds the server's connections: new ones handed over by
// AddConn (from any goroutine, under mu) and the clients, pending or
// connected.
//
// Invariants, kept by its methods (the only code that writes its fields;
// the send and receive loops read order): clients and order hold the same
// clients, order in connection order; ids are never reused; pending counts
// the clients of order not authed, joining those authed and not proven;
// newConns is touched only under mu.
type connTable struct {
	mu       sync.Mutex
	newConns []transport.MessageConn

	clients map[ClientID]*serverClient
	order   []*serverClient
	nextID  ClientID
	pending int // clients in order that have not said hello, or wait for admission
	joining int // connected clients that have not proven themselves (MaxJoining)
}

// handOver queues conn for the next accept (safe from any goroutine).
func (t *connTable) handOver(conn transport.MessageConn) {
	t.mu.Lock()
	t.newConns = append(t.newConns, conn)
	t.mu.Unlock()
}

// takeNew returns the connections handed over since the last call.
func (t *connTable) takeNew() []transport.MessageConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	pend := t.newConns
	t.newConns = nil
	return pend
}

// closeAll closes every client's connection and the ones not accepted yet.
func (t *connTable) closeAll() {
	for _, c := range t.order {
		_ = c.conn.Close()
	}
	for _, conn := range t.takeNew() {
		_ = conn.Close()
	}
}

// add makes c, a new connection, a pending client under the next id.
func (t *connTable) add(c *serverClient) {
	if t.clients == nil {
		t.clients = map[ClientID]*serverClient{}
	}
	t.nextID++
	c.id = t.nextID
	t.clients[c.id] = c
	t.order = append(t.order, c)
	t.pending++
}

// client returns the client of id, pending or connected (nil: none).
func (t *connTable) client(id ClientID) *serverClient { return t.clients[id] }

// oldestPending returns the oldest pending client, one still silent first
// (one whose hello waits for admission is further along); nil if none.
func (t *connTable) oldestPending() *serverClient {
	var old *serverClient
	for _, o := range t.order {
		if !o.authed && (old == nil || old.waiting && !o.waiting) {
			old = o
		}
	}
	return old
}

// admitted counts pending client c as connected and joining; the caller
// marks c authed.
func (t *connTable) admitted(*serverClient) {
	t.pending--
	t.joining++
}

// proven counts joining client c as proven (the caller marks it).
func (t *connTable) proven(*serverClient) { t.joining-- }

// canJoin reports whether fewer than max clients are joining.
func (t *connTable) canJoin(max int) bool { return t.joining < max }

// authed counts the connected clients (those past their hello).
func (t *connTable) authed() int { return len(t.order) - t.pending }

// remove takes c, being dropped, out of the table and its counts.
func (t *connTable) remove(c *serverClient) {
	switch {
	case !c.authed:
		t.pending--
	case !c.proven:
		t.joining--
	}
	delete(t.clients, c.id)
	// slices.Delete clears the freed tail slot: the departed client (its
	// update backlog, its connection) must not stay reachable from it.
	if i := slices.Index(t.order, c); i >= 0 {
		t.order = slices.Delete(t.order, i, i+1)
	}
}
