package replicate_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// pipe is a test MessageConn pair whose traffic moves only when the test
// calls exchange, through hooks that drop, delay or reorder unreliable
// messages (reliable ones are never lost; they may be delayed in order).
type pipeMsg struct {
	ch    transport.Channel
	data  []byte
	delay int
}

type pipeEnd struct {
	peer   *pipeEnd
	inbox  []pipeMsg
	outbox []pipeMsg
	held   []pipeMsg
	cur    []byte
	done   chan struct{}
	err    error
	maxU   int
	stats  transport.MessageStats
}

func newPipe() (*pipeEnd, *pipeEnd) {
	a := &pipeEnd{done: make(chan struct{}), maxU: transport.DefaultMaxUnreliableSize}
	b := &pipeEnd{done: make(chan struct{}), maxU: transport.DefaultMaxUnreliableSize}
	a.peer, b.peer = b, a
	a.stats.RTT, b.stats.RTT = 50*time.Millisecond, 50*time.Millisecond
	return a, b
}

func (p *pipeEnd) Send(ch transport.Channel, msg []byte) error {
	if p.err != nil {
		return p.err
	}
	if ch == transport.Unreliable && len(msg) > p.maxU {
		return transport.ErrTooLarge
	}
	p.stats.Channels[ch].Sent++
	p.stats.Channels[ch].SentBytes += uint64(len(msg))
	p.outbox = append(p.outbox, pipeMsg{ch: ch, data: append([]byte(nil), msg...)})
	return nil
}

func (p *pipeEnd) Receive() (transport.Channel, []byte, bool) {
	if len(p.inbox) == 0 {
		return 0, nil, false
	}
	m := p.inbox[0]
	p.inbox = p.inbox[1:]
	p.cur = m.data
	return m.ch, m.data, true
}

func (p *pipeEnd) WaitReceive(ctx context.Context) error { return errors.New("not supported") }
func (p *pipeEnd) LocalAddr() netip.AddrPort             { return netip.AddrPort{} }
func (p *pipeEnd) RemoteAddr() netip.AddrPort            { return netip.AddrPort{} }
func (p *pipeEnd) Stats() transport.MessageStats         { return p.stats }
func (p *pipeEnd) MaxUnreliableSize() int                { return p.maxU }
func (p *pipeEnd) Close() error                          { return p.CloseWithReason("") }
func (p *pipeEnd) Done() <-chan struct{}                 { return p.done }
func (p *pipeEnd) Err() error                            { return p.err }

func (p *pipeEnd) CloseWithReason(reason string) error {
	if p.err != nil {
		return nil
	}
	p.err = &transport.CloseError{Reason: reason}
	close(p.done)
	if p.peer.err == nil {
		p.peer.err = &transport.CloseError{Remote: true, Reason: reason}
		close(p.peer.done)
	}
	return nil
}

// netHooks decide the fate of unreliable messages during exchange.
type netHooks struct {
	rnd      *rand.Rand
	loss     float64 // unreliable loss probability
	dup      float64 // unreliable duplication probability
	reorder  bool    // shuffle the unreliable messages of one exchange
	maxDelay int     // unreliable messages delayed 0..maxDelay exchanges
	// relDelay delays reliable messages 0..relDelay exchanges (in order per conn).
	relDelay int
	drop     func(ch transport.Channel, msg []byte) bool
}

// flow moves p's sent messages towards its peer according to h.
func (p *pipeEnd) flow(h *netHooks) {
	var unrel []pipeMsg
	for _, m := range p.outbox {
		if m.ch == transport.Unreliable {
			if h != nil && h.drop != nil && h.drop(m.ch, m.data) {
				continue
			}
			if h != nil && h.rnd != nil {
				if h.rnd.Float64() < h.loss {
					continue
				}
				if h.maxDelay > 0 {
					m.delay = h.rnd.IntN(h.maxDelay + 1)
				}
				if h.rnd.Float64() < h.dup {
					unrel = append(unrel, m)
				}
			}
			unrel = append(unrel, m)
			continue
		}
		if h != nil && h.rnd != nil && h.relDelay > 0 {
			m.delay = h.rnd.IntN(h.relDelay + 1)
		}
		p.held = append(p.held, m)
	}
	p.outbox = p.outbox[:0]
	if h != nil && h.reorder && h.rnd != nil {
		h.rnd.Shuffle(len(unrel), func(i, j int) { unrel[i], unrel[j] = unrel[j], unrel[i] })
	}
	p.held = append(p.held, unrel...)
	// Deliver what is due: reliable ordered messages never overtake each other.
	var keep []pipeMsg
	blocked := false
	for _, m := range p.held {
		due := m.delay <= 0
		if m.ch == transport.ReliableOrdered {
			if blocked || !due {
				blocked = true
				m.delay--
				keep = append(keep, m)
				continue
			}
		} else if !due {
			m.delay--
			keep = append(keep, m)
			continue
		}
		if p.peer.err == nil {
			p.peer.inbox = append(p.peer.inbox, m)
		}
	}
	p.held = keep
}

// world pairs: one server and N clients over pipes.
type harness struct {
	t       *testing.T
	proto   *replicate.Protocol
	sw      *ecs.World
	srv     *replicate.Server
	cws     []*ecs.World
	clients []*replicate.Client
	srvEnds []*pipeEnd
	cliEnds []*pipeEnd
	hooks   *netHooks
	now     time.Time
}

// clock is the harness's virtual clock: one exchange is one 60 Hz tick.
func (h *harness) clock() time.Time { return h.now }

// exchange runs one server tick and one client update per client, moving
// traffic both ways through the hooks.
func (h *harness) exchange() {
	h.t.Helper()
	h.now = h.now.Add(time.Second / 60)
	h.srv.Send()
	for i := range h.clients {
		h.srvEnds[i].flow(h.hooks)
		h.clients[i].Update()
		h.cliEnds[i].flow(h.hooks)
	}
}

func (h *harness) connect(token []byte) *replicate.Client {
	h.t.Helper()
	return h.connectWith(replicate.ClientConfig{Token: token})
}

// connectWith connects a client configured by cfg (its World and Protocol
// are set here).
func (h *harness) connectWith(cfg replicate.ClientConfig) *replicate.Client {
	h.t.Helper()
	cw := ecs.New()
	cfg.World, cfg.Protocol = cw, h.proto
	c, err := replicate.NewClient(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	se, ce := newPipe()
	h.srv.AddConn(se)
	if err := c.Connect(ce); err != nil {
		h.t.Fatal(err)
	}
	h.cws = append(h.cws, cw)
	h.clients = append(h.clients, c)
	h.srvEnds = append(h.srvEnds, se)
	h.cliEnds = append(h.cliEnds, ce)
	return c
}
