package input

// The server side of inputs: each client's buffer, the inputs of the
// tick simulated, forwarding to the other clients, and the input
// reports that tick sync steers by.

import (
	"slices"

	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// Stats counts one client's inputs at the server.
type Stats struct {
	// Received counts inputs stored (each tick once).
	Received uint64
	// Duplicates counts inputs for ticks already held (redundancy).
	Duplicates uint64
	// Missing counts ticks simulated without the client's input (predicted
	// by repeating the last), each tick once however often Input asks.
	Missing uint64
	// Late counts inputs that arrived after their tick was simulated
	// without them (each also counted in Missing).
	Late uint64
	// Garbage counts inputs dropped for ticks more than Window away from
	// the simulated tick, and messages of unknown clients.
	Garbage uint64
	// Messages counts input messages received, and Reports the
	// Reports sent to the client.
	Messages, Reports uint64
}

// Status describes what the server holds of one client's input for
// one tick (Buffer.Peek).
type Status struct {
	// Real reports whether the client's own input for the tick arrived.
	Real bool
	// Arrived is, when Real, the tick the server was about to simulate
	// when the input first arrived: the input was in time if Arrived is
	// not after the tick it is for.
	Arrived tick.Tick
	// Missed reports whether the tick was simulated without the input
	// (the last one repeated); with Real, the input came late.
	Missed bool
}

// serverInputs is one client's buffer at the server.
type serverInputs[T any] struct {
	id        replicate.ClientID
	ring      inputRing[T]
	newest    tick.Tick
	hasNewest bool
	sim       tick.Tick // the newest tick simulated
	simulated bool
	lastVal   T
	hasLast   bool
	fresh     bool // new inputs since the last Forward
	stats     Stats

	// The report's state: the newest message's Last, the messages
	// missing before it (bit i: Last = msgNewest-1-i), the arrivals
	// since the last report, the ticks since it, and whether a missing
	// or late input wants one at once.
	msgNewest tick.Tick
	hasMsg    bool
	msgLost   uint64
	arrivals  []Arrival
	since     int
	alarm     bool
	report    Report
}

// Buffer is the server side of an input type: one bounded buffer per
// client.
type Buffer[T any] struct {
	in      *Type[T]
	clients map[replicate.ClientID]*serverInputs[T]
	order   []*serverInputs[T] // deterministic iteration
	batch   Batch[T]
	at      tick.Tick // the tick the server simulates next (arrivals are measured against it)
	hasAt   bool
}

// NewBuffer returns the server's input buffer.
func (in *Type[T]) NewBuffer() *Buffer[T] {
	return &Buffer[T]{in: in, clients: map[replicate.ClientID]*serverInputs[T]{}}
}

func (b *Buffer[T]) client(id replicate.ClientID) *serverInputs[T] {
	c := b.clients[id]
	if c == nil {
		c = &serverInputs[T]{id: id, ring: newInputRing[T](2*b.in.cfg.Window + 1), msgLost: ^uint64(0),
			arrivals: make([]Arrival, 0, MaxReportArrivals)}
		b.clients[id] = c
		b.order = append(b.order, c)
	}
	return c
}

// Remove forgets a client (call it when the client disconnects).
func (b *Buffer[T]) Remove(id replicate.ClientID) {
	c := b.clients[id]
	if c == nil {
		return
	}
	delete(b.clients, id)
	if i := slices.Index(b.order, c); i >= 0 {
		// slices.Delete clears the freed tail slot, so the departed
		// client's buffer is not kept reachable.
		b.order = slices.Delete(b.order, i, i+1)
	}
}

// Receive stores the input messages the server received since the last
// call (after replicate.Server.Receive), as arriving before the server
// simulates its next tick, s.Tick()+1. predict.ServerFrame, which knows the tick,
// calls ReceiveAt.
func (b *Buffer[T]) Receive(s *replicate.Server) {
	b.ReceiveAt(s, s.Tick()+1)
}

// ReceiveAt stores the input messages the server received since the last
// call (after replicate.Server.Receive), as arriving before the server
// simulates tick t: an input for t or later is in time.
func (b *Buffer[T]) ReceiveAt(s *replicate.Server, t tick.Tick) {
	b.at, b.hasAt = t, true
	for _, m := range b.in.up.ReceiveFromClients(s) {
		b.Store(m.Client, m.Message)
	}
}

// Store stores one client's batch: duplicates ignored, inputs for ticks
// already simulated without them counted late, ticks more than Window
// from the simulated tick (or from the client's newest before the first
// simulated tick) dropped as garbage. The message's arrival is noted for
// the client's next Report, measured against the tick given to the
// last ReceiveAt (none before the first).
func (b *Buffer[T]) Store(id replicate.ClientID, m Batch[T]) {
	c := b.client(id)
	w := int32(b.in.cfg.Window)
	c.stats.Messages++
	b.noteMessage(c, m.Last)
	first := m.Last.Add(-int32(len(m.Inputs) - 1))
	for i := range m.Inputs {
		t := first.Add(int32(i))
		ref, okRef := c.sim, c.simulated
		if !okRef {
			ref, okRef = c.newest, c.hasNewest
		}
		// One Sub: a tick 2^31 away gives -2^31 both ways round, which
		// two comparisons of t.Sub(ref) and ref.Sub(t) would let pass.
		if d := t.Sub(ref); okRef && (d > w || d < -w) {
			c.stats.Garbage++
			continue
		}
		if _, ok := c.ring.get(t); ok {
			c.stats.Duplicates++
			continue
		}
		if c.ring.wasMissed(t) {
			c.stats.Late++
			c.alarm = true
		}
		c.ring.arrived(t, m.Inputs[i], b.at)
		c.stats.Received++
		c.fresh = true
		if !c.hasNewest || t.After(c.newest) {
			c.newest, c.hasNewest = t, true
		}
	}
}

// noteMessage records the arrival of a message whose newest input is for
// last, for the client's next report.
func (b *Buffer[T]) noteMessage(c *serverInputs[T], last tick.Tick) {
	switch d := last.Sub(c.msgNewest); {
	case !c.hasMsg:
		c.msgNewest, c.hasMsg, c.msgLost = last, true, ^uint64(0)
	case d > 0:
		lost := c.msgLost<<1 | 0 // the previous newest was received
		if d >= 64 {
			lost = ^uint64(0)
		} else {
			lost = lost<<(d-1) | (1<<(d-1) - 1)
		}
		c.msgNewest, c.msgLost = last, lost
	case d < 0 && d >= -64:
		c.msgLost &^= 1 << (-d - 1)
	}
	if !b.hasAt {
		return
	}
	if len(c.arrivals) == MaxReportArrivals {
		copy(c.arrivals, c.arrivals[1:])
		c.arrivals = c.arrivals[:MaxReportArrivals-1]
	}
	c.arrivals = append(c.arrivals, Arrival{Last: last, Margin: last.Sub(b.at)})
}

// Input returns client id's input for tick t, the tick the server
// simulates, and whether it is the real one. A missing input is predicted
// by repeating the client's last input (the zero T before any) and
// counted missing, once per tick; if it arrives later it is counted late.
// Peek reads the same without counting.
func (b *Buffer[T]) Input(id replicate.ClientID, t tick.Tick) (T, bool) {
	c := b.client(id)
	if !c.simulated || t.After(c.sim) {
		c.sim, c.simulated = t, true
	}
	if v, ok := c.ring.get(t); ok {
		c.lastVal, c.hasLast = v, true
		return v, true
	}
	if !c.ring.wasMissed(t) {
		c.stats.Missing++
		c.alarm = true
		c.ring.missed(t)
	}
	return c.lastVal, false
}

// Peek returns client id's input for tick t as Input would, and what the
// buffer knows of it, without counting or marking anything.
func (b *Buffer[T]) Peek(id replicate.ClientID, t tick.Tick) (T, Status) {
	c := b.clients[id]
	if c == nil {
		var zero T
		return zero, Status{}
	}
	st := Status{Missed: c.ring.wasMissed(t)}
	if v, ok := c.ring.get(t); ok {
		st.Real, st.Arrived = true, c.ring.arr[int(uint32(t)%uint32(len(c.ring.ticks)))]
		return v, st
	}
	return c.lastVal, st
}

// Stats returns client id's input counters.
func (b *Buffer[T]) Stats(id replicate.ClientID) Stats {
	if c := b.clients[id]; c != nil {
		return c.stats
	}
	return Stats{}
}

// SendReports sends an Report to each client due one: every
// ReportInterval calls, or at once after one of its inputs was missing or
// late, provided it has sent an input message. Call it once per server
// tick, after the simulation and before replicate.Server.SendTick
// (predict.ServerFrame does). It returns the first send error.
func (b *Buffer[T]) SendReports(s *replicate.Server) error {
	var first error
	for _, c := range b.order {
		c.since++
		if !c.hasMsg || (c.since < b.in.cfg.ReportInterval && !c.alarm) {
			continue
		}
		c.since, c.alarm = 0, false
		r := &c.report
		r.Tick, r.Newest, r.Lost = s.Tick(), c.msgNewest, c.msgLost
		if b.hasAt {
			r.Tick = b.at
		}
		r.Arrivals = append(r.Arrivals[:0], c.arrivals...)
		r.Missing, r.Late = c.stats.Missing, c.stats.Late
		c.arrivals = c.arrivals[:0]
		c.stats.Reports++
		if err := b.in.report.SendToClients(s, replicate.Single(c.id), *r); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Forward sends each client's newest inputs received since the last call
// (up to Redundancy consecutive ticks ending at its newest) to the other
// clients, with Player set. Call it before replicate.Server.SendTick.
func (b *Buffer[T]) Forward(s *replicate.Server) error {
	var first error
	for _, c := range b.order {
		if !c.fresh || !c.hasNewest {
			continue
		}
		c.fresh = false
		b.batch.Player, b.batch.Last = c.id, c.newest
		b.batch.Inputs = b.batch.Inputs[:0]
		lo := c.newest
		for k := 1; k < b.in.cfg.Redundancy; k++ {
			if _, ok := c.ring.get(lo - 1); !ok {
				break
			}
			lo--
		}
		for u := lo; u.AtOrBefore(c.newest); u++ {
			v, _ := c.ring.get(u)
			b.batch.Inputs = append(b.batch.Inputs, v)
		}
		if err := b.in.down.SendToClients(s, replicate.AllExcept(c.id), b.batch); err != nil && first == nil {
			first = err
		}
	}
	return first
}
