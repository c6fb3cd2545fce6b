package replicate_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/quant"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// fastEnd is an allocation-free test conn: messages are copied into reused
// slots, and flow moves them to the peer when the benchmark says so.
type fastEnd struct {
	peer   *fastEnd
	out    []fastMsg
	nOut   int
	in     []fastMsg
	nIn    int
	rd     int
	sent   [transport.NumChannels]uint64
	done   chan struct{}
	drop   bool  // discard everything sent
	fail   error // returned by Send on reliable channels
	ackBuf []byte
}

type fastMsg struct {
	ch   transport.Channel
	data []byte
}

func newFastPipe() (*fastEnd, *fastEnd) {
	a, b := &fastEnd{done: make(chan struct{})}, &fastEnd{done: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func (p *fastEnd) Send(ch transport.Channel, msg []byte) error {
	if p.fail != nil && ch != transport.Unreliable {
		return p.fail
	}
	p.sent[ch] += uint64(len(msg))
	if p.drop {
		return nil
	}
	if p.nOut == len(p.out) {
		p.out = append(p.out, fastMsg{})
	}
	m := &p.out[p.nOut]
	m.ch, m.data = ch, append(m.data[:0], msg...)
	p.nOut++
	return nil
}

func (p *fastEnd) flow() {
	q := p.peer
	for _, m := range p.out[:p.nOut] {
		if q.nIn == len(q.in) {
			q.in = append(q.in, fastMsg{})
		}
		d := &q.in[q.nIn]
		d.ch, d.data = m.ch, append(d.data[:0], m.data...)
		q.nIn++
	}
	p.nOut = 0
}

// autoAck plays a client that receives everything and acknowledges every
// mutation message, without running a client world: it reads the sequence
// numbers of the server's mutation messages and queues the acks as if they
// came from the client.
func (p *fastEnd) autoAck() {
	for _, m := range p.out[:p.nOut] {
		if len(m.data) == 0 || m.data[0] != 13 {
			continue
		}
		b := m.data[1:]
		for k := 0; k < 2; k++ { // tick, update delta
			_, w := binary.Uvarint(b)
			b = b[w:]
		}
		seq, _ := binary.Uvarint(b)
		// Acks: newest seq, covering no message before it.
		ack := append(binary.AppendUvarint(append(p.ackBuf[:0], 2), seq), 0, 0)
		p.ackBuf = ack
		if p.nIn == len(p.in) {
			p.in = append(p.in, fastMsg{})
		}
		d := &p.in[p.nIn]
		d.ch, d.data = transport.Unreliable, append(d.data[:0], ack...)
		p.nIn++
	}
	p.nOut = 0
}

func (p *fastEnd) Receive() (transport.Channel, []byte, bool) {
	if p.rd == p.nIn {
		p.rd, p.nIn = 0, 0
		return 0, nil, false
	}
	m := p.in[p.rd]
	p.rd++
	return m.ch, m.data, true
}

func (p *fastEnd) WaitReceive(context.Context) error { return errors.New("unsupported") }
func (p *fastEnd) LocalAddr() netip.AddrPort         { return netip.AddrPort{} }
func (p *fastEnd) RemoteAddr() netip.AddrPort        { return netip.AddrPort{} }
func (p *fastEnd) Stats() transport.MessageStats {
	return transport.MessageStats{RTT: 50 * time.Millisecond}
}
func (p *fastEnd) MaxUnreliableSize() int       { return transport.DefaultMaxUnreliableSize }
func (p *fastEnd) Close() error                 { return nil }
func (p *fastEnd) CloseWithReason(string) error { return nil }
func (p *fastEnd) Done() <-chan struct{}        { return p.done }
func (p *fastEnd) Err() error                   { return nil }

type Velocity struct{ X, Y, Z float32 }

type benchWorld struct {
	proto   *replicate.Protocol
	sw      *ecs.World
	srv     *replicate.Server
	ents    []ecs.Entity
	clients []*replicate.Client
	sEnds   []*fastEnd
	cEnds   []*fastEnd
	now     time.Time
	rnd     *rand.Rand
}

func benchProto(tb testing.TB) *replicate.Protocol {
	p := replicate.NewProtocol()
	for _, err := range []error{
		second(replicate.Component[Position](p, replicate.WithOwnRule())),
		second(replicate.Component[Health](p, replicate.WithOwnRule())),
		second(replicate.Component[Velocity](p, replicate.WithOwnRule())),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

func second[T any](_ T, err error) error { return err }

// newBenchWorld: n entities with three replicated components, k clients
// connected and caught up.
func newBenchWorld(tb testing.TB, n, k int) *benchWorld { return newBenchWorldWith(tb, n, k, nil) }

// newBenchWorldWith is newBenchWorld with the server's configuration
// changed by cfg.
func newBenchWorldWith(tb testing.TB, n, k int, cfg func(*replicate.ServerConfig)) *benchWorld {
	bw := &benchWorld{proto: benchProto(tb), sw: ecs.New(), now: time.Unix(1e9, 0), rnd: rand.New(rand.NewPCG(1, 2))}
	var err error
	scfg := replicate.ServerConfig{World: bw.sw, Protocol: bw.proto, Now: func() time.Time { return bw.now }}
	if cfg != nil {
		cfg(&scfg)
	}
	bw.srv, err = replicate.NewServer(scfg)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i++ {
		e := spawnRep(bw.sw, Position{X: float64(i)}, int32(i))
		_ = ecs.Register[Velocity](bw.sw).Set(e, Velocity{X: 1})
		bw.ents = append(bw.ents, e)
	}
	for i := 0; i < k; i++ {
		c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: bw.proto})
		if err != nil {
			tb.Fatal(err)
		}
		se, ce := newFastPipe()
		bw.srv.AddConn(se)
		_ = c.Connect(ce)
		bw.clients, bw.sEnds, bw.cEnds = append(bw.clients, c), append(bw.sEnds, se), append(bw.cEnds, ce)
	}
	for i := 0; i < 5; i++ {
		bw.mutate(0.1)
		bw.tick(true)
	}
	return bw
}

// mutate changes the position of a fraction of the entities.
func (bw *benchWorld) mutate(frac float64) {
	pos := ecs.StoreOf[Position](bw.sw)
	m := int(float64(len(bw.ents)) * frac)
	start := bw.rnd.IntN(len(bw.ents))
	for i := 0; i < m; i++ {
		e := bw.ents[(start+i*7)%len(bw.ents)]
		p := pos.Ptr(e)
		p.X += 0.5
	}
}

// tick runs one server tick and, if deliver, the clients' side.
func (bw *benchWorld) tick(deliver bool) {
	bw.now = bw.now.Add(time.Second / 60)
	bw.srv.Send()
	if !deliver {
		return
	}
	for i, c := range bw.clients {
		bw.sEnds[i].flow()
		c.Update()
		bw.cEnds[i].flow()
	}
}

// BenchmarkServerSend: server cost of one tick with 1000 entities (three
// replicated components), 10% of them mutated per tick, for K clients that
// receive everything and acknowledge every mutation message (the clients are
// played by the test conns, which turn each mutation message into an ack).
// Values and entity blocks are encoded once per tick for all clients.
func BenchmarkServerSend(b *testing.B) { benchServerSend(b, []int{1, 16, 64}, nil) }

// BenchmarkServerSendNoDeltas is BenchmarkServerSend with deltas off
// (ServerConfig.NoDeltas): every value absolute, in bit-packed messages.
// Beside BenchmarkServerSend it shows what deltas cost in CPU and save in
// bytes (B/tick/client).
func BenchmarkServerSendNoDeltas(b *testing.B) {
	benchServerSend(b, []int{1, 64}, func(c *replicate.ServerConfig) { c.NoDeltas = true })
}

// BenchmarkServerSendPriority is BenchmarkServerSend with a per-client
// priority (ServerConfig.Priority) falling with the distance between an
// entity's index and the client's own spot on the line of entities: 1
// within 100, then 100/distance. Clients then take no whole segments.
func BenchmarkServerSendPriority(b *testing.B) {
	benchServerSend(b, []int{1, 64}, func(c *replicate.ServerConfig) {
		c.Priority = func(id replicate.ClientID, e ecs.Entity) float32 {
			d := math.Abs(float64(e.Index()) - float64(id*997%1000))
			if d <= 100 {
				return 1
			}
			return float32(100 / d)
		}
	})
}

func benchServerSend(b *testing.B, ks []int, cfg func(*replicate.ServerConfig)) {
	for _, k := range ks {
		b.Run(fmt.Sprintf("entities=1000/clients=%d", k), func(b *testing.B) {
			bw := newBenchWorldWith(b, 1000, k, cfg)
			for i := 0; i < 20; i++ { // real clients catch up
				bw.mutate(0.1)
				bw.tick(true)
			}
			step := func() {
				bw.mutate(0.1)
				for _, se := range bw.sEnds {
					se.autoAck()
				}
				bw.now = bw.now.Add(time.Second / 60)
			}
			for i := 0; i < 300; i++ { // warm up: buffers and rings at their steady size
				step()
				bw.srv.Send()
			}
			// The timed loop includes mutating 100 entities (the same for
			// every K) and the test conns' acks (a few ns per client), not
			// StopTimer/StartTimer, whose cost would swamp K=1.
			before := bw.sEnds[0].sent
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
				bw.srv.Send()
			}
			b.StopTimer()
			var out uint64
			for ch := range before {
				out += bw.sEnds[0].sent[ch] - before[ch]
			}
			b.ReportMetric(float64(out)/float64(b.N), "B/tick/client")
			st, _ := bw.srv.Stats(bw.clients[0].ID())
			if st.Resent != 0 {
				b.Fatalf("%d resends with every message acknowledged", st.Resent)
			}
			if k == 64 {
				b.ReportMetric(float64(st.RetainedBytes)/1000, "B/client/entity")
			}
		})
	}
}

// BenchmarkClientReceive: client cost of applying one tick of 1000
// entities with 10% mutated.
func BenchmarkClientReceive(b *testing.B) {
	b.Run("entities=1000", func(b *testing.B) {
		bw := newBenchWorld(b, 1000, 1)
		for i := 0; i < 200; i++ {
			bw.mutate(0.1)
			bw.tick(true)
		}
		c := bw.clients[0]
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			bw.mutate(0.1)
			bw.now = bw.now.Add(time.Second / 60)
			bw.srv.Send()
			bw.sEnds[0].flow()
			b.StartTimer()
			c.Update()
			b.StopTimer()
			bw.cEnds[0].flow()
			b.StartTimer()
		}
	})
}

