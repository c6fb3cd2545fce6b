package replicate_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// streamConn models a WebSocket (package transport/websocket) on a
// transport.MessageNetwork: every channel travels on the one reliable
// ordered stream, so a lost message is retransmitted and holds back all
// that follow, whatever their channel, as TCP does. The channel is the
// first byte, as on the wire of transport/websocket.
type streamConn struct {
	transport.MessageConn
	buf []byte
}

func (s *streamConn) Send(ch transport.Channel, msg []byte) error {
	if !ch.Valid() {
		return transport.ErrInvalidChannel
	}
	s.buf = append(append(s.buf[:0], byte(ch)), msg...)
	return s.MessageConn.Send(transport.ReliableOrdered, s.buf)
}

func (s *streamConn) Receive() (transport.Channel, []byte, bool) {
	_, m, ok := s.MessageConn.Receive()
	if !ok || len(m) == 0 {
		return 0, nil, false
	}
	return transport.Channel(m[0]), m[1:], true
}

func (s *streamConn) MaxUnreliableSize() int { return s.MessageConn.MaxUnreliableSize() - 1 }

type streamListener struct {
	*transport.MessageNetworkListener
}

func (l streamListener) Accept(ctx context.Context) (transport.MessageConn, error) {
	c, err := l.MessageNetworkListener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return &streamConn{MessageConn: c}, nil
}

// linkFigures is what TestStreamVersusDatagrams measures of one run.
type linkFigures struct {
	name                 string
	appOut, wireOut      float64 // server to client, bytes/s: messages; link transmissions (retransmissions included)
	wireIn               float64 // client to server link bytes/s
	p50, p95, p99, worst int     // staleness of the client's values, ticks
	converge             int     // ticks from the last change to equal states
}

// TestStreamVersusDatagrams measures what a stream (WebSocket over TCP)
// costs replication against QUIC's datagrams on the same lossy link:
// 100 ms RTT (50 ms each way) and 10% loss both ways, 60 s at 60 Hz of 16
// entities whose Position changes every tick (X = the tick), one spawn
// and one despawn a second. Staleness is, per client tick and entity,
// the server's tick minus the tick of the value the client shows.
//
// The stream model is message-granular TCP: a lost message is resent
// after the retransmission timeout and everything behind it waits. Two
// timeouts bracket TCP: the round trip (smoothed RTT + 4 rttvar, as fast
// retransmit after three duplicate acknowledgements roughly achieves on a
// 60 Hz flow) and Linux's minimum RTO of 200 ms. Not modelled:
// congestion control (TCP halves its window at each loss; at 10% loss
// the Mathis bound, 1.22 MSS/(RTT sqrt p) = 56 KB/s, is above these
// flows) and transport/websocket's sender backlog (it only drops when
// the socket backs up, which an uncapped link never does).
func TestStreamVersusDatagrams(t *testing.T) {
	if testing.Short() {
		t.Skip("60 s of virtual time, three times")
	}
	var rows []linkFigures
	for _, sc := range []struct {
		name   string
		stream bool
		minRTO time.Duration
	}{
		{"QUIC: datagrams + streams", false, 0},
		{"stream, RTO ~ RTT", true, 0},
		{"stream, RTO >= 200 ms", true, 200 * time.Millisecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			rows = append(rows, runLossyLink(t, sc.name, sc.stream, sc.minRTO))
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "100 ms RTT, 10%% loss both ways, 16 entities changing every tick, 60 Hz, 60 s\n")
	fmt.Fprintf(&b, "%-26s %10s %10s %10s %26s %9s\n", "", "msg B/s", "wire B/s", "acks B/s", "staleness p50/95/99/max", "converge")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-26s %10.0f %10.0f %10.0f %14d/%d/%d/%d ticks %5d ticks\n",
			r.name, r.appOut, r.wireOut, r.wireIn, r.p50, r.p95, r.p99, r.worst, r.converge)
	}
	t.Log("\n" + b.String())
	q, s := rows[0], rows[1]
	if s.p99 <= q.p99 {
		t.Errorf("stream p99 staleness %d ticks not above the datagrams' %d: the model lost its head-of-line blocking", s.p99, q.p99)
	}
}

