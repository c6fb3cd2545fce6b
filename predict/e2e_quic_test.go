package predict_test

import (
	"context"
	"crypto/tls"
	"runtime"
	"testing"
	"time"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/quic"
)

// serveFrameQUIC starts a frameServer serving a QUIC listener on
// loopback until ctx ends; Serve's result arrives on served.
func serveFrameQUIC(t *testing.T, ctx context.Context) (s *frameServer, ln *quic.Listener, cliTLS *tls.Config, served chan error) {
	t.Helper()
	srvTLS, cliTLS, err := quic.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	if ln, err = quic.Listen(ctx, "127.0.0.1:0", quic.Config{TLS: srvTLS}); err != nil {
		t.Fatal(err)
	}
	s = newFrameServer(t)
	served = make(chan error, 1)
	go func() { served <- s.srv.Serve(ctx, ln) }()
	return s, ln, cliTLS, served
}

// TestFrameOverQUIC runs the whole frame end to end over real QUIC on
// loopback, in real time: a ServerFrame and two ClientFrames, each
// client's link through a transport.Proxy (20 ms ± 5 ms each way, 5%
// loss), 180 ticks at 60 Hz with random inputs. After every frame each
// client's history at every complete server tick is compared with the
// server's state at that tick, exactly; the clients run ahead of the
// server by about the round trip, the server receives their inputs, and
// cancelling the context leaves no goroutine behind.
func TestFrameOverQUIC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 3 seconds in real time")
	}
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, ln, cliTLS, served := serveFrameQUIC(t, ctx)
	link := transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.05}
	r := &frameRig{t: t, server: s}
	var conns []*quic.Conn
	for i := range 2 {
		p, err := transport.NewProxy(ctx, transport.ProxyConfig{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:0",
			Target: ln.Addr().String(), Up: link, Down: link, Seed: uint64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
		conn, err := quic.Dial(dctx, p.Addr().String(), quic.Config{TLS: cliTLS})
		dcancel()
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		r.clients = append(r.clients, newFrameClient(t, i, conn, randomInputs(uint64(10+i))))
	}
	const step = time.Second / 60
	r.connect(step)
	last, next := time.Now(), time.Now()
	for r.tick < 180 {
		now := time.Now()
		r.frame(now.Sub(last))
		last = now
		next = next.Add(step)
		time.Sleep(time.Until(next))
	}
	for _, c := range r.clients {
		st, in := c.tl.Stats(), s.frame.Buffer().Stats(c.rc.ID())
		t.Logf("client %d: checked %d complete ticks (last %v), rollbacks %d, mispredictions %d, ahead %d, rtt %v, jitter %v, inputs received %d missing %d late %d",
			c.idx, c.checked, c.last, st.Rollbacks, st.Types[0].Mispredictions, c.frame.Ahead(), c.conn.Stats().RTT, c.frame.Jitter(), in.Received, in.Missing, in.Late)
		if c.checked < 120 || c.last < 160 {
			t.Errorf("client %d checked %d complete ticks, the last %v", c.idx, c.checked, c.last)
		}
		if st.Rollbacks == 0 || c.frame.Ahead() < 2 || c.frame.Ahead() > 20 || in.Received < 150 {
			t.Errorf("client %d: rollbacks %d, ahead %d, inputs received %d", c.idx, st.Rollbacks, c.frame.Ahead(), in.Received)
		}
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the context was cancelled")
	}
	for _, c := range r.clients {
		c.rc.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	s.srv.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
