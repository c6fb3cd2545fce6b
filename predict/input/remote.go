package input

// The client side of forwarded inputs: the other players' inputs by tick.

import (
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// Remote is the client side of forwarded inputs: the other players'
// inputs by tick.
type Remote[T any] struct {
	in      *Type[T]
	players map[replicate.ClientID]*remotePlayer[T]
}

type remotePlayer[T any] struct {
	ring      inputRing[T]
	newest    tick.Tick
	hasNewest bool
}

// NewRemote returns a client's store of the other players' inputs.
func (in *Type[T]) NewRemote() *Remote[T] {
	return &Remote[T]{in: in, players: map[replicate.ClientID]*remotePlayer[T]{}}
}

// Receive stores the forwarded inputs the client received (after
// replicate.Client.Update). Inputs more than Window ticks older than a
// player's newest are dropped.
func (r *Remote[T]) Receive(c *replicate.Client) {
	for _, m := range r.in.down.ReceiveFromServer(c) {
		r.Store(m)
	}
}

// Store stores one forwarded batch.
func (r *Remote[T]) Store(m Batch[T]) {
	p := r.players[m.Player]
	if p == nil {
		p = &remotePlayer[T]{ring: newInputRing[T](r.in.cfg.Window)}
		r.players[m.Player] = p
	}
	first := m.Last.Add(-int32(len(m.Inputs) - 1))
	for i := range m.Inputs {
		t := first.Add(int32(i))
		if p.hasNewest && p.newest.Sub(t) >= int32(r.in.cfg.Window) {
			continue
		}
		p.ring.set(t, m.Inputs[i])
		if !p.hasNewest || t.After(p.newest) {
			p.newest, p.hasNewest = t, true
		}
	}
}

// Remove forgets a player (when it leaves).
func (r *Remote[T]) Remove(player replicate.ClientID) { delete(r.players, player) }

// Input returns player's input for tick t and true if it arrived, else the
// newest known input before t (the zero T if none) and false.
func (r *Remote[T]) Input(player replicate.ClientID, t tick.Tick) (T, bool) {
	var zero T
	p := r.players[player]
	if p == nil {
		return zero, false
	}
	if v, ok := p.ring.get(t); ok {
		return v, true
	}
	u := t - 1
	if p.hasNewest && p.newest.Before(t) {
		u = p.newest
	}
	for k := 0; k < r.in.cfg.Window; k, u = k+1, u-1 {
		if v, ok := p.ring.get(u); ok {
			return v, false
		}
	}
	return zero, false
}
