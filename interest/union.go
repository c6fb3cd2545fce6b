package interest

import (
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
)

// Union combines sources of visibility: a client sees an entity while at
// least one source shows it to that client. Each source tells it what it
// starts and stops showing (Union.SetVisible with true, then false), which
// is exactly what Rooms.Apply and Grid.Apply call, so
//
//	rooms.Apply(u)
//	grid.Apply(u)
//	u.SetVisible(id, e, true) // the game's own, direct reasons
//	u.Apply(server)
//
// shows each entity to each client for any of those reasons. A Union
// counts the sources of each (client, entity) pair, and Apply calls
// SetVisible only for the pairs whose answer changed since the previous
// Apply, in the order they first changed: a pair shown and hidden again
// between two Applies costs no call. The zero Union is not usable; call
// NewUnion.
type Union struct {
	clients map[replicate.ClientID]*unionClient
	queue   []unionChange // pairs whose count crossed zero since Apply, in order
}

type unionClient struct {
	id   replicate.ClientID
	ents map[ecs.Entity]unionEnt // looked up, never iterated
	gone bool                    // forgotten: its queued changes are dropped
}

type unionEnt struct {
	n      int32 // sources showing the entity
	shown  bool  // what the last Apply told
	queued bool  // in Union.queue
}

type unionChange struct {
	c *unionClient
	e ecs.Entity
}

// NewUnion returns an empty Union: it shows nothing to anyone.
func NewUnion() *Union {
	return &Union{clients: make(map[replicate.ClientID]*unionClient)}
}

// SetVisible adds (visible) or removes (!visible) one source showing e to
// client id; the change reaches the Visibility at the next Apply. A hide
// with no show left to remove returns ErrUnbalanced and changes nothing.
// It satisfies Visibility, so a Rooms or Grid can apply into a Union.
func (u *Union) SetVisible(id replicate.ClientID, e ecs.Entity, visible bool) error {
	if visible {
		u.ref(id, e)
		return nil
	}
	if !u.unref(id, e) {
		return ErrUnbalanced
	}
	return nil
}

// Visible reports whether some source shows e to client id now, that is
// what the next Apply makes the Visibility show.
func (u *Union) Visible(id replicate.ClientID, e ecs.Entity) bool {
	c := u.clients[id]
	return c != nil && c.ents[e].n > 0
}

// ForgetClient drops client id's counts without any SetVisible call (for a
// client that disconnected: replicate forgets its view itself). Changes of
// it not yet applied are dropped.
func (u *Union) ForgetClient(id replicate.ClientID) {
	if c := u.clients[id]; c != nil {
		c.gone = true
		delete(u.clients, id)
	}
}

// Apply calls v.SetVisible for every pair whose answer changed since the
// previous Apply, in the order of the first change, and only for those.
// An error of v does not stop it: the pair counts as told, and Apply
// returns the first error (replicate's ErrNotConnected means the client
// left: call ForgetClient).
func (u *Union) Apply(v Visibility) error {
	var first error
	for _, ch := range u.queue {
		c := ch.c
		if c.gone {
			continue
		}
		st := c.ents[ch.e]
		st.queued = false
		if want := st.n > 0; want != st.shown {
			st.shown = want
			if err := v.SetVisible(c.id, ch.e, want); err != nil && first == nil {
				first = applyError(c.id, ch.e, want, err)
			}
		}
		if st.n == 0 && !st.shown {
			delete(c.ents, ch.e)
		} else {
			c.ents[ch.e] = st
		}
	}
	clear(u.queue)
	u.queue = u.queue[:0]
	return first
}

// client returns id's counts, made on first use.
func (u *Union) client(id replicate.ClientID) *unionClient {
	c := u.clients[id]
	if c == nil {
		c = &unionClient{id: id, ents: make(map[ecs.Entity]unionEnt)}
		u.clients[id] = c
	}
	return c
}

// ref adds a source showing e to id.
func (u *Union) ref(id replicate.ClientID, e ecs.Entity) {
	c := u.client(id)
	st := c.ents[e]
	st.n++
	if st.n == 1 && !st.queued {
		st.queued = true
		u.queue = append(u.queue, unionChange{c, e})
	}
	c.ents[e] = st
}

// unref removes a source showing e to id; false if none showed it.
func (u *Union) unref(id replicate.ClientID, e ecs.Entity) bool {
	c := u.clients[id]
	if c == nil {
		return false
	}
	st, ok := c.ents[e]
	if !ok || st.n == 0 {
		return false
	}
	st.n--
	if st.n == 0 && !st.queued {
		st.queued = true
		u.queue = append(u.queue, unionChange{c, e})
	}
	c.ents[e] = st
	return true
}
