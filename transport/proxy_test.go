package transport_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/rewindgo/rewind/transport"
)

func startProxy(t *testing.T, target *transport.UDPConn, up, down transport.LinkConfig) *transport.Proxy {
	t.Helper()
	p, err := transport.NewProxy(t.Context(), transport.ProxyConfig{
		Target:   target.LocalAddr().String(),
		Upstream: "127.0.0.1:0",
		Up:       up,
		Down:     down,
		Seed:     1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitUntil polls cond, yielding the processor between polls, until it holds
// or wallTimeout passes. It is for state that has no blocking wait, such as
// counters of a proxy's goroutines.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wallTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

func TestProxyForwardsBothWays(t *testing.T) {
	client, target := listenUDP(t), listenUDP(t)
	p := startProxy(t, target, transport.LinkConfig{}, transport.LinkConfig{})
	const total = 100
	echoInBatches(t, client, target, p.Addr(), total, 50, p.UpstreamAddr(), p.Addr())
	st := p.Stats()
	if st.Up.Sent != total || st.Up.Delivered != total || st.Down.Sent != total || st.Down.Delivered != total {
		t.Fatalf("Stats = %+v, want %d sent and delivered each way", st, total)
	}
	if st.Client != client.LocalAddr() {
		t.Fatalf("Stats.Client = %v, want %v", st.Client, client.LocalAddr())
	}
}

func TestProxyConditions(t *testing.T) {
	client, target := listenUDP(t), listenUDP(t)
	const latency = 30 * time.Millisecond
	p := startProxy(t, target, transport.LinkConfig{Latency: latency, Duplicate: 1}, transport.LinkConfig{})
	start := time.Now()
	for i := range 10 {
		if err := client.Send(p.Addr(), binary.BigEndian.AppendUint32(nil, uint32(i))); err != nil {
			t.Fatal(err)
		}
	}
	_, seqs := receiveN(t, target, 20)
	// Wall time only gives a lower bound, but no datagram can beat it.
	if elapsed := time.Since(start); elapsed < latency {
		t.Fatalf("datagrams arrived after %v, before the %v latency", elapsed, latency)
	}
	for i, s := range seqs {
		if s != i/2 {
			t.Fatalf("target got %v, want each datagram twice in order", seqs)
		}
	}
	if st := p.Stats(); st.Up.Duplicated != 10 || st.Up.Delivered != 20 {
		t.Fatalf("Stats.Up = %+v, want Duplicated 10, Delivered 20", st.Up)
	}
}

func TestProxyLossDropsEverything(t *testing.T) {
	client, target := listenUDP(t), listenUDP(t)
	p := startProxy(t, target, transport.LinkConfig{Loss: 1}, transport.LinkConfig{})
	const lost = 50
	for i := range lost {
		if err := client.Send(p.Addr(), binary.BigEndian.AppendUint32(nil, uint32(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the proxy to process every datagram", func() bool { return p.Stats().Up.Sent == lost })
	if st := p.Stats(); st.Up.Lost != lost || st.Up.Delivered != 0 {
		t.Fatalf("Stats.Up = %+v, want all %d lost and none delivered", st.Up, lost)
	}

	// Restore the link and send a marker: it must be the first and only
	// datagram the target ever sees, since the proxy writes in order.
	p.SetConditions(transport.LinkConfig{}, transport.LinkConfig{})
	if err := client.Send(p.Addr(), binary.BigEndian.AppendUint32(nil, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, seqs := receiveN(t, target, 1); len(seqs) != 1 || seqs[0] != 1000 {
		t.Fatalf("target got %v, want only the marker [1000]", seqs)
	}
}

func TestProxyDropsStrays(t *testing.T) {
	client, target, stranger := listenUDP(t), listenUDP(t), listenUDP(t)
	p := startProxy(t, target, transport.LinkConfig{}, transport.LinkConfig{})
	// Before any client, even the target's datagrams have nowhere to go.
	if err := target.Send(p.UpstreamAddr(), []byte("early")); err != nil {
		t.Fatal(err)
	}
	if err := stranger.Send(p.UpstreamAddr(), []byte("spoof")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "two stray datagrams", func() bool { return p.Stats().DroppedStray == 2 })

	// A datagram over MaxDatagramSize from a client is dropped too.
	raw, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.WriteToUDPAddrPort(make([]byte, transport.DefaultProxyMaxDatagram+1), p.Addr()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "an oversize datagram", func() bool { return p.Stats().DroppedOversize == 1 })
	if st := p.Stats(); st.Up.Sent != 0 || st.Down.Sent != 0 || st.Client.IsValid() {
		t.Fatalf("Stats = %+v, want nothing forwarded and no client", st)
	}

	// The first real client datagram opens the way back.
	if err := client.Send(p.Addr(), binary.BigEndian.AppendUint32(nil, 1)); err != nil {
		t.Fatal(err)
	}
	receiveN(t, target, 1)
	if err := target.Send(p.UpstreamAddr(), binary.BigEndian.AppendUint32(nil, 2)); err != nil {
		t.Fatal(err)
	}
	if _, seqs := receiveN(t, client, 1); seqs[0] != 2 {
		t.Fatalf("client got %v, want [2]", seqs)
	}
}

func TestProxyStopsWithContext(t *testing.T) {
	target := listenUDP(t)
	ctx, cancel := context.WithCancel(t.Context())
	p, err := transport.NewProxy(ctx, transport.ProxyConfig{Target: target.LocalAddr().String()})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// Close waits for the shutdown begun by the cancellation.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The listen socket is closed: a new socket can take its port.
	c, err := transport.ListenUDP(t.Context(), p.Addr().String(), transport.UDPConfig{})
	if err != nil {
		t.Fatalf("listen socket still open after cancel: %v", err)
	}
	c.Close()

	if _, err := transport.NewProxy(t.Context(), transport.ProxyConfig{Target: "127.0.0.1:0"}); !errors.Is(err, transport.ErrInvalidAddr) {
		t.Fatalf("NewProxy with target port 0 = %v, want ErrInvalidAddr", err)
	}
}
