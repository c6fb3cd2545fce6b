package webrtc_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewindgo/rewind/contrib/webrtc"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/signal"
)

// signalServer starts a signalling server on loopback and returns the URL
// of room name for n peers.
func signalServer(t testing.TB, name string, n int) string {
	t.Helper()
	srv := signal.NewServer(signal.ServerConfig{})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return fmt.Sprintf("ws%s/room/%s?n=%d", strings.TrimPrefix(hs.URL, "http"), name, n)
}

// dialAll connects n native peers through the room at url.
func dialAll(t testing.TB, url string, n int) []*webrtc.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conns := make([]*webrtc.Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { conns[i], errs[i] = webrtc.Dial(ctx, url, webrtc.Config{Loopback: true}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("peer %d: %v", i, err)
		}
		t.Cleanup(func() { conns[i].Close() })
	}
	byIndex := make([]*webrtc.Conn, n)
	for _, c := range conns {
		if c.N() != n || byIndex[c.Index()] != nil {
			t.Fatalf("index %d of %d twice", c.Index(), c.N())
		}
		byIndex[c.Index()] = c
	}
	return byIndex
}

// receive waits for the next datagram on c.
func receive(t *testing.T, c *webrtc.Conn) (from string, payload string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := c.WaitReceive(ctx); err != nil {
		t.Fatalf("peer %d: %v", c.Index(), err)
	}
	a, p, ok := c.Receive()
	if !ok {
		t.Fatalf("peer %d: nothing after WaitReceive", c.Index())
	}
	return a.String(), string(p)
}

func TestDatagramsAndStats(t *testing.T) {
	cs := dialAll(t, signalServer(t, "d", 3), 3)
	for i, c := range cs {
		if c.LocalAddr() != webrtc.PeerAddr(i) {
			t.Fatalf("peer %d: LocalAddr %v", i, c.LocalAddr())
		}
	}
	if err := cs[0].Send(webrtc.PeerAddr(2), []byte("hello 2")); err != nil {
		t.Fatal(err)
	}
	if from, p := receive(t, cs[2]); from != webrtc.PeerAddr(0).String() || p != "hello 2" {
		t.Fatalf("peer 2 got %q from %s", p, from)
	}
	if err := cs[2].Send(webrtc.PeerAddr(1), []byte("hello 1")); err != nil {
		t.Fatal(err)
	}
	if from, p := receive(t, cs[1]); from != webrtc.PeerAddr(2).String() || p != "hello 1" {
		t.Fatalf("peer 1 got %q from %s", p, from)
	}
	// Refused sends are counted and change nothing.
	big := make([]byte, transport.MaxPacketSize+1)
	for _, c := range []struct {
		to   int
		p    []byte
		want error
	}{{1, big, transport.ErrTooLarge}, {0, []byte("x"), transport.ErrInvalidAddr}, {5, []byte("x"), transport.ErrInvalidAddr}} {
		if err := cs[0].Send(webrtc.PeerAddr(c.to), c.p); !errors.Is(err, c.want) {
			t.Errorf("Send to %d: %v, want %v", c.to, err, c.want)
		}
	}
	st := cs[0].Stats()
	if st.PacketsSent != 1 || st.BytesSent != 7 || st.DroppedOversize != 1 || st.SendErrors != 2 {
		t.Fatalf("peer 0 stats %+v", st)
	}
	if st := cs[2].Stats(); st.PacketsReceived != 1 || st.BytesReceived != 7 {
		t.Fatalf("peer 2 stats %+v", st)
	}
	// A datagram over MaxPacketSize from a (hostile) peer is dropped and
	// counted; the next one is received.
	webrtc.Deliver(cs[1], 2, big)
	webrtc.Deliver(cs[1], 2, []byte("after"))
	if from, p := receive(t, cs[1]); from != webrtc.PeerAddr(2).String() || p != "after" {
		t.Fatalf("peer 1 got %q from %s", p, from)
	}
	if st := cs[1].Stats(); st.DroppedOversize != 1 || st.PacketsReceived != 2 {
		t.Fatalf("peer 1 stats %+v", st)
	}
	cs[0].Close()
	if err := cs[0].Send(webrtc.PeerAddr(1), []byte("x")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
	if _, _, ok := cs[0].Receive(); ok {
		t.Fatal("Receive after Close")
	}
}

// TestReceiveQueueBounded: datagrams beyond Config.ReceiveQueue are
// dropped and counted.
func TestReceiveQueueBounded(t *testing.T) {
	url := signalServer(t, "q", 2)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var a, b *webrtc.Conn
	var errA, errB error
	var wg sync.WaitGroup
	wg.Go(func() { a, errA = webrtc.Dial(ctx, url, webrtc.Config{Loopback: true}) })
	wg.Go(func() { b, errB = webrtc.Dial(ctx, url, webrtc.Config{Loopback: true, ReceiveQueue: 4}) })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	defer a.Close()
	defer b.Close()
	for i := range 20 {
		if err := a.Send(b.LocalAddr(), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitStats(t, b, 20)
	if st := b.Stats(); st.PacketsReceived != 4 || st.DroppedQueueFull != 16 {
		t.Fatalf("stats %+v, want 4 received, 16 dropped", st)
	}
	n := 0
	for {
		if _, _, ok := b.Receive(); !ok {
			break
		}
		n++
	}
	if n != 4 {
		t.Fatalf("received %d", n)
	}
}

// waitStats polls until c accounted for total datagrams (received or
// dropped): a full queue has no arrival to wait on.
func waitStats(t *testing.T, c *webrtc.Conn, total uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for st := c.Stats(); st.PacketsReceived+st.DroppedQueueFull < total; st = c.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v after 10s", st)
		}
		time.Sleep(time.Millisecond)
	}
}

// game is a tiny deterministic game for a rollback session: every player
// moves a counter by its input.
type game struct {
	pos   [4]int32
	frame int32
}

func (g game) sum() uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, v := range append(g.pos[:], g.frame) {
		binary.LittleEndian.PutUint32(b[:], uint32(v))
		h.Write(b[:])
	}
	return h.Sum64()
}

