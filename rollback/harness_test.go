package rollback_test

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/rewindgo/rewind/internal/xxh64"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

// stubState is the game state of the tests: a frame counter, one value per
// player and a mixing accumulator, so that any input difference shows up.
type stubState struct {
	Frame rollback.Frame
	Pos   [rollback.MaxPlayers]int64
	Acc   uint64
}

func (s *stubState) advance(ins []rollback.Input) {
	for i, in := range ins {
		var v int64
		if len(in.Bytes) >= 2 {
			v = int64(int16(binary.LittleEndian.Uint16(in.Bytes)))
		}
		if in.Status == rollback.Disconnected {
			v = -7
		}
		s.Pos[i] += v
		s.Acc = xxh64.Mix64(s.Acc ^ uint64(s.Pos[i]) ^ uint64(i)<<56)
	}
	s.Frame++
}

func (s *stubState) checksum() uint64 {
	var b [8 + 8*rollback.MaxPlayers + 8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(s.Frame))
	for i, p := range s.Pos {
		binary.LittleEndian.PutUint64(b[8+8*i:], uint64(p))
	}
	binary.LittleEndian.PutUint64(b[8+8*rollback.MaxPlayers:], s.Acc)
	return xxh64.Sum64(b[:])
}

// stubGame carries out requests on a stubState and keeps saved states.
type stubGame struct {
	t        testing.TB
	state    stubState
	saved    map[rollback.Frame]stubState
	confirm  map[rollback.Frame]uint64 // checksum of the state at each frame once final
	corrupt  func(*stubState)          // optional: deliberate non-determinism
	names    [2]string                 // names of the Pos and Acc parts; default "Pos", "Acc"
	loads    int
	saves    int
	advances int
	// maxLoad is the deepest load: frames between the state before a Load
	// and the frame it loads.
	maxLoad int
}

func newStubGame(t testing.TB) *stubGame {
	return &stubGame{t: t, saved: map[rollback.Frame]stubState{}, confirm: map[rollback.Frame]uint64{}, names: [2]string{"Pos", "Acc"}}
}

type reporter interface {
	ReportChecksum(rollback.Frame, uint64, []rollback.Part)
}

func (g *stubGame) run(reqs []rollback.Request, r reporter) {
	g.t.Helper()
	for _, q := range reqs {
		switch q.Kind {
		case rollback.SaveRequest:
			if g.state.Frame != q.Frame {
				g.t.Fatalf("save %d while the state is at frame %d", q.Frame, g.state.Frame)
			}
			g.saved[q.Frame] = g.state
			g.saves++
			if r != nil {
				sum := g.state.checksum()
				r.ReportChecksum(q.Frame, sum, []rollback.Part{{Name: g.names[0], Sum: xxh64.Mix64(uint64(g.state.Pos[0]) ^ uint64(g.state.Pos[1])<<20)}, {Name: g.names[1], Sum: g.state.Acc}})
			}
		case rollback.LoadRequest:
			st, ok := g.saved[q.Frame]
			if !ok {
				g.t.Fatalf("load of frame %d, never saved", q.Frame)
			}
			g.maxLoad = max(g.maxLoad, int(g.state.Frame-q.Frame))
			g.state = st
			g.loads++
		case rollback.LoadStateRequest:
			st, err := decodeStubState(q.State)
			if err != nil || st.Frame != q.Frame {
				g.t.Fatalf("load-state of frame %d: %v (state of frame %d)", q.Frame, err, st.Frame)
			}
			g.state = st
			g.loads++
		case rollback.AdvanceRequest:
			if g.state.Frame != q.Frame {
				g.t.Fatalf("advance %d while the state is at frame %d", q.Frame, g.state.Frame)
			}
			g.state.advance(q.Inputs)
			if g.corrupt != nil {
				g.corrupt(&g.state)
			}
			g.advances++
		}
	}
}

// peer is one P2P session with its game in a simulated match.
type peer struct {
	s     *rollback.P2PSession
	g     *stubGame
	conn  transport.PacketConn
	input func(frame rollback.Frame, h rollback.PlayerHandle) []byte
	// finals records the checksum of every state whose frame is confirmed.
	finals map[rollback.Frame]uint64
	events []rollback.Event
}

func addrOf(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), 7000)
}