// TestServerStateBounded: a client that stops acknowledging does not make
// the server's state for it grow without bound.
func TestServerStateBounded(t *testing.T) {
	bw := newBenchWorld(t, 1000, 2)
	for i := 0; i < 100; i++ {
		bw.mutate(0.5)
		bw.tick(true)
	}
	st0, _ := bw.srv.Stats(bw.clients[1].ID())
	// Client 1 goes silent: its traffic is dropped both ways from now on.
	bw.sEnds[1].drop = true
	bw.cEnds[1].drop = true
	// It keeps changing for 1500 ticks, then stops (so values are resent).
	var at1000, peak int
	for i := 0; i < 3000; i++ {
		if i < 1500 {
			bw.mutate(0.5)
		}
		bw.tick(true)
		st, _ := bw.srv.Stats(bw.clients[1].ID())
		peak = max(peak, st.RetainedBytes)
		if i == 999 {
			at1000 = st.RetainedBytes
		}
	}
	st, _ := bw.srv.Stats(bw.clients[1].ID())
	t.Logf("retained bytes for a silent client: %d before, %d after 1000 ticks, %d after 3000 (peak %d); resent %d", st0.RetainedBytes, at1000, st.RetainedBytes, peak, st.Resent)
	// The rings have caps: 512 records and 65,536 entity slots (256 KiB),
	// plus the client's column of entity states and its buffers.
	if peak > at1000+16384 || peak > 400*1024 {
		t.Fatalf("retained state still growing: %d after 1000 ticks, peak %d", at1000, peak)
	}
	if st.Resent == 0 {
		t.Fatal("nothing resent to a silent client")
	}
}

