package quic_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/quic"
)

// server starts a listener on loopback with a fresh self-signed certificate
// and returns it with a client config that trusts it.
func server(t *testing.T, ctx context.Context, cfg quic.Config) (*quic.Listener, quic.Config) {
	t.Helper()
	srvTLS, cliTLS, err := quic.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS = srvTLS
	ln, err := quic.Listen(ctx, "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, quic.Config{TLS: cliTLS}
}

// connect dials ln and accepts the conn on the server side.
func connect(t *testing.T, ln *quic.Listener, addr string, cfg quic.Config) (*quic.Conn, transport.MessageConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, err := quic.Dial(ctx, addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func msg(tag byte, i int) []byte { return binary.BigEndian.AppendUint32([]byte{tag}, uint32(i)) }

type rec struct {
	ch  transport.Channel
	tag byte
	i   int
}

// receive collects messages from c until cond is satisfied, failing after a
// few seconds.
func receive(t *testing.T, c transport.MessageConn, cond func([]rec) bool) []rec {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []rec
	for !cond(got) {
		if err := c.WaitReceive(ctx); err != nil {
			t.Fatalf("WaitReceive after %d messages: %v", len(got), err)
		}
		for {
			ch, p, ok := c.Receive()
			if !ok {
				break
			}
			if len(p) < 5 {
				t.Fatalf("short message %x", p)
			}
			got = append(got, rec{ch, p[0], int(binary.BigEndian.Uint32(p[1:]))})
		}
	}
	return got
}

// check verifies what one side received from a peer that sent n messages
// on each channel, tagged tag: reliable ones exactly once (ordered ones in
// order), unreliable ones at most once.
func check(t *testing.T, got []rec, tag byte, n int) {
	t.Helper()
	var ordered, unordered []int
	seen := map[int]bool{}
	for _, r := range got {
		if r.tag != tag {
			t.Fatalf("message from the wrong peer: %+v", r)
		}
		switch r.ch {
		case transport.ReliableOrdered:
			ordered = append(ordered, r.i)
		case transport.ReliableUnordered:
			unordered = append(unordered, r.i)
		case transport.Unreliable:
			if seen[r.i] {
				t.Fatalf("unreliable message %d received twice", r.i)
			}
			seen[r.i] = true
		}
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(ordered, want) {
		t.Fatalf("ordered: got %v, want 0..%d in order", ordered, n-1)
	}
	if slices.Sort(unordered); !slices.Equal(unordered, want) {
		t.Fatalf("unordered: got %v, want 0..%d once each", unordered, n-1)
	}
	if len(seen) == 0 {
		t.Fatal("no unreliable message arrived over loopback")
	}
}

// allReliable is satisfied once 2n reliable messages and at least one
// unreliable message have arrived.
func allReliable(n int) func([]rec) bool {
	return func(got []rec) bool {
		k, u := 0, 0
		for _, r := range got {
			if r.ch.Reliable() {
				k++
			} else {
				u++
			}
		}
		return k >= 2*n && u > 0
	}
}

func TestEndToEndTwoClients(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{})
	addr := ln.Addr().String()
	c1, s1 := connect(t, ln, addr, cfg)
	c2, s2 := connect(t, ln, addr, cfg)
	if s1.RemoteAddr().Port() != c1.LocalAddr().Port() || c1.RemoteAddr() != ln.Addr() {
		t.Fatalf("addresses: client %v -> %v, server sees %v", c1.LocalAddr(), c1.RemoteAddr(), s1.RemoteAddr())
	}
	const N = 50
	pairs := []struct {
		a, b   transport.MessageConn
		ta, tb byte
	}{{c1, s1, 'a', 'A'}, {c2, s2, 'b', 'B'}}
	for _, p := range pairs {
		for i := range N {
			for ch := range transport.Channel(transport.NumChannels) {
				if err := p.a.Send(ch, msg(p.ta, i)); err != nil {
					t.Fatal(err)
				}
				if err := p.b.Send(ch, msg(p.tb, i)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, p := range pairs {
		check(t, receive(t, p.b, allReliable(N)), p.ta, N)
		check(t, receive(t, p.a, allReliable(N)), p.tb, N)
	}
	st := c1.Stats()
	if st.RTT <= 0 || st.Channels[transport.ReliableOrdered].Sent != N || st.Channels[transport.ReliableUnordered].Received != N {
		t.Fatalf("client stats %+v", st)
	}
}

func TestLargeReliableMessages(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{})
	c, s := connect(t, ln, ln.Addr().String(), cfg)
	big := make([]byte, 200<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, ch := range []transport.Channel{transport.ReliableOrdered, transport.ReliableUnordered} {
		for _, pair := range [][2]transport.MessageConn{{c, s}, {s, c}} {
			if err := pair[0].Send(ch, big); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			if err := pair[1].WaitReceive(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
			gotCh, p, ok := pair[1].Receive()
			if !ok || gotCh != ch || !bytes.Equal(p, big) {
				t.Fatalf("%v: got %v, %d bytes, %v", ch, gotCh, len(p), ok)
			}
		}
	}
}

func TestSizeLimits(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{})
	cfg.Limits.MaxMessageSize = 1000
	c, s := connect(t, ln, ln.Addr().String(), cfg)
	if got := c.MaxUnreliableSize(); got != transport.DefaultMaxUnreliableSize {
		t.Fatalf("MaxUnreliableSize() = %d, want %d on loopback", got, transport.DefaultMaxUnreliableSize)
	}
	err := c.Send(transport.Unreliable, make([]byte, c.MaxUnreliableSize()+1))
	var se *transport.SizeError
	if !errors.Is(err, transport.ErrTooLarge) || !errors.As(err, &se) || se.Limit != c.MaxUnreliableSize() {
		t.Fatalf("oversize unreliable Send = %v", err)
	}
	if err := c.Send(transport.ReliableOrdered, make([]byte, 1001)); !errors.Is(err, transport.ErrTooLarge) {
		t.Fatalf("oversize reliable Send = %v", err)
	}
	if err := c.Send(transport.Channel(9), nil); !errors.Is(err, transport.ErrInvalidChannel) {
		t.Fatalf("Send on channel 9 = %v", err)
	}
	full := bytes.Repeat([]byte{'u'}, c.MaxUnreliableSize())
	for range 3 { // loopback rarely loses, but a datagram may be dropped
		if err := c.Send(transport.Unreliable, full); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.WaitReceive(ctx); err != nil {
		t.Fatal(err)
	}
	if ch, p, _ := s.Receive(); ch != transport.Unreliable || !bytes.Equal(p, full) {
		t.Fatalf("got %v, %d bytes", ch, len(p))
	}
	if st := c.Stats().Channels; st[transport.Unreliable].DroppedOversize != 1 || st[transport.ReliableOrdered].DroppedOversize != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCloseWithReason(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{})
	c, s := connect(t, ln, ln.Addr().String(), cfg)
	if err := s.Send(transport.ReliableOrdered, msg('s', 1)); err != nil {
		t.Fatal(err)
	}
	receive(t, c, func(got []rec) bool { return len(got) == 1 })
	if err := s.CloseWithReason("kicked: cheating"); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(transport.ReliableOrdered, nil); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Send after close = %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("client not told of the close")
	}
	var ce *transport.CloseError
	if err := c.Err(); !errors.As(err, &ce) || !ce.Remote || ce.Reason != "kicked: cheating" || ce.Err != nil || !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("client Err() = %#v", err)
	}
	if err := c.WaitReceive(t.Context()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("WaitReceive after close = %v", err)
	}
}

func TestReceiveOverflowDisconnects(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{Limits: transport.MessageLimits{ReceiveQueueMessages: 4}})
	c, s := connect(t, ln, ln.Addr().String(), cfg)
	for i := range 10 {
		if err := c.Send(transport.ReliableOrdered, msg('c', i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, conn := range []transport.MessageConn{s, c} {
		select {
		case <-conn.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("no disconnect after overflowing the receive queue")
		}
	}
	var ce *transport.CloseError
	if err := s.Err(); !errors.Is(err, transport.ErrReceiveOverflow) || !errors.As(err, &ce) || ce.Remote {
		t.Fatalf("server Err() = %v", err)
	}
	if err := c.Err(); !errors.Is(err, transport.ErrReceiveOverflow) || !errors.As(err, &ce) || !ce.Remote {
		t.Fatalf("client Err() = %v", err)
	}
	if n := s.Stats().Channels[transport.ReliableOrdered].Received; n != 4 {
		t.Fatalf("server received %d, want the 4 that fit", n)
	}
}

// A client that announces a message over the limit is disconnected with
// ErrProtocol; the server keeps serving its other client.
func TestOversizeLengthPrefixDisconnects(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{Limits: transport.MessageLimits{MaxMessageSize: 4096}})
	good, goodSrv := connect(t, ln, ln.Addr().String(), cfg)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	raw, err := quicgo.DialAddr(ctx, ln.Addr().String(), cfg.TLS.Clone(), &quicgo.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.CloseWithError(0, "")
	st, err := raw.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	badSrv, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Preface, then a length prefix of 1 GiB.
	if _, err := st.Write(binary.AppendUvarint([]byte{1}, 1<<30)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-raw.Context().Done():
	case <-ctx.Done():
		t.Fatal("server did not close the misbehaving client's conn")
	}
	var ae *quicgo.ApplicationError
	if err := context.Cause(raw.Context()); !errors.As(err, &ae) || !ae.Remote || ae.ErrorCode != 2 {
		t.Fatalf("raw client closed with %v, want application error 2 (protocol)", err)
	}
	<-badSrv.Done()
	if err := badSrv.Err(); !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("server side Err() = %v", err)
	}
	t.Logf("server closed the bad client: %v", badSrv.Err())

	// The other client is unaffected.
	if err := good.Send(transport.ReliableOrdered, msg('g', 1)); err != nil {
		t.Fatal(err)
	}
	receive(t, goodSrv, func(got []rec) bool { return len(got) == 1 })
	if err := goodSrv.Send(transport.ReliableUnordered, msg('G', 2)); err != nil {
		t.Fatal(err)
	}
	receive(t, good, func(got []rec) bool { return len(got) == 1 })
}

// waitGoroutines waits, for at most a few seconds, until the number of
// goroutines is back to at most n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestShutdownByContext(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(t.Context())
	ln, cfg := server(t, ctx, quic.Config{})
	var clients []*quic.Conn
	for i := range 2 {
		c, s := connect(t, ln, ln.Addr().String(), cfg)
		clients = append(clients, c)
		for ch := range transport.Channel(transport.NumChannels) {
			if err := c.Send(ch, msg('c', i)); err != nil {
				t.Fatal(err)
			}
		}
		receive(t, s, func(got []rec) bool { return len(got) >= 2 })
	}
	if runtime.NumGoroutine() <= before {
		t.Fatal("no goroutines running?")
	}
	cancel()
	for _, c := range clients {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("client not told that the server closed")
		}
		var ce *transport.CloseError
		if err := c.Err(); !errors.As(err, &ce) || !ce.Remote || ce.Reason != "listener closed" {
			t.Fatalf("client Err() = %v", err)
		}
	}
	if _, err := ln.Accept(t.Context()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Accept after cancel = %v", err)
	}
	// The clients' goroutines end by themselves once the server is gone.
	waitGoroutines(t, before)
}

func TestDialRequiresTrust(t *testing.T) {
	ln, _ := server(t, t.Context(), quic.Config{})
	_, otherTLS, err := quic.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := quic.Dial(ctx, ln.Addr().String(), quic.Config{TLS: otherTLS}); err == nil {
		t.Fatal("dial succeeded with a certificate the client does not trust")
	}
	if _, err := quic.Listen(ctx, "127.0.0.1:0", quic.Config{}); err == nil {
		t.Fatal("Listen without a certificate succeeded")
	}
	if _, err := quic.Dial(ctx, "no-such-host.invalid:1", quic.Config{TLS: &tls.Config{}}); err == nil {
		t.Fatal("dial to an unresolvable host succeeded")
	}
}

// Reliable channels stay exact through a lossy link-conditioning proxy.
func TestThroughLossyProxy(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{})
	lossy := transport.LinkConfig{Latency: 5 * time.Millisecond, Jitter: 3 * time.Millisecond, Loss: 0.1}
	p, err := transport.NewProxy(t.Context(), transport.ProxyConfig{Target: ln.Addr().String(), Up: lossy, Down: lossy, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, s := connect(t, ln, p.Addr().String(), cfg)
	const N = 300
	pad := make([]byte, 600) // enough data for a few hundred packets each way
	for i := range N {
		for ch := range transport.Channel(transport.NumChannels) {
			if err := c.Send(ch, append(msg('c', i), pad...)); err != nil {
				t.Fatal(err)
			}
			if err := s.Send(ch, append(msg('s', i), pad...)); err != nil {
				t.Fatal(err)
			}
		}
	}
	check(t, receive(t, s, allReliable(N)), 'c', N)
	check(t, receive(t, c, allReliable(N)), 's', N)
	ps := p.Stats()
	if ps.Up.Lost == 0 || ps.Down.Lost == 0 {
		t.Fatalf("the proxy lost nothing: %+v", ps)
	}
	t.Logf("proxy lost %d up, %d down; client stats %+v", ps.Up.Lost, ps.Down.Lost, c.Stats())
}

func TestAcceptBacklogFull(t *testing.T) {
	ln, cfg := server(t, t.Context(), quic.Config{AcceptBacklog: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var conns [2]*quic.Conn
	var refusedAtDial error
	for i := range conns {
		c, err := quic.Dial(ctx, ln.Addr().String(), cfg)
		if err != nil {
			// The refusal can reach the second dialer before its Dial
			// returns: then Dial reports it.
			if i == 0 || !errors.Is(err, transport.ErrRefused) {
				t.Fatal(err)
			}
			refusedAtDial = err
			break
		}
		defer c.Close()
		conns[i] = c
	}
	// The server completes the two handshakes in either order: the second
	// to finish finds the backlog full.
	var refused, kept *quic.Conn
	switch {
	case refusedAtDial != nil:
		kept = conns[0]
	default:
		select {
		case <-conns[0].Done():
			refused, kept = conns[0], conns[1]
		case <-conns[1].Done():
			refused, kept = conns[1], conns[0]
		case <-ctx.Done():
			t.Fatal("no conn refused while the backlog holds one")
		}
	}
	err := refusedAtDial
	if refused != nil {
		err = refused.Err()
	}
	var ce *transport.CloseError
	if !errors.Is(err, transport.ErrRefused) || !errors.As(err, &ce) || !ce.Remote {
		t.Fatalf("refused conn's Err() = %v, want a remote close with ErrRefused", err)
	}
	s, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.RemoteAddr().Port() != kept.LocalAddr().Port() || kept.Err() != nil {
		t.Fatalf("accepted %v (kept conn is %v, err %v)", s.RemoteAddr(), kept.LocalAddr(), kept.Err())
	}
}
