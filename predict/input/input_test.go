package input_test

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// Move is a game input: 3 bytes with the default encoding.
type Move struct {
	DX, DY int8
	Fire   bool
}

// moveAt is the input a test client sends for tick t.
func moveAt(t tick.Tick, player int) Move {
	return Move{DX: int8(t), DY: int8(player), Fire: t%3 == 0}
}

func inputProtocol(t testing.TB, cfg input.Config) (*replicate.Protocol, *input.Type[Move]) {
	t.Helper()
	p := replicate.NewProtocol()
	in, err := input.Register[Move](p, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, in
}

// inputRig is a server and n clients on a transport.MessageNetwork, built
// inside synctest.Test. The clients run lead ticks ahead of the server.
type inputRig struct {
	t       *testing.T
	net     *transport.MessageNetwork
	ln      *transport.MessageNetworkListener
	srv     *replicate.Server
	buf     *input.Buffer[Move]
	clients []*replicate.Client
	senders []*input.Sender[Move]
	remotes []*input.Remote[Move]
	frame   tick.Tick
	lead    int
}

func newInputRig(t *testing.T, seed uint64, n, lead int, link transport.LinkConfig, cfg input.Config) *inputRig {
	t.Helper()
	r := &inputRig{t: t, lead: lead}
	r.net = transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: seed})
	var err error
	if r.ln, err = r.net.Listen(netip.AddrPort{}); err != nil {
		t.Fatal(err)
	}
	sp, sin := inputProtocol(t, cfg)
	if r.srv, err = replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: sp}); err != nil {
		t.Fatal(err)
	}
	r.buf = sin.NewBuffer()
	for range n {
		cp, cin := inputProtocol(t, cfg)
		c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: cp})
		if err != nil {
			t.Fatal(err)
		}
		conn := dialMem(t, r.net, r.ln, r.srv)
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		r.clients = append(r.clients, c)
		r.senders = append(r.senders, cin.NewSender())
		r.remotes = append(r.remotes, cin.NewRemote())
		// Connect on a clean link, then condition it.
		for range 20 {
			r.exchange(nil)
			if c.State() == replicate.Connected {
				break
			}
		}
		if c.State() != replicate.Connected {
			t.Fatalf("client %d not connected: %v", len(r.clients)-1, c.Err())
		}
		r.net.SetLink(conn.LocalAddr(), r.ln.Addr(), link)
		r.net.SetLink(r.ln.Addr(), conn.LocalAddr(), link)
	}
	return r
}

// exchange runs one server tick without inputs and lets a tick pass.
func (r *inputRig) exchange(sim func(f tick.Tick)) {
	r.frame++
	r.srv.Receive()
	r.buf.Receive(r.srv)
	if sim != nil {
		sim(r.frame)
	}
	if err := r.buf.Forward(r.srv); err != nil {
		r.t.Fatal(err)
	}
	if err := r.srv.SendTick(r.frame); err != nil {
		r.t.Fatal(err)
	}
	for i, c := range r.clients {
		c.Update()
		r.remotes[i].Receive(c)
	}
	time.Sleep(wireTick)
}

func (r *inputRig) close() {
	for _, c := range r.clients {
		c.Close()
	}
	r.srv.Close()
	r.ln.Close()
	r.net.Close()
}

// run plays ticks frames: each client sends its input for frame+lead, the
// server reads every client's input for the frame it simulates, from the
// first frame an input was sent for. It returns how many of those inputs
// were the real ones, of how many.
func (r *inputRig) run(ticks int) (real, total int) {
	start := r.frame + 1 + tick.Tick(r.lead) // the first tick with an input sent
	for range ticks {
		r.exchange(func(f tick.Tick) {
			for i, c := range r.clients {
				if f.AtOrAfter(start) {
					v, ok := r.buf.Input(c.ID(), f)
					total++
					if ok {
						real++
						if v != moveAt(f, i) {
							r.t.Fatalf("tick %v client %d: input %+v, want %+v", f, i, v, moveAt(f, i))
						}
					}
				}
				in := f.Add(int32(r.lead))
				if err := r.senders[i].Add(c, in, moveAt(in, i)); err != nil {
					r.t.Fatal(err)
				}
			}
		})
	}
	return real, total
}