// Cube is the Gaffer on Games scene object: position and orientation.
type Cube struct {
	Pos [3]float32
	Rot [4]float32 // quaternion
}

// BenchmarkCubes: 901 cubes at 60 ticks per second to one client, a seeded
// motion where a fraction of the cubes move at any time; reports kbit/s of
// message payload for this package's plain encoding beside the naive
// encoding (every cube's full value every tick it changes, with a 4-byte
// entity id), the measuring stick for later bandwidth work.
func BenchmarkCubes(b *testing.B) {
	kbps, naive, _ := cubes(b, nil, nil, true)
	b.ReportMetric(kbps, "kbit/s")
	b.ReportMetric(naive, "naive-kbit/s")
}

// BenchmarkCubesAtRest is the scene with every cube at rest: what a
// client costs while nothing moves (the goal: at most 16 kbit/s; what
// remains is the tick-tracking message of each tick). Its naive form
// sends every cube every tick (4 + 28 bytes).
func BenchmarkCubesAtRest(b *testing.B) {
	kbps, _, _ := cubes(b, nil, nil, false)
	b.ReportMetric(kbps, "kbit/s")
	b.ReportMetric(901*(4+28)*8*60.0/1000, "naive-kbit/s")
}

// BenchmarkCubesQuantized is BenchmarkCubes with the cubes quantized
// (package quant: positions to 1/512 over ±64, rotations smallest-three at
// 9 bits a component, 10 bytes instead of 28), the server simulating on
// the quantized values; the client holds exactly the server's values at
// the end. It reports kbit/s and the largest distance between a client's
// position and the unquantized motion's: the drift of snapping each
// tick's move to the grid (1/512), not an error of the transmission.
func BenchmarkCubesQuantized(b *testing.B) {
	pos := quant.Must(quant.NewFloat[float32](-64, 64, 1.0/512))
	codec := quant.NewCodec(
		quant.Vec3Field(pos, func(c *Cube) *[3]float32 { return &c.Pos }),
		quant.RotationField(quant.Must(quant.NewRotation(9)), func(c *Cube) *[4]float32 { return &c.Rot }),
	)
	kbps, naive, maxErr := cubes(b, replicate.WithCodec[Cube](codec, "cube/q1"), codec.Quantize, true)
	b.ReportMetric(kbps, "kbit/s")
	b.ReportMetric(naive, "naive-kbit/s")
	b.ReportMetric(maxErr, "drift-from-unquantized")
	b.ReportMetric(float64(codec.FixedSize()), "bytes/cube")
}

