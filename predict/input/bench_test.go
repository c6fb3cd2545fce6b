package input_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// benchEnd is an allocation-free in-process MessageConn for benchmarks:
// messages are copied into reused slots; flow moves what one end sent to
// the other's receive queue.
type benchEnd struct {
	peer *benchEnd
	out  []benchMsg
	nOut int
	in   []benchMsg
	nIn  int
	rd   int
	done chan struct{}
}

type benchMsg struct {
	ch   transport.Channel
	data []byte
}

func newBenchPipe() (*benchEnd, *benchEnd) {
	a, b := &benchEnd{done: make(chan struct{})}, &benchEnd{done: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func pushMsg(q *[]benchMsg, n *int, ch transport.Channel, data []byte) {
	if *n == len(*q) {
		*q = append(*q, benchMsg{})
	}
	m := &(*q)[*n]
	m.ch, m.data = ch, append(m.data[:0], data...)
	*n++
}

func (p *benchEnd) Send(ch transport.Channel, msg []byte) error {
	pushMsg(&p.out, &p.nOut, ch, msg)
	return nil
}

// deliver queues msg for this end to receive, as if its peer had sent it.
func (p *benchEnd) deliver(ch transport.Channel, msg []byte) { pushMsg(&p.in, &p.nIn, ch, msg) }

func (p *benchEnd) flow() {
	for _, m := range p.out[:p.nOut] {
		p.peer.deliver(m.ch, m.data)
	}
	p.nOut = 0
}

func (p *benchEnd) Receive() (transport.Channel, []byte, bool) {
	if p.rd == p.nIn {
		p.rd, p.nIn = 0, 0
		return 0, nil, false
	}
	m := p.in[p.rd]
	p.rd++
	return m.ch, m.data, true
}

func (p *benchEnd) WaitReceive(context.Context) error { return errors.New("unsupported") }
func (p *benchEnd) LocalAddr() netip.AddrPort         { return netip.AddrPort{} }
func (p *benchEnd) RemoteAddr() netip.AddrPort        { return netip.AddrPort{} }
func (p *benchEnd) Stats() transport.MessageStats     { return transport.MessageStats{} }
func (p *benchEnd) MaxUnreliableSize() int            { return transport.DefaultMaxUnreliableSize }
func (p *benchEnd) Close() error                      { return nil }
func (p *benchEnd) CloseWithReason(string) error      { return nil }
func (p *benchEnd) Done() <-chan struct{}             { return p.done }
func (p *benchEnd) Err() error                        { return nil }

// inputBench is a server with n connected clients whose input messages
// are written straight into the server ends of their conns, the way the
// clients' Senders encode them.
type inputBench struct {
	srv   *replicate.Server
	buf   *input.Buffer[Move]
	ends  []*benchEnd
	ids   []replicate.ClientID
	hdr   []byte // the header replicate puts before an input message
	codec input.Codec[Move]
	batch input.Batch[Move]
	msg   []byte
	now   time.Time
}

func newInputBench(b testing.TB, n int) *inputBench {
	ib := &inputBench{now: time.Unix(1e9, 0)}
	sp, sin := inputProtocol(b, input.Config{})
	var err error
	// The clients never acknowledge an update: admit them all at once.
	ib.srv, err = replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: sp, MaxJoining: n, Now: func() time.Time { return ib.now }})
	if err != nil {
		b.Fatal(err)
	}
	ib.buf = sin.NewBuffer()
	if ib.codec, err = input.NewCodec[Move](nil, input.Config{}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		cp, cin := inputProtocol(b, input.Config{})
		c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: cp})
		if err != nil {
			b.Fatal(err)
		}
		se, ce := newBenchPipe()
		ib.srv.AddConn(se)
		if err := c.Connect(ce); err != nil {
			b.Fatal(err)
		}
		ce.flow()
		ib.srv.Receive()
		se.flow()
		c.Update()
		if c.State() != replicate.Connected {
			b.Fatalf("client %d not connected: %v", i, c.Err())
		}
		if i == 0 {
			// The header is what the client puts before the batch.
			m := input.Batch[Move]{Last: 1, Inputs: []Move{{}}}
			if err := cin.NewSender().Add(c, m.Last, Move{}); err != nil {
				b.Fatal(err)
			}
			sent := ce.out[ce.nOut-1].data
			body := ib.codec.Append(nil, &m)
			ib.hdr = append([]byte(nil), sent[:len(sent)-len(body)]...)
			ce.nOut = 0
		}
		ib.ends, ib.ids = append(ib.ends, se), append(ib.ids, c.ID())
	}
	ib.batch.Inputs = make([]Move, 3)
	return ib
}