// TestInputsSurviveLoss: at 20% loss and 60 ms RTT, with the default
// redundancy of 3 the server has the real input for all but a few ticks
// (under 1% missing over 10 seeds of 600 ticks: one is lost only when 3
// messages in a row are, 0.8%), while without redundancy about a fifth
// are missing. None is late: the client runs 6 ticks ahead.
func TestInputsSurviveLoss(t *testing.T) {
	link := transport.LinkConfig{Latency: 30 * time.Millisecond, Loss: 0.2}
	for _, tc := range []struct {
		k        int
		seeds    uint64
		min, max float64 // fraction of real inputs
	}{{3, 10, 0.99, 1}, {1, 1, 0.70, 0.90}} {
		real, total := 0, 0
		for seed := range tc.seeds {
			synctest.Test(t, func(t *testing.T) {
				r := newInputRig(t, seed+1, 1, 6, link, input.Config{Redundancy: tc.k})
				defer r.close()
				re, to := r.run(600)
				real, total = real+re, total+to
				st := r.buf.Stats(r.clients[0].ID())
				if int(st.Missing) != to-re || st.Late != 0 || st.Garbage != 0 {
					t.Fatalf("seed %d: stats %+v with %d of %d real, want Missing %d, no late, no garbage", seed+1, st, re, to, to-re)
				}
				if tc.k > 1 && st.Duplicates == 0 {
					t.Fatal("no duplicate counted with redundancy")
				}
			})
		}
		frac := float64(real) / float64(total)
		t.Logf("K=%d, %d seeds: %d of %d inputs real (%.2f%%)", tc.k, tc.seeds, real, total, 100*frac)
		if frac < tc.min || frac > tc.max {
			t.Fatalf("K=%d: %.4f of inputs real, want %.2f..%.2f", tc.k, frac, tc.min, tc.max)
		}
	}
}

// TestInputBufferScripted: exact late, missing, duplicate and garbage
// counts, and the prediction of a missing input by the last one.
func TestInputBufferScripted(t *testing.T) {
	_, in := inputProtocol(t, input.Config{Window: 8})
	b := in.NewBuffer()
	const id = replicate.ClientID(5)
	mv := func(t tick.Tick) Move { return moveAt(t, 0) }
	batch := func(last tick.Tick, n int) input.Batch[Move] {
		m := input.Batch[Move]{Last: last}
		for u := last.Add(-int32(n - 1)); u.AtOrBefore(last); u++ {
			m.Inputs = append(m.Inputs, mv(u))
		}
		return m
	}
	b.Store(id, batch(2, 2)) // ticks 1, 2
	for f := tick.Tick(1); f <= 2; f++ {
		if v, ok := b.Input(id, f); !ok || v != mv(f) {
			t.Fatalf("Input(%v) = %+v, %v; want the real one", f, v, ok)
		}
	}
	for f := tick.Tick(3); f <= 4; f++ {
		if v, ok := b.Input(id, f); ok || v != mv(2) {
			t.Fatalf("Input(%v) = %+v, %v; want tick 2's input repeated", f, v, ok)
		}
	}
	b.Store(id, batch(5, 3)) // 3 and 4 late, 5 in time
	if v, ok := b.Input(id, 5); !ok || v != mv(5) {
		t.Fatalf("Input(5) = %+v, %v", v, ok)
	}
	b.Store(id, batch(6, 3))                                                        // 4, 5 duplicates
	b.Store(id, batch(5+8+1+2, 3))                                                  // 14..16: more than 8 ahead of tick 5
	b.Store(id, input.Batch[Move]{Last: tick.Tick(1<<32 - 10), Inputs: []Move{{}}}) // far behind
	want := input.Stats{Received: 6, Duplicates: 2, Missing: 2, Late: 2, Garbage: 4, Messages: 5}
	if got := b.Stats(id); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	if v, ok := b.Input(id, 6); !ok || v != mv(6) {
		t.Fatalf("Input(6) = %+v, %v", v, ok)
	}
	// A client joining at tick 10: its inputs for ticks the server never
	// simulated for it are not late, the one for 10 is.
	const id2 = replicate.ClientID(6)
	if v, ok := b.Input(id2, 10); ok || v != (Move{}) {
		t.Fatalf("first Input = %+v, %v; want the zero input", v, ok)
	}
	b.Store(id2, batch(11, 4))
	want = input.Stats{Received: 4, Missing: 1, Late: 1, Messages: 1}
	if got := b.Stats(id2); got != want {
		t.Fatalf("joining client's stats %+v, want %+v", got, want)
	}
}