// cubes runs the scene b.N times; opt is the Cube component's extra
// option, quantize (if not nil) snaps the server's values after each move,
// kick: cubes are kicked into motion (else all rest).
// It returns the payload kbit/s, the naive kbit/s and the largest
// distance (on one axis) of a client's position from the unquantized
// motion's.
func cubes(b *testing.B, opt replicate.ComponentOption, quantize func(*Cube), kick bool) (kbps, naive, maxErr float64) {
	for i := 0; i < b.N; i++ {
		p := replicate.NewProtocol()
		opts := []replicate.ComponentOption{replicate.WithOwnRule()}
		if opt != nil {
			opts = append(opts, opt)
		}
		if _, err := replicate.Component[Cube](p, opts...); err != nil {
			b.Fatal(err)
		}
		sw := ecs.New()
		now := time.Unix(1e9, 0)
		srv, _ := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: p, Now: func() time.Time { return now }})
		cubes := ecs.Register[Cube](sw)
		rep := ecs.Register[replicate.Replicated](sw)
		var ents []ecs.Entity
		ideal := make([][3]float64, 901) // the unquantized positions
		for k := 0; k < 901; k++ {
			e := sw.Spawn()
			_ = rep.Set(e, replicate.Replicated{})
			c := Cube{Pos: [3]float32{float32(k % 30), 0, float32(k / 30)}, Rot: [4]float32{0, 0, 0, 1}}
			ideal[k] = [3]float64{float64(k % 30), 0, float64(k / 30)}
			if quantize != nil {
				quantize(&c)
			}
			_ = cubes.Set(e, c)
			ents = append(ents, e)
		}
		cw := ecs.New()
		c, _ := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: p})
		se, ce := newFastPipe()
		srv.AddConn(se)
		_ = c.Connect(ce)
		rnd := rand.New(rand.NewPCG(7, 7))
		moving := make([]int, 901) // ticks left in motion
		var bytes, naiveBytes uint64
		const ticks = 600
		for t := 0; t < ticks+10; t++ {
			// About 1 cube in 30 is kicked each second; a kick lasts 1-3 s.
			for k := range moving {
				if kick && moving[k] == 0 && rnd.IntN(60*30) == 0 {
					moving[k] = 60 + rnd.IntN(120)
				}
				if moving[k] > 0 {
					moving[k]--
					cp := cubes.Ptr(ents[k])
					cp.Pos[1] = float32(math.Sin(float64(t) / 20))
					cp.Pos[0] += 0.01
					ideal[k][1] = math.Sin(float64(t) / 20)
					ideal[k][0] += 0.01
					a := float64(t) / 30
					cp.Rot = [4]float32{float32(math.Sin(a)), 0, 0, float32(math.Cos(a))}
					if quantize != nil {
						quantize(cp)
					}
					if t >= 10 {
						naiveBytes += 4 + 28
					}
				}
			}
			now = now.Add(time.Second / 60)
			before := se.sent
			srv.Send()
			if t >= 10 {
				for ch := range before {
					bytes += se.sent[ch] - before[ch]
				}
			}
			se.flow()
			c.Update()
			ce.flow()
		}
		if c.Entities() != 901 {
			b.Fatalf("client has %d cubes", c.Entities())
		}
		ccubes := ecs.StoreOf[Cube](cw)
		for k, e := range ents {
			cl, _ := c.ClientEntity(e)
			v, _ := ccubes.Get(cl)
			if sv, _ := cubes.Get(e); v != sv {
				b.Fatalf("cube %d: client %+v, server %+v", k, v, sv)
			}
			for j := range 3 {
				maxErr = max(maxErr, math.Abs(float64(v.Pos[j])-ideal[k][j]))
			}
		}
		sec := float64(ticks) / 60
		kbps = float64(bytes) * 8 / 1000 / sec
		naive = float64(naiveBytes) * 8 / 1000 / sec
	}
	return kbps, naive, maxErr
}