// arrive queues at the server each client's message for the client's tick
// f (K = 3: inputs of f-2 .. f) and returns the bytes of one message.
func (ib *inputBench) arrive(f tick.Tick) int {
	ib.batch.Last = f
	for i, e := range ib.ends {
		for k := range ib.batch.Inputs {
			ib.batch.Inputs[k] = moveAt(f.Add(int32(k-2)), i)
		}
		ib.msg = ib.codec.Append(append(ib.msg[:0], ib.hdr...), &ib.batch)
		e.deliver(transport.Unreliable, ib.msg)
	}
	return len(ib.msg)
}

// BenchmarkServerInputs: the server's per-tick cost of receiving and
// buffering 64 clients' input messages (K = 3, clients 4 ticks ahead):
// replicate.Server.Receive of the messages that arrived,
// Buffer.Receive, and Buffer.Input for each client's input of
// the simulated tick. Beside it, floor: the same messages (written into
// the conns the same way) decoded by a loop that skips replicate's header
// and stores each input in a plain array per client, with no validation,
// quotas or accounting. 0 allocations per tick; B/client/s is the input
// traffic per client at 60 ticks a second (message bytes with replicate's
// header, without the transport's framing).
func BenchmarkServerInputs(b *testing.B) {
	const lead = 4
	for _, n := range []int{64} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			ib := newInputBench(b, n)
			f := tick.Tick(10)
			size := 0
			var sum int
			step := func() {
				size = ib.arrive(f.Add(lead))
				ib.now = ib.now.Add(time.Second / tick.DefaultHz)
				ib.srv.Receive()
				ib.buf.Receive(ib.srv)
				for _, id := range ib.ids {
					v, _ := ib.buf.Input(id, f)
					sum += int(v.DX)
				}
				f++
			}
			for k := range int32(lead) { // the clients' first ticks, ahead
				ib.arrive(f.Add(k))
				ib.srv.Receive()
				ib.buf.Receive(ib.srv)
			}
			for range 2 * lead { // warm up: buffers sized
				step()
			}
			b.ReportAllocs()
			for b.Loop() {
				step()
			}
			for _, id := range ib.ids {
				if st := ib.buf.Stats(id); st.Missing != 0 || st.Garbage != 0 {
					b.Fatalf("client %v: %+v", id, st)
				}
			}
			b.ReportMetric(float64(size*tick.DefaultHz), "B/client/s")
		})
		b.Run(fmt.Sprintf("floor/clients=%d", n), func(b *testing.B) {
			ib := newInputBench(b, n)
			rings := make([][64]Move, n)
			f := tick.Tick(10)
			size := 0
			var sum int
			step := func() {
				size = ib.arrive(f.Add(lead))
				for i, e := range ib.ends {
					for {
						_, msg, ok := e.Receive()
						if !ok {
							break
						}
						msg = msg[len(ib.hdr):]
						_, w := binary.Uvarint(msg) // player
						msg = msg[w:]
						last, w := binary.Uvarint(msg)
						msg = msg[w:]
						count := int(msg[0])
						msg = msg[1:]
						for k := range count {
							l := int(msg[0])
							in := Move{DX: int8(msg[1]), DY: int8(msg[2]), Fire: msg[3] != 0}
							rings[i][(int(last)-count+1+k)%64] = in
							msg = msg[1+l:]
						}
					}
					sum += int(rings[i][int(f)%64].DX)
				}
				f++
			}
			for range 2 * lead {
				step()
			}
			b.ReportAllocs()
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(size*tick.DefaultHz), "B/client/s")
		})
	}
}

// TestServerInputsAllocateNothing: in steady state, a server tick that
// receives 8 clients' input messages (replicate.Server.Receive, with its
// validation), buffers them and reads each client's input allocates
// nothing, and every input is the real one.
func TestServerInputsAllocateNothing(t *testing.T) {
	ib := newInputBench(t, 8)
	f := tick.Tick(10)
	real := 0
	step := func() {
		ib.arrive(f)
		ib.now = ib.now.Add(time.Second / tick.DefaultHz)
		ib.srv.Receive()
		ib.buf.Receive(ib.srv)
		for i, id := range ib.ids {
			if v, ok := ib.buf.Input(id, f); ok && v == moveAt(f, i) {
				real++
			}
		}
		f++
	}
	for range 5 {
		step()
	}
	if allocs := testing.AllocsPerRun(50, step); allocs != 0 {
		t.Fatalf("%v allocations per tick, want 0", allocs)
	}
	if want := 8 * (5 + 51); real != want {
		t.Fatalf("%d real inputs, want %d", real, want)
	}
}