// TestInputCodecRefuses: the decoder refuses garbage: a padded varint, a
// repeat mask with bit 0 or bits past the count,
// an input sent again instead of marked repeated, trailing bytes, a
// truncated message; and, for an input codec of varying sizes, an input
// over MaxInputSize.
func TestInputCodecRefuses(t *testing.T) {
	c, err := input.NewCodec[Move](nil, input.Config{MaxInputSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	good := c.Append(nil, &input.Batch[Move]{Player: 1, Last: 9, Inputs: []Move{{1, 1, true}, {1, 1, true}, {2, 0, false}}})
	var b input.Batch[Move]
	if err := c.Decode(good, &b); err != nil || b.Last != 9 || len(b.Inputs) != 3 || b.Inputs[1] != (Move{1, 1, true}) {
		t.Fatalf("Decode(good) = %v, %+v", err, b)
	}
	// Player 1, last 9, 3 inputs, input 1 repeats input 0: mask 0b010,
	// so the head is 0b010<<4 | 3-1.
	if want := []byte{1, 9, 0x22, 1, 1, 1, 2, 0, 0}; string(good) != string(want) {
		t.Fatalf("Append = %x, want %x", good, want)
	}
	// 81 00 is 1 padded: the one varint rule refuses it (issue 21).
	padded := append([]byte{0x81, 0x00}, good[1:]...)
	for name, data := range map[string][]byte{
		"padded":            padded,
		"padded head":       {1, 9, 0x80, 0x00, 1, 1, 1},
		"mask bit 0":        {1, 9, 0x10, 1, 1, 1},
		"mask past count":   {1, 9, 0x20, 1, 1, 1},
		"repeat sent again": {1, 9, 0x01, 1, 1, 1, 1, 1, 1},
		"bool not 0 or 1":   {1, 9, 0x00, 1, 1, 2},
		"trailing":          append(good, 0),
		"truncated":         good[:len(good)-1],
		"truncated head":    {1, 9},
	} {
		if err := c.Decode(data, &b); !errors.Is(err, input.ErrMalformed) {
			t.Errorf("Decode(%s) = %v, want ErrMalformed", name, err)
		}
	}
	vc, err := input.NewCodec[Chatter](chatterCodec{}, input.Config{MaxInputSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	vb := vc.Append(nil, &input.Batch[Chatter]{Player: 2, Last: 4, Inputs: []Chatter{{"hi"}, {"hi"}, {"yo!"}}})
	if want := []byte{2, 4, 0x22, 2, 'h', 'i', 3, 'y', 'o', '!'}; string(vb) != string(want) {
		t.Fatalf("varying sizes: Append = %x, want %x", vb, want)
	}
	var cb input.Batch[Chatter]
	if err := vc.Decode(vb, &cb); err != nil || len(cb.Inputs) != 3 || cb.Inputs[1].S != "hi" || cb.Inputs[2].S != "yo!" {
		t.Fatalf("varying sizes: Decode = %v, %+v", err, cb)
	}
	if err := vc.Decode(append([]byte{2, 4, 0x00, 9}, make([]byte, 9)...), &cb); !errors.Is(err, input.ErrMalformed) {
		t.Fatalf("an input over MaxInputSize: %v, want ErrMalformed", err)
	}
}

// Chatter is an input of varying size.
type Chatter struct{ S string }

type chatterCodec struct{}

func (chatterCodec) Append(dst []byte, v *Chatter) []byte { return append(dst, v.S...) }
func (chatterCodec) Decode(src []byte, v *Chatter) error {
	v.S = string(src)
	return nil
}

// TestInputSender: the client keeps its inputs by tick for the window,
// refuses ticks out of order and oversize inputs, and each message
// carries the newest K consecutive inputs.
func TestInputSender(t *testing.T) {
	type Big struct{ B [100]byte }
	p := replicate.NewProtocol()
	if _, err := input.Register[Big](p, nil, input.Config{}); !errors.Is(err, input.ErrSize) {
		t.Fatalf("Register(100-byte input, 64-byte limit) = %v, want ErrSize", err)
	}
	_, in := inputProtocol(t, input.Config{Window: 4})
	s := in.NewSender()
	for f := tick.Tick(10); f < 16; f++ {
		if err := s.Add(nil, f, moveAt(f, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(nil, 15, Move{}); !errors.Is(err, input.ErrTick) {
		t.Fatalf("Add(same tick) = %v, want ErrTick", err)
	}
	for f := tick.Tick(12); f < 16; f++ {
		if v, ok := s.Input(f); !ok || v != moveAt(f, 1) {
			t.Fatalf("Input(%v) = %+v, %v", f, v, ok)
		}
	}
	if _, ok := s.Input(11); ok {
		t.Fatal("input older than the window kept")
	}
}

// TestInputsForwarded: the server forwards each player's inputs to the
// other clients; a client has the real input of another player for every
// tick that arrived in time, and the last known one after.
func TestInputsForwarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := transport.LinkConfig{Latency: 20 * time.Millisecond, Loss: 0.1}
		r := newInputRig(t, 3, 2, 6, link, input.Config{})
		defer r.close()
		r.run(200)
		a, b := r.clients[0].ID(), r.clients[1].ID()
		last := r.frame.Add(int32(r.lead))
		got := 0
		for f := last.Add(-40); f.AtOrBefore(last.Add(-10)); f++ {
			v, ok := r.remotes[1].Input(a, f)
			if ok {
				got++
				if v != moveAt(f, 0) {
					t.Fatalf("client 1 has %+v for player %v at %v, want %+v", v, a, f, moveAt(f, 0))
				}
			}
			if w, ok := r.remotes[0].Input(b, f); ok && w != moveAt(f, 1) {
				t.Fatalf("client 0 has %+v for player %v at %v, want %+v", w, b, f, moveAt(f, 1))
			}
		}
		if got < 30 {
			t.Fatalf("client 1 has %d of 31 of player %v's inputs", got, a)
		}
		if _, ok := r.remotes[0].Input(a, last); ok {
			t.Fatal("a client received its own inputs back")
		}
		future := last.Add(20)
		v, ok := r.remotes[1].Input(a, future)
		newest, _ := r.remotes[1].Input(a, last)
		if ok || v != newest {
			t.Fatalf("Input(future) = %+v, %v; want the last known %+v, false", v, ok, newest)
		}
		r.remotes[1].Remove(a)
		if v, ok := r.remotes[1].Input(a, last.Add(-20)); ok || v != (Move{}) {
			t.Fatalf("Input of a removed player = %+v, %v", v, ok)
		}
	})
}

// TestInputBatchPaddedVarint: a batch whose player is the padded varint
// 80 00 (a non-minimal 0) is refused, while the same batch with the
// minimal 00 decodes: the one varint rule of internal/bin. (The batch:
// player, last tick 5, the head 0: one input and an empty repeat mask, the
// input.)
func TestInputBatchPaddedVarint(t *testing.T) {
	c, err := input.NewCodec[uint8](nil, input.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var b input.Batch[uint8]
	if err := c.Decode([]byte{0x80, 0x00, 0x05, 0x00, 0x01}, &b); !errors.Is(err, input.ErrMalformed) {
		t.Fatalf("Decode(80 00 05 00 01) = %v, %+v; want ErrMalformed", err, b)
	}
	minimal := []byte{0x00, 0x05, 0x00, 0x01}
	if err := c.Decode(minimal, &b); err != nil || b.Player != 0 || b.Last != 5 || len(b.Inputs) != 1 || b.Inputs[0] != 1 {
		t.Fatalf("Decode(00 05 00 01) = %v, %+v", err, b)
	}
	if again := c.Append(nil, &b); string(again) != string(minimal) {
		t.Fatalf("re-encoded as %x, want %x", again, minimal)
	}
}

// FuzzInputBatchDecode: the input message decoder never panics, never
// allocates more than MaxRedundancy inputs, and what it accepts encodes
// back to exactly the bytes it accepted (one varint rule: no second
// encoding of a batch) and decodes to the same batch.
func FuzzInputBatchDecode(f *testing.F) {
	c, err := input.NewCodec[Move](nil, input.Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(c.Append(nil, &input.Batch[Move]{Player: 3, Last: 99, Inputs: []Move{{1, 2, true}, {3, 4, false}}}))
	f.Add([]byte{0, 0, 16})
	f.Add([]byte{0x80, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01})
	f.Add(c.Append(nil, &input.Batch[Move]{Player: 1, Last: 7, Inputs: []Move{{1, 0, false}, {1, 0, false}, {0, 1, true}, {0, 1, true}}}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var b input.Batch[Move]
		if err := c.Decode(data, &b); err != nil {
			if !errors.Is(err, input.ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if len(b.Inputs) == 0 || len(b.Inputs) > input.MaxRedundancy {
			t.Fatalf("%d inputs decoded", len(b.Inputs))
		}
		again := c.Append(nil, &b)
		if string(again) != string(data) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", data, b, again)
		}
		var b2 input.Batch[Move]
		if err := c.Decode(again, &b2); err != nil {
			t.Fatalf("re-decoding %+v: %v", b, err)
		}
		if b2.Player != b.Player || b2.Last != b.Last || len(b2.Inputs) != len(b.Inputs) {
			t.Fatalf("round trip %+v -> %+v", b, b2)
		}
		for i := range b.Inputs {
			if b.Inputs[i] != b2.Inputs[i] {
				t.Fatalf("round trip %+v -> %+v", b, b2)
			}
		}
	})
}

// ExampleRegister: a server's input buffer gives the real input for
// the tick it simulates and repeats the last one when an input is
// missing, counting it; the input arriving after its tick is counted late.
func ExampleRegister() {
	p := replicate.NewProtocol()
	in, err := input.Register[Move](p, nil, input.Config{Redundancy: 3})
	if err != nil {
		panic(err)
	}
	buf := in.NewBuffer()
	const player = replicate.ClientID(1)
	// What the client's Sender sends for ticks 1..3 (K = 3), and the
	// server receives.
	buf.Store(player, input.Batch[Move]{Last: 3, Inputs: []Move{{DX: 1}, {DX: 2}, {DX: 3}}})
	for f := tick.Tick(3); f <= 4; f++ {
		v, real := buf.Input(player, f)
		fmt.Println(f, v.DX, real)
	}
	buf.Store(player, input.Batch[Move]{Last: 5, Inputs: []Move{{DX: 3}, {DX: 4}, {DX: 5}}})
	st := buf.Stats(player)
	fmt.Println("missing", st.Missing, "late", st.Late, "duplicates", st.Duplicates)
	// Output:
	// 3 3 true
	// 4 3 false
	// missing 1 late 1 duplicates 1
}

// BenchmarkInputBuffer: the server's per-tick cost of storing 64 clients'
// input messages (K = 3) and reading their inputs for the tick; 0
// allocations once the buffers exist.
func BenchmarkInputBuffer(b *testing.B) {
	for _, n := range []int{64} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			_, in := inputProtocol(b, input.Config{})
			buf := in.NewBuffer()
			m := input.Batch[Move]{Inputs: make([]Move, 3)}
			b.ReportAllocs()
			f := tick.Tick(10)
			for b.Loop() {
				m.Last = f
				for id := range n {
					buf.Store(replicate.ClientID(id+1), m)
				}
				for id := range n {
					buf.Input(replicate.ClientID(id+1), f)
				}
				f++
			}
		})
	}
}

// TestInputGarbageOverNetwork: an input for a tick far beyond the window
// reaches the server and is dropped and counted as garbage, not stored,
// not forwarded; the client's later honest inputs are used.
func TestInputGarbageOverNetwork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newInputRig(t, 5, 2, 4, transport.LinkConfig{Latency: 10 * time.Millisecond}, input.Config{})
		defer r.close()
		r.run(30)
		a := r.clients[0].ID()
		far := r.frame.Add(500)
		if err := r.senders[0].Add(r.clients[0], far, Move{DX: 99}); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			r.exchange(func(f tick.Tick) { r.buf.Input(a, f) })
		}
		st := r.buf.Stats(a)
		if st.Garbage != 1 {
			t.Fatalf("Garbage = %d, want 1 (stats %+v)", st.Garbage, st)
		}
		if v, ok := r.remotes[1].Input(a, far); ok || v.DX == 99 {
			t.Fatalf("garbage input forwarded: %+v, %v", v, ok)
		}
	})
}