// refProto is a protocol of Position and Owner (an entity reference).
func refProto(tb testing.TB) *replicate.Protocol {
	p := replicate.NewProtocol()
	for _, err := range []error{
		second(replicate.Component[Position](p, replicate.WithOwnRule())),
		second(replicate.Component[Owner](p, replicate.WithOwnRule())),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// BenchmarkClientReceiveRefs: client cost of applying one tick in which
// every one of n entities changes the entity its Owner refers to (the
// client maps each reference and keeps it for later rewrites).
func BenchmarkClientReceiveRefs(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		b.Run(fmt.Sprintf("refs=%d", n), func(b *testing.B) {
			p := refProto(b)
			sw := ecs.New()
			now := time.Unix(1e9, 0)
			srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: p, Now: func() time.Time { return now }})
			if err != nil {
				b.Fatal(err)
			}
			owners := ecs.Register[Owner](sw)
			ents := make([]ecs.Entity, n)
			for i := range ents {
				ents[i] = spawnRep(sw, Position{X: float64(i)}, 1)
			}
			for i, e := range ents {
				_ = owners.Set(e, Owner{E: ents[(i+1)%n]})
			}
			c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: p})
			if err != nil {
				b.Fatal(err)
			}
			se, ce := newFastPipe()
			srv.AddConn(se)
			_ = c.Connect(ce)
			k := 1
			step := func() {
				k++
				for i, e := range ents {
					owners.Ptr(e).E = ents[(i+k)%n]
				}
				now = now.Add(time.Second / 60)
				srv.Send()
				se.flow()
			}
			for i := 0; i < 20; i++ {
				step()
				c.Update()
				ce.flow()
			}
			if c.Entities() != n {
				b.Fatalf("client has %d entities, want %d", c.Entities(), n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				step()
				b.StartTimer()
				c.Update()
				b.StopTimer()
				ce.flow()
				b.StartTimer()
			}
		})
	}
}