// defaultInput: 2-byte inputs that change every few frames, differently per player.
func defaultInput(f rollback.Frame, h rollback.PlayerHandle) []byte {
	v := uint16((int(f)/7 + int(h)*3) % 5)
	return binary.LittleEndian.AppendUint16(nil, v)
}

// newMatch creates n peers (one local player each) on net, with cfg applied to each.
func newMatch(t testing.TB, net *transport.PacketNetwork, n int, cfg rollback.Config) []*peer {
	t.Helper()
	return newMatchWith(t, net, n, cfg, nil)
}

// newMatchWith is newMatch with tweak (when not nil) changing the config of
// peer i before its session is created.
func newMatchWith(t testing.TB, net *transport.PacketNetwork, n int, cfg rollback.Config, tweak func(i int, c *rollback.Config)) []*peer {
	t.Helper()
	peers := make([]*peer, n)
	for i := range peers {
		conn, err := net.Listen(addrOf(i))
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.NumPlayers = n
		c.Players = nil
		for j := 0; j < n; j++ {
			if j == i {
				c.Players = append(c.Players, rollback.Player{Handle: rollback.PlayerHandle(j), Kind: rollback.Local})
			} else {
				c.Players = append(c.Players, rollback.Player{Handle: rollback.PlayerHandle(j), Kind: rollback.Remote, Addr: addrOf(j)})
			}
		}
		c.Seed = uint64(i + 1)
		if tweak != nil {
			tweak(i, &c)
		}
		s, err := rollback.NewP2P(conn, c)
		if err != nil {
			t.Fatal(err)
		}
		peers[i] = &peer{s: s, g: newStubGame(t), conn: conn, input: defaultInput, finals: map[rollback.Frame]uint64{}}
	}
	return peers
}

// step runs one frame of the game loop on p.
func (p *peer) step(t testing.TB) {
	t.Helper()
	if !p.s.Running() {
		p.s.Poll()
		p.events = append(p.events, p.s.Events()...)
		return
	}
	for _, h := range p.s.LocalHandles() {
		if err := p.s.AddLocalInput(h, p.input(p.s.CurrentFrame(), h)); err != nil {
			t.Fatal(err)
		}
	}
	reqs, err := p.s.AdvanceFrame()
	if err != nil {
		t.Fatalf("AdvanceFrame: %v", err)
	}
	p.g.run(reqs, p.s)
	p.events = append(p.events, p.s.Events()...)
	// Record the checksum of confirmed states: after the requests, the
	// saved state of every frame up to confirmed+1 is final.
	c := p.s.ConfirmedFrame() + 1
	for f := c; f >= 0 && p.finals[f] == 0; f-- {
		if st, ok := p.g.saved[f]; ok {
			p.finals[f] = st.checksum()
		}
	}
}

// runMatch steps every peer once per frame period until each has advanced
// to frames (or the virtual time limit passes).
func runMatch(t testing.TB, peers []*peer, frames rollback.Frame, limit time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		done := true
		for _, p := range peers {
			if p.s.CurrentFrame() < frames {
				done = false
			}
		}
		if done {
			return
		}
		if time.Since(start) > limit {
			for i, p := range peers {
				t.Logf("peer %d: %+v", i, p.s.Stats())
			}
			t.Fatalf("match did not reach frame %d within %v", frames, limit)
		}
		for _, p := range peers {
			if p.s.CurrentFrame() < frames {
				p.step(t)
			} else {
				p.s.Poll()
			}
		}
		time.Sleep(time.Second / 60)
	}
}

// drainMatch keeps polling (advancing no further) so that every peer
// confirms the last frames.
func drainMatch(t testing.TB, peers []*peer, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		for _, p := range peers {
			p.s.Poll()
		}
		time.Sleep(time.Second / 60)
	}
}

// compareFinals checks that all peers agree on every confirmed frame's
// checksum, and returns how many frames were compared.
func compareFinals(t testing.TB, peers []*peer) int {
	t.Helper()
	n := 0
	for f, sum := range peers[0].finals {
		for i, p := range peers[1:] {
			if o, ok := p.finals[f]; ok {
				if o != sum {
					t.Fatalf("frame %d: peer 0 checksum %#x, peer %d %#x", f, sum, i+1, o)
				}
				n++
			}
		}
	}
	return n
}

func countEvents(evs []rollback.Event, k rollback.EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}