// TestInputBufferHalfSpaceTick: an input 2^31 ticks from the simulated
// tick is garbage (both Sub directions give -2^31; issue 21 found 59 of
// 60 such inputs accepted), and Peek reads what the buffer holds without
// counting: a tick asked for twice is missing once.
func TestInputBufferHalfSpaceTick(t *testing.T) {
	_, in := inputProtocol(t, input.Config{})
	b := in.NewBuffer()
	const id = replicate.ClientID(1)
	b.Input(id, 10)
	b.Input(id, 10)
	if st := b.Stats(id); st.Missing != 1 {
		t.Fatalf("tick 10 asked twice: %+v, want Missing 1", st)
	}
	b.Store(id, input.Batch[Move]{Last: 10 + 1<<31, Inputs: []Move{{DX: 1}}})
	b.Store(id, input.Batch[Move]{Last: 11, Inputs: []Move{{DX: 2}}})
	if st := b.Stats(id); st.Garbage != 1 || st.Received != 1 {
		t.Fatalf("stats %+v, want the far input garbage and tick 11 received", st)
	}
	if _, st := b.Peek(id, 10+1<<31); st.Real {
		t.Fatal("the far input was stored")
	}
	v, st := b.Peek(id, 11)
	if !st.Real || st.Missed || v.DX != 2 || st.Arrived != 0 {
		t.Fatalf("Peek(11) = %+v, %+v", v, st)
	}
	b.Store(id, input.Batch[Move]{Last: 10, Inputs: []Move{{DX: 3}}}) // late
	if v, st := b.Peek(id, 10); !st.Real || !st.Missed || v.DX != 3 {
		t.Fatalf("Peek(10) after a late arrival = %+v, %+v; want real and missed", v, st)
	}
	if st := b.Stats(id); st.Missing != 1 || st.Late != 1 {
		t.Fatalf("Peek counted: %+v", st)
	}
}