// peer is one player's session over its conn.
type peer struct {
	s     *rollback.P2PSession
	conn  *webrtc.Conn
	g     game
	saved map[rollback.Frame]game
}

func (p *peer) step(t *testing.T) {
	for _, h := range p.s.LocalHandles() {
		f := int(p.s.CurrentFrame())
		_ = p.s.AddLocalInput(h, []byte{byte((f/7 + int(h)) % 5)}) // refused after the end frame
	}
	reqs, err := p.s.AdvanceFrame()
	if errors.Is(err, rollback.ErrNotSynchronized) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		switch r.Kind {
		case rollback.SaveRequest:
			p.saved[r.Frame] = p.g
			p.s.ReportChecksum(r.Frame, p.g.sum(), nil)
		case rollback.LoadRequest:
			p.g = p.saved[r.Frame]
		case rollback.AdvanceRequest:
			for h, in := range r.Inputs {
				if len(in.Bytes) > 0 {
					p.g.pos[h] += int32(in.Bytes[0]) - 2
				}
			}
			p.g.frame++
		}
	}
}

// playMatch runs a rollback P2P match of frames frames over conns and
// checks that every peer finished with the same state at every frame.
func playMatch(t *testing.T, conns []*webrtc.Conn, frames int) {
	n := len(conns)
	peers := make([]*peer, n)
	for i, c := range conns {
		cfg := rollback.Config{NumPlayers: n, InputDelay: 1, DesyncInterval: 10, EndFrame: frames}
		for h := range n {
			pl := rollback.Player{Handle: rollback.PlayerHandle(h), Kind: rollback.Local}
			if h != c.Index() {
				pl.Kind, pl.Addr = rollback.Remote, webrtc.PeerAddr(h)
			}
			cfg.Players = append(cfg.Players, pl)
		}
		s, err := rollback.NewP2P(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		peers[i] = &peer{s: s, conn: c, saved: map[rollback.Frame]game{}}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		done := true
		for _, p := range peers {
			if !p.s.Finished() {
				done = false
				p.step(t)
			} else {
				p.s.Poll() // answer the others
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			for i, p := range peers {
				t.Logf("peer %d: frame %d, confirmed %d", i, p.s.CurrentFrame(), p.s.ConfirmedFrame())
			}
			t.Fatal("match not finished after 60s")
		}
		// Pace the loop on traffic (bounded, so that retries still run).
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Millisecond)
		_ = peers[0].conn.WaitReceive(ctx)
		cancel()
	}
	for f := range rollback.Frame(frames + 1) {
		want := peers[0].saved[f].sum()
		for i, p := range peers[1:] {
			if got := p.saved[f].sum(); got != want {
				t.Fatalf("frame %d: peer %d checksum %x, peer 0 %x", f, i+1, got, want)
			}
		}
	}
	for i, p := range peers {
		st := p.s.Stats()
		if st.Desyncs != 0 {
			t.Fatalf("peer %d: %d desyncs", i, st.Desyncs)
		}
		cs := p.conn.Stats()
		t.Logf("peer %d: frame %d, %d rollbacks, sent %d datagrams (%d B), received %d", i, st.Frame, st.Rollbacks,
			cs.PacketsSent, cs.BytesSent, cs.PacketsReceived)
	}
	if final := peers[0].saved[rollback.Frame(frames)]; final.frame != int32(frames) {
		t.Fatalf("final state at frame %d", final.frame)
	}
}

// TestRollbackTwoPeers and TestRollbackThreePeers: native pion peers meet
// through a signalling server on loopback and play a rollback match over
// their data channels; every confirmed state agrees.
func TestRollbackTwoPeers(t *testing.T) {
	playMatch(t, dialAll(t, signalServer(t, "two", 2), 2), 300)
}

func TestRollbackThreePeers(t *testing.T) {
	playMatch(t, dialAll(t, signalServer(t, "three", 3), 3), 300)
}

// TestPeerLeavesDuringSetup: a peer that leaves the room before sending
// its description fails the other's Dial with ErrPeerLeft.
func TestPeerLeavesDuringSetup(t *testing.T) {
	url := signalServer(t, "leave", 2)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// Peer 0 joins the room directly: it should offer, but leaves.
	zero, err := signal.Join(ctx, url, signal.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		c, err := webrtc.Dial(ctx, url, webrtc.Config{Loopback: true})
		if err == nil {
			c.Close()
		}
		errc <- err
	}()
	if m, err := zero.Receive(ctx); err != nil || m.Type != signal.TypeReady {
		t.Fatalf("%+v, %v", m, err)
	}
	zero.Close()
	if err := <-errc; !errors.Is(err, webrtc.ErrPeerLeft) {
		t.Fatalf("Dial: %v, want ErrPeerLeft", err)
	}
}