func runLossyLink(t *testing.T, name string, stream bool, minRTO time.Duration) linkFigures {
	const (
		ents  = 16
		ticks = 3600
	)
	tp := newProto(t)
	net := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 7, MinRTO: minRTO})
	mln, err := net.Listen(netip.AddrPort{})
	if err != nil {
		t.Fatal(err)
	}
	var ln transport.MessageListener = mln
	if stream {
		ln = streamListener{mln}
	}
	sw := ecs.New()
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: tp.p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	mconn, err := net.Dial(ctx, mln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var conn transport.MessageConn = mconn
	if stream {
		conn = &streamConn{MessageConn: mconn}
	}
	cw := ecs.New()
	c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProto(t).p})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(conn); err != nil {
		t.Fatal(err)
	}
	link := transport.LinkConfig{Latency: 50 * time.Millisecond, Loss: 0.1}
	net.SetLink(mconn.LocalAddr(), mln.Addr(), link)
	net.SetLink(mln.Addr(), mconn.LocalAddr(), link)
	step := func() {
		srv.Send()
		c.Update()
		time.Sleep(time.Second / 60)
	}
	for k := 0; c.State() != replicate.Connected; k++ {
		if k == 600 {
			t.Fatal("not connected")
		}
		step()
	}
	pos := ecs.Register[Position](sw)
	var live []ecs.Entity
	for range ents {
		live = append(live, spawnRep(sw, Position{}, 1))
	}
	for range 60 {
		step()
	}
	srvAddr, cliAddr := mln.Addr(), mconn.LocalAddr()
	out0, in0 := net.LinkStats(srvAddr, cliAddr).SentBytes, net.LinkStats(cliAddr, srvAddr).SentBytes
	app0 := srvConnStats(srv).BytesOut
	var stale []int
	cpos := ecs.Register[Position](cw)
	for k := 1; k <= ticks; k++ {
		if k%60 == 0 { // one despawn and one spawn a second
			_ = sw.Despawn(live[0])
			live = append(live[1:], spawnRep(sw, Position{}, 1))
		}
		for _, e := range live {
			_ = pos.Set(e, Position{X: float64(k)})
		}
		step()
		for e, p := range cpos.All() {
			if _, ok := c.ServerEntity(e); ok && p.X > 0 {
				stale = append(stale, k-int(p.X))
			}
		}
	}
	f := linkFigures{name: name}
	secs := float64(ticks) / 60
	f.appOut = float64(srvConnStats(srv).BytesOut-app0) / secs
	f.wireOut = float64(net.LinkStats(srvAddr, cliAddr).SentBytes-out0) / secs
	f.wireIn = float64(net.LinkStats(cliAddr, srvAddr).SentBytes-in0) / secs
	slices.Sort(stale)
	pct := func(p float64) int { return stale[int(p*float64(len(stale)-1))] }
	f.p50, f.p95, f.p99, f.worst = pct(0.5), pct(0.95), pct(0.99), stale[len(stale)-1]
	for f.converge = 0; diffViews(serverView(&harness{sw: sw}, nil), clientView(c, cw)) != ""; f.converge++ {
		if f.converge == 600 {
			t.Fatalf("%s: not converged 10 s after the last change", name)
		}
		step()
	}
	c.Close()
	srv.Close()
	cancel()
	mln.Close()
	<-served
	return f
}

// srvConnStats returns the server's figures of its one client.
func srvConnStats(srv *replicate.Server) replicate.ConnectionStats {
	ids := srv.Clients()
	if len(ids) != 1 {
		return replicate.ConnectionStats{}
	}
	st, _ := srv.Stats(ids[0])
	return st
}
