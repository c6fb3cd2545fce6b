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

// wallTimeout bounds every wait on real sockets. It is a failure bound, not a
// synchronisation delay: the waits return as soon as data arrives.
const wallTimeout = 10 * time.Second

func listenUDP(t *testing.T) *transport.UDPConn {
	t.Helper()
	c, err := transport.ListenUDP(t.Context(), "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// receiveN waits for n datagrams on c and returns their senders and
// sequence numbers.
func receiveN(t *testing.T, c *transport.UDPConn, n int) ([]netip.AddrPort, []int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wallTimeout)
	defer cancel()
	var from []netip.AddrPort
	var seqs []int
	for len(seqs) < n {
		if err := c.WaitReceive(ctx); err != nil {
			t.Fatalf("waiting for datagram %d of %d: %v (stats %+v)", len(seqs)+1, n, err, c.Stats())
		}
		for {
			f, p, ok := c.Receive()
			if !ok {
				break
			}
			from = append(from, f)
			seqs = append(seqs, int(binary.BigEndian.Uint32(p)))
		}
	}
	return from, seqs
}

// echoInBatches sends total numbered datagrams of size bytes from a to dst,
// 25 at a time (so the kernel socket buffer does not overflow), and has b
// echo each back to its sender. b must see them in order from wantAtB, and
// a the echoes in order from wantAtA.
func echoInBatches(t *testing.T, a, b *transport.UDPConn, dst netip.AddrPort, total, size int, wantAtB, wantAtA netip.AddrPort) {
	t.Helper()
	const batch = 25
	payload := make([]byte, size)
	for next := 0; next < total; next += batch {
		n := min(batch, total-next)
		for i := next; i < next+n; i++ {
			binary.BigEndian.PutUint32(payload, uint32(i))
			if err := a.Send(dst, payload); err != nil {
				t.Fatal(err)
			}
		}
		from, seqs := receiveN(t, b, n)
		for i, s := range seqs {
			if s != next+i || from[i] != wantAtB {
				t.Fatalf("B got datagram %d from %v, want %d from %v", s, from[i], next+i, wantAtB)
			}
			binary.BigEndian.PutUint32(payload, uint32(s))
			if err := b.Send(from[i], payload); err != nil { // echo back
				t.Fatal(err)
			}
		}
		from, seqs = receiveN(t, a, n)
		for i, s := range seqs {
			if s != next+i || from[i] != wantAtA {
				t.Fatalf("A got datagram %d from %v, want %d from %v", s, from[i], next+i, wantAtA)
			}
		}
	}
}

func TestUDPEndToEnd(t *testing.T) {
	a, b := listenUDP(t), listenUDP(t)
	if !a.LocalAddr().Addr().IsLoopback() || a.LocalAddr().Port() == 0 {
		t.Fatalf("LocalAddr = %v, want a loopback address with a port", a.LocalAddr())
	}
	const total = 300
	echoInBatches(t, a, b, b.LocalAddr(), total, 100, a.LocalAddr(), b.LocalAddr())
	for _, c := range []*transport.UDPConn{a, b} {
		st := c.Stats()
		if st.PacketsSent != total || st.PacketsReceived != total || st.BytesSent != 100*total || st.BytesReceived != 100*total {
			t.Fatalf("%v Stats = %+v, want %d datagrams of 100 bytes each way", c.LocalAddr(), st, total)
		}
	}
}

func TestUDPOversize(t *testing.T) {
	c := listenUDP(t)
	if err := c.Send(c.LocalAddr(), make([]byte, transport.MaxPacketSize+1)); !errors.Is(err, transport.ErrTooLarge) {
		t.Fatalf("oversize Send = %v, want ErrTooLarge", err)
	}
	// A raw socket can send a longer datagram; the conn drops it and keeps
	// the next one.
	raw, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.WriteToUDPAddrPort(make([]byte, transport.MaxPacketSize+1), c.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.WriteToUDPAddrPort(binary.BigEndian.AppendUint32(nil, 7), c.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	from, seqs := receiveN(t, c, 1)
	if len(seqs) != 1 || seqs[0] != 7 || from[0] != netip.MustParseAddrPort(raw.LocalAddr().String()) {
		t.Fatalf("got %v from %v, want only [7] from the raw socket", seqs, from)
	}
	if st := c.Stats(); st.DroppedOversize != 2 || st.PacketsReceived != 1 {
		t.Fatalf("Stats = %+v, want DroppedOversize 2 (one sent, one received), PacketsReceived 1", st)
	}
}

func TestUDPClosed(t *testing.T) {
	c := listenUDP(t)
	other := listenUDP(t)
	if err := other.Send(c.LocalAddr(), []byte("pending")); err != nil {
		t.Fatal(err)
	}
	receiveWait(t, c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
	if _, _, ok := c.Receive(); ok {
		t.Fatal("Receive after Close returned a datagram")
	}
	if err := c.Send(other.LocalAddr(), []byte("x")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Send after Close = %v, want ErrClosed", err)
	}
	if err := c.WaitReceive(t.Context()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("WaitReceive after Close = %v, want ErrClosed", err)
	}
}

// receiveWait waits until c has a datagram waiting.
func receiveWait(t *testing.T, c *transport.UDPConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wallTimeout)
	defer cancel()
	if err := c.WaitReceive(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestUDPListenErrors(t *testing.T) {
	if _, err := transport.ListenUDP(t.Context(), "256.0.0.1:0", transport.UDPConfig{}); err == nil {
		t.Fatal("ListenUDP on an invalid address succeeded")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ListenUDP with a cancelled context = %v, want context.Canceled", err)
	}
}

func BenchmarkUDPSendReceive(b *testing.B) {
	ctx := b.Context()
	x, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	y, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer y.Close()
	payload := make([]byte, 64)
	to := y.LocalAddr()
	roundTrip := func() {
		if err := x.Send(to, payload); err != nil {
			b.Fatal(err)
		}
		if err := y.WaitReceive(ctx); err != nil {
			b.Fatal(err)
		}
		if _, _, ok := y.Receive(); !ok {
			b.Fatal("no datagram after WaitReceive")
		}
	}
	for range 2 * transport.DefaultReceiveQueue { // warm up the receive ring
		roundTrip()
	}
	runtime.GC()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		roundTrip()
	}
}
