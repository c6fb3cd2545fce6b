package rollback_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// benchPair builds two connected, running sessions over conns a and b.
func benchPair(b *testing.B, a, c transport.PacketConn, cfg rollback.Config, poll func()) (*rollback.P2PSession, *rollback.P2PSession) {
	b.Helper()
	mk := func(conn transport.PacketConn, local int, other netip.AddrPort, seed uint64) *rollback.P2PSession {
		cc := cfg
		cc.Seed = seed
		cc.Players = []rollback.Player{{Handle: rollback.PlayerHandle(local), Kind: rollback.Local}, {Handle: rollback.PlayerHandle(1 - local), Kind: rollback.Remote, Addr: other}}
		s, err := rollback.NewP2P(conn, cc)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	s0 := mk(a, 0, c.LocalAddr(), 1)
	s1 := mk(c, 1, a.LocalAddr(), 2)
	for i := 0; i < 100000 && !(s0.Running() && s1.Running()); i++ {
		s0.Poll()
		s1.Poll()
		poll()
	}
	if !s0.Running() || !s1.Running() {
		b.Fatal("sessions did not synchronize")
	}
	return s0, s1
}

// nopGame carries out requests without game logic (checksums reported).
func nopGame(reqs []rollback.Request, s *rollback.P2PSession) {
	for _, q := range reqs {
		if q.Kind == rollback.SaveRequest {
			s.ReportChecksum(q.Frame, uint64(q.Frame), nil)
		}
	}
}

// BenchmarkP2PFrame measures one frame of session work on both peers of a
// 2-peer match on the simulated network (no loss): input, advance, network
// poll, encode and decode. Game logic is excluded. ns/op covers both peers.
func BenchmarkP2PFrame(b *testing.B) {
	net := transport.NewPacketNetwork(transport.PacketNetworkConfig{Seed: 1})
	defer net.Close()
	a, _ := net.Listen(addrOf(0))
	c, _ := net.Listen(addrOf(1))
	s0, s1 := benchPair(b, a, c, rollback.Config{DesyncInterval: 60}, func() {})
	in := make([]byte, 2)
	step := func(s *rollback.P2PSession, h rollback.PlayerHandle, f rollback.Frame) {
		binary.LittleEndian.PutUint16(in, uint16(int(f)/5%7+int(h)))
		if err := s.AddLocalInput(h, in); err != nil {
			b.Fatal(err)
		}
		reqs, err := s.AdvanceFrame()
		if err != nil {
			b.Fatal(err)
		}
		nopGame(reqs, s)
	}
	for i := 0; i < 2000; i++ { // warm up: buffers reach their steady size
		step(s0, 0, s0.CurrentFrame())
		step(s1, 1, s1.CurrentFrame())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step(s0, 0, s0.CurrentFrame())
		step(s1, 1, s1.CurrentFrame())
	}
	b.StopTimer()
	b.ReportMetric(float64(s0.Stats().Rollbacks+s1.Stats().Rollbacks)/float64(b.N+2000), "rollbacks/frame")
}

// virtNet is a minimal deterministic network on a virtual clock for the
// bandwidth benchmark (benchmarks cannot run in a synctest bubble): fixed
// one-way latency, seeded loss.
type virtNet struct {
	now     time.Time
	latency time.Duration
	loss    float64
	rnd     *rand.Rand
	conns   map[netip.AddrPort]*virtConn
}

type virtPacket struct {
	at   time.Time
	from netip.AddrPort
	data []byte
}

type virtConn struct {
	net   *virtNet
	addr  netip.AddrPort
	queue []virtPacket
	cur   []byte
	stats transport.Stats
}

func (c *virtConn) Send(to netip.AddrPort, p []byte) error {
	c.stats.PacketsSent++
	c.stats.BytesSent += uint64(len(p))
	if c.net.rnd.Float64() < c.net.loss {
		return nil
	}
	dst := c.net.conns[to]
	if dst != nil {
		dst.queue = append(dst.queue, virtPacket{at: c.net.now.Add(c.net.latency), from: c.addr, data: append([]byte(nil), p...)})
	}
	return nil
}

func (c *virtConn) Receive() (netip.AddrPort, []byte, bool) {
	if len(c.queue) == 0 || c.queue[0].at.After(c.net.now) {
		return netip.AddrPort{}, nil, false
	}
	p := c.queue[0]
	c.queue = c.queue[1:]
	c.cur = p.data
	return p.from, p.data, true
}

func (c *virtConn) LocalAddr() netip.AddrPort { return c.addr }
func (c *virtConn) Stats() transport.Stats    { return c.stats }
func (c *virtConn) Close() error              { return nil }

// BenchmarkP2PBandwidth plays one minute of a 2-peer match at 60 fps with
// 2-byte inputs changing every few frames, 100 ms round trip and 5% loss,
// and reports the UDP payload bytes one peer sends per second, without
// desync checks and with a check every 30 frames (the demo's setting).
func BenchmarkP2PBandwidth(b *testing.B) {
	for _, iv := range []int{0, 30} {
		b.Run(fmt.Sprintf("desync=%d", iv), func(b *testing.B) { benchBandwidth(b, iv) })
	}
}

func benchBandwidth(b *testing.B, desyncInterval int) {
	var perPeer, pps float64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		vn := &virtNet{now: time.Unix(1e9, 0), latency: 50 * time.Millisecond, loss: 0.05, rnd: rand.New(rand.NewPCG(1, 2)), conns: map[netip.AddrPort]*virtConn{}}
		a := &virtConn{net: vn, addr: addrOf(0)}
		c := &virtConn{net: vn, addr: addrOf(1)}
		vn.conns[a.addr], vn.conns[c.addr] = a, c
		cfg := rollback.Config{Now: func() time.Time { return vn.now }, InputDelay: 2, DesyncInterval: desyncInterval}
		s0, s1 := benchPair(b, a, c, cfg, func() { vn.now = vn.now.Add(time.Millisecond) })
		start := a.stats.BytesSent
		startP := a.stats.PacketsSent
		frames := 0
		in := make([]byte, 2)
		rnd := rand.New(rand.NewPCG(3, 4))
		held := [2]uint16{}
		for tick := 0; tick < 60*60; tick++ {
			for h, s := range []*rollback.P2PSession{s0, s1} {
				if rnd.IntN(6) == 0 { // a new key combination every ~6 frames
					held[h] = uint16(rnd.IntN(16))
				}
				binary.LittleEndian.PutUint16(in, held[h])
				_ = s.AddLocalInput(rollback.PlayerHandle(h), in)
				reqs, err := s.AdvanceFrame()
				if err != nil {
					b.Fatal(err)
				}
				nopGame(reqs, s)
			}
			frames++
			vn.now = vn.now.Add(time.Second / 60)
		}
		if s0.CurrentFrame() < 3000 {
			b.Fatalf("only %d frames advanced in 3600 ticks", s0.CurrentFrame())
		}
		perPeer = float64(a.stats.BytesSent-start) / 60
		pps = float64(a.stats.PacketsSent-startP) / 60
	}
	b.ReportMetric(perPeer, "payload-bytes/s/peer")
	b.ReportMetric(pps, "packets/s/peer")
}
