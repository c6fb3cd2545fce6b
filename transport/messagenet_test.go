package transport_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/transport"
)

var serverAddr = netip.MustParseAddrPort("10.0.0.100:7000")

// memSetup returns a network with cfg, closed when the test ends, and a
// connected client and server conn.
func memSetup(t *testing.T, cfg transport.MessageNetworkConfig) (*transport.MessageNetwork, *transport.MessageNetworkConn, transport.MessageConn) {
	t.Helper()
	n := transport.NewMessageNetwork(cfg)
	t.Cleanup(func() { n.Close() })
	ln, err := n.Listen(serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := n.Dial(t.Context(), serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n, c, s
}

func mustSendMsg(t *testing.T, c transport.MessageConn, ch transport.Channel, msg []byte) {
	t.Helper()
	if err := c.Send(ch, msg); err != nil {
		t.Fatalf("Send(%v, %d bytes): %v", ch, len(msg), err)
	}
}

type msgRecord struct {
	ch  transport.Channel
	seq int
	at  time.Duration
}

// receiveAll waits for messages on c until want have arrived or, if want is
// negative, until the network has been quiet for a minute of virtual time.
func receiveAll(t *testing.T, c transport.MessageConn, start time.Time, want int) []msgRecord {
	t.Helper()
	var got []msgRecord
	for want < 0 || len(got) < want {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		err := c.WaitReceive(ctx)
		cancel()
		if err != nil {
			if want < 0 && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, transport.ErrClosed)) {
				return got
			}
			t.Fatalf("WaitReceive after %d of %d messages: %v", len(got), want, err)
		}
		got = drainMsgs(c, start, got)
	}
	return got
}

// drainMsgs appends the messages waiting in c to got.
func drainMsgs(c transport.MessageConn, start time.Time, got []msgRecord) []msgRecord {
	for {
		ch, p, ok := c.Receive()
		if !ok {
			return got
		}
		got = append(got, msgRecord{ch, int(binary.BigEndian.Uint32(p)), time.Since(start)})
	}
}

func seqsOf(recs []msgRecord) []int {
	s := make([]int, len(recs))
	for i, r := range recs {
		s[i] = r.seq
	}
	return s
}

func TestMemReliableOrderedUnderLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.2}
		_, c, s := memSetup(t, transport.MessageNetworkConfig{Seed: 7, Default: link})
		const N = 500
		start := time.Now()
		for i := range N {
			mustSendMsg(t, c, transport.ReliableOrdered, seqPayload(i))
			mustSendMsg(t, s, transport.ReliableOrdered, seqPayload(i))
			time.Sleep(5 * time.Millisecond)
		}
		for _, conn := range []transport.MessageConn{s, c} {
			got := receiveAll(t, conn, start, N)
			if want := slices.Collect(func(yield func(int) bool) {
				for i := range N {
					yield(i)
				}
			}); !slices.Equal(seqsOf(got), want) {
				t.Fatalf("%v received %v, want 0..%d in order", conn.LocalAddr(), seqsOf(got), N-1)
			}
			st := conn.Stats()
			if st.Channels[transport.ReliableOrdered].Received != N || st.Channels[transport.ReliableOrdered].Sent != N {
				t.Errorf("stats %+v, want %d sent and received", st.Channels[transport.ReliableOrdered], N)
			}
			// 20% of the attempts are lost: about 125 retransmissions.
			if st.PacketsLost < 80 || st.PacketsLost > 180 {
				t.Errorf("PacketsLost = %d, want about 125", st.PacketsLost)
			}
		}
		// Nothing is delivered twice: the conns are quiet now.
		if got := receiveAll(t, s, start, -1); len(got) != 0 {
			t.Fatalf("extra messages: %v", got)
		}
	})
}

func TestMemReliableUnorderedExactlyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := transport.LinkConfig{Latency: 30 * time.Millisecond, Jitter: 20 * time.Millisecond, Loss: 0.2, Duplicate: 0.3}
		n, c, s := memSetup(t, transport.MessageNetworkConfig{Seed: 3, Default: link})
		const N = 400
		start := time.Now()
		for i := range N {
			mustSendMsg(t, c, transport.ReliableUnordered, seqPayload(i))
			time.Sleep(2 * time.Millisecond)
		}
		got := seqsOf(receiveAll(t, s, start, N))
		if extra := receiveAll(t, s, start, -1); len(extra) != 0 {
			t.Fatalf("duplicates delivered: %v", seqsOf(extra))
		}
		sorted := slices.Sorted(slices.Values(got))
		for i, v := range sorted {
			if v != i {
				t.Fatalf("received set is not 0..%d exactly once: %v", N-1, sorted)
			}
		}
		if slices.IsSorted(got) {
			t.Fatal("jitter and retransmissions did not reorder any message")
		}
		if ls := n.LinkStats(c.LocalAddr(), s.LocalAddr()); ls.Duplicated != 0 || ls.Lost == 0 {
			t.Fatalf("link stats %+v: reliable messages must be lost and retried, never duplicated", ls)
		}
	})
}

func TestMemHeadOfLineBlocking(t *testing.T) {
	for _, ch := range []transport.Channel{transport.ReliableOrdered, transport.ReliableUnordered} {
		t.Run(ch.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n, c, s := memSetup(t, transport.MessageNetworkConfig{Default: transport.LinkConfig{Latency: 10 * time.Millisecond}})
				// Message 0 is held back by 100ms; 1 and 2 are not.
				n.SetLink(c.LocalAddr(), s.LocalAddr(), transport.LinkConfig{Latency: 10 * time.Millisecond, Reorder: 1, ReorderDelay: 100 * time.Millisecond})
				start := time.Now()
				mustSendMsg(t, c, ch, seqPayload(0))
				n.SetLink(c.LocalAddr(), s.LocalAddr(), transport.LinkConfig{Latency: 10 * time.Millisecond})
				mustSendMsg(t, c, ch, seqPayload(1))
				mustSendMsg(t, c, ch, seqPayload(2))
				got := receiveAll(t, s, start, 3)
				var want []msgRecord
				if ch == transport.ReliableOrdered { // 1 and 2 wait for 0
					want = []msgRecord{{ch, 0, 110 * time.Millisecond}, {ch, 1, 110 * time.Millisecond}, {ch, 2, 110 * time.Millisecond}}
				} else {
					want = []msgRecord{{ch, 1, 10 * time.Millisecond}, {ch, 2, 10 * time.Millisecond}, {ch, 0, 110 * time.Millisecond}}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %v, want %v", got, want)
				}
			})
		})
	}
}

func TestMemRetransmissionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lat = 100 * time.Millisecond
		rto := 2 * lat // the round trip (no jitter), above the 10ms minimum
		_, c, s := memSetup(t, transport.MessageNetworkConfig{Seed: 1, Default: transport.LinkConfig{Latency: lat, Loss: 0.6}})
		start := time.Now()
		const N = 50
		for i := range N {
			mustSendMsg(t, c, transport.ReliableUnordered, seqPayload(i))
		}
		got := receiveAll(t, s, start, N)
		retried := 0
		for _, r := range got {
			k := (r.at - lat) / rto
			if r.at != lat+k*rto {
				t.Fatalf("message %d arrived at %v, want latency + k*RTO = 100ms + k*200ms", r.seq, r.at)
			}
			if k > 0 {
				retried++
			}
		}
		if retried < N/3 {
			t.Fatalf("only %d of %d messages needed a retransmission at 60%% loss", retried, N)
		}
	})
}

func TestMemUnreliableConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.1, Duplicate: 0.05}
		n, c, s := memSetup(t, transport.MessageNetworkConfig{Seed: 11, Default: link})
		const N = 2000
		start := time.Now()
		var got []msgRecord
		for i := range N {
			mustSendMsg(t, c, transport.Unreliable, seqPayload(i))
			time.Sleep(time.Millisecond)
			got = drainMsgs(s, start, got)
		}
		got = append(got, receiveAll(t, s, start, -1)...)
		seen := map[int]int{}
		inversions := 0
		for i, r := range got {
			if r.ch != transport.Unreliable {
				t.Fatalf("message on %v", r.ch)
			}
			seen[r.seq]++
			if i > 0 && r.seq < got[i-1].seq {
				inversions++
			}
		}
		dups := 0
		for _, k := range seen {
			dups += k - 1
		}
		ls := n.LinkStats(c.LocalAddr(), s.LocalAddr())
		if lost := N - len(seen); lost < N*6/100 || lost > N*14/100 || uint64(lost) > ls.Lost {
			t.Errorf("%d of %d messages never arrived (link lost %d), want about 10%%", lost, N, ls.Lost)
		}
		if uint64(dups) != ls.Duplicated || dups < N*2/100 || dups > N*8/100 {
			t.Errorf("%d duplicates, link duplicated %d, want about 5%% of %d", dups, ls.Duplicated, N)
		}
		if inversions < 100 {
			t.Errorf("only %d reorderings with 10ms of jitter and 1ms between sends", inversions)
		}
		st := s.Stats().Channels[transport.Unreliable]
		if st.Received != uint64(len(got)) || ls.Delivered != uint64(len(got)) {
			t.Errorf("received %d, stats %+v, link delivered %d", len(got), st, ls.Delivered)
		}
	})
}

// memScenario runs a mixed scenario and returns a log of every delivery.
func memScenario(t *testing.T, seed uint64) string {
	var log strings.Builder
	synctest.Test(t, func(t *testing.T) {
		link := transport.LinkConfig{Latency: 25 * time.Millisecond, Jitter: 15 * time.Millisecond, Loss: 0.15, Duplicate: 0.05, Reorder: 0.05}
		n, c, s := memSetup(t, transport.MessageNetworkConfig{Seed: seed, Default: link})
		c2, err := n.Dial(t.Context(), serverAddr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		conns := []transport.MessageConn{c, s, c2}
		for i := range 300 {
			for j, conn := range conns {
				mustSendMsg(t, conn, transport.Channel((i+j)%3), seqPayload(i))
			}
			if i == 100 {
				n.Partition(c.LocalAddr(), serverAddr)
			}
			if i == 150 {
				n.Heal(c.LocalAddr(), serverAddr)
			}
			time.Sleep(4 * time.Millisecond)
			for j, conn := range conns {
				for {
					ch, p, ok := conn.Receive()
					if !ok {
						break
					}
					fmt.Fprintf(&log, "%v %d %v %d\n", time.Since(start), j, ch, binary.BigEndian.Uint32(p))
				}
			}
		}
	})
	return log.String()
}

func TestMemDeterministic(t *testing.T) {
	a, b := memScenario(t, 42), memScenario(t, 42)
	if a != b {
		t.Fatal("same seed, different delivery logs")
	}
	if strings.Count(a, "\n") < 500 {
		t.Fatalf("too few deliveries logged:\n%s", a)
	}
	if memScenario(t, 43) == a {
		t.Fatal("different seeds, same delivery log")
	}
}

func TestMemPartitionHeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, c, s := memSetup(t, transport.MessageNetworkConfig{Default: transport.LinkConfig{Latency: 10 * time.Millisecond}})
		start := time.Now()
		n.Partition(c.LocalAddr(), s.LocalAddr())
		mustSendMsg(t, c, transport.ReliableOrdered, seqPayload(1))
		mustSendMsg(t, c, transport.Unreliable, seqPayload(2))
		mustSendMsg(t, c, transport.ReliableUnordered, seqPayload(3))
		time.Sleep(5 * time.Second) // less than the 10s idle timeout
		if _, _, ok := s.Receive(); ok {
			t.Fatal("message crossed a partition")
		}
		n.Heal(c.LocalAddr(), s.LocalAddr())
		got := receiveAll(t, s, start, -1)
		want := []msgRecord{
			{transport.ReliableOrdered, 1, 5*time.Second + 10*time.Millisecond},
			{transport.ReliableUnordered, 3, 5*time.Second + 10*time.Millisecond},
		}
		if !slices.Equal(got, want) {
			t.Fatalf("after heal got %v, want %v (the unreliable message is lost)", got, want)
		}
		if c.Err() != nil || s.Err() != nil {
			t.Fatalf("conns closed by a 5s partition: %v, %v", c.Err(), s.Err())
		}
	})
}

func TestMemPartitionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, c, s := memSetup(t, transport.MessageNetworkConfig{IdleTimeout: 3 * time.Second})
		start := time.Now()
		n.Partition(c.LocalAddr(), s.LocalAddr())
		mustSendMsg(t, c, transport.ReliableOrdered, seqPayload(1))
		<-s.Done()
		<-c.Done()
		if got := time.Since(start); got != 3*time.Second {
			t.Fatalf("closed after %v, want the 3s idle timeout", got)
		}
		for _, conn := range []transport.MessageConn{c, s} {
			err := conn.Err()
			var ce *transport.CloseError
			if !errors.Is(err, transport.ErrTimeout) || !errors.Is(err, transport.ErrClosed) || !errors.As(err, &ce) || ce.Remote {
				t.Fatalf("Err() = %v, want a local *CloseError matching ErrTimeout and ErrClosed", err)
			}
			if err := conn.Send(transport.ReliableOrdered, nil); !errors.Is(err, transport.ErrTimeout) {
				t.Fatalf("Send after timeout = %v", err)
			}
			if err := conn.WaitReceive(t.Context()); !errors.Is(err, transport.ErrTimeout) {
				t.Fatalf("WaitReceive after timeout = %v", err)
			}
		}
		n.Heal(c.LocalAddr(), s.LocalAddr())
		time.Sleep(time.Second)
		if _, _, ok := s.Receive(); ok {
			t.Fatal("message delivered after the conn timed out")
		}
	})
}

func TestMemTotalLossTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, c, s := memSetup(t, transport.MessageNetworkConfig{})
		n.SetLink(s.LocalAddr(), c.LocalAddr(), transport.LinkConfig{Loss: 1})
		start := time.Now()
		<-c.Done()
		if got := time.Since(start); got != transport.DefaultIdleTimeout || !errors.Is(c.Err(), transport.ErrTimeout) {
			t.Fatalf("after %v: %v; want ErrTimeout after %v", got, c.Err(), transport.DefaultIdleTimeout)
		}
	})
}

func TestMemSizeLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, s := memSetup(t, transport.MessageNetworkConfig{Limits: transport.MessageLimits{MaxMessageSize: 1000, MaxUnreliableSize: 100}})
		if got := c.MaxUnreliableSize(); got != 100 {
			t.Fatalf("MaxUnreliableSize() = %d", got)
		}
		for _, tc := range []struct {
			ch    transport.Channel
			limit int
		}{{transport.ReliableOrdered, 1000}, {transport.ReliableUnordered, 1000}, {transport.Unreliable, 100}} {
			err := c.Send(tc.ch, make([]byte, tc.limit+1))
			var se *transport.SizeError
			if !errors.Is(err, transport.ErrTooLarge) || !errors.As(err, &se) || *se != (transport.SizeError{Channel: tc.ch, Size: tc.limit + 1, Limit: tc.limit}) {
				t.Fatalf("Send(%v, %d bytes) = %v, want a SizeError", tc.ch, tc.limit+1, err)
			}
			mustSendMsg(t, c, tc.ch, bytes.Repeat([]byte{byte(tc.ch)}, tc.limit))
			if st := c.Stats().Channels[tc.ch]; st.DroppedOversize != 1 || st.Sent != 1 || st.SentBytes != uint64(tc.limit) {
				t.Fatalf("%v stats %+v", tc.ch, st)
			}
		}
		if err := c.Send(transport.NumChannels, nil); !errors.Is(err, transport.ErrInvalidChannel) {
			t.Fatalf("Send on channel 3 = %v", err)
		}
		for range 3 {
			ch, p, ok := s.Receive()
			if !ok || len(p) == 0 || p[0] != byte(ch) {
				t.Fatalf("Receive() = %v, %d bytes, %v", ch, len(p), ok)
			}
		}
	})
}

func TestMemSendQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, c, s := memSetup(t, transport.MessageNetworkConfig{Limits: transport.MessageLimits{SendQueueMessages: 4, SendQueueBytes: 1000, MaxMessageSize: 500}})
		n.Partition(c.LocalAddr(), s.LocalAddr())
		for i := range 4 {
			mustSendMsg(t, c, transport.Channel(i%2), seqPayload(i))
		}
		if err := c.Send(transport.ReliableOrdered, seqPayload(4)); !errors.Is(err, transport.ErrQueueFull) {
			t.Fatalf("fifth reliable message: %v, want ErrQueueFull", err)
		}
		mustSendMsg(t, c, transport.Unreliable, seqPayload(5)) // not queued: dropped by the partition
		n.Heal(c.LocalAddr(), s.LocalAddr())
		if got := seqsOf(receiveAll(t, s, time.Now(), 4)); !slices.Equal(slices.Sorted(slices.Values(got)), []int{0, 1, 2, 3}) {
			t.Fatalf("received %v", got)
		}
		// Delivered messages leave the queue; the byte cap applies too.
		mustSendMsg(t, c, transport.ReliableOrdered, make([]byte, 500))
		n.Partition(c.LocalAddr(), s.LocalAddr())
		mustSendMsg(t, c, transport.ReliableOrdered, make([]byte, 500))
		mustSendMsg(t, c, transport.ReliableOrdered, make([]byte, 500))
		if err := c.Send(transport.ReliableUnordered, []byte{1}); !errors.Is(err, transport.ErrQueueFull) {
			t.Fatalf("1001st byte: %v, want ErrQueueFull", err)
		}
		if st := c.Stats().Channels; st[transport.ReliableOrdered].DroppedSendQueue != 1 || st[transport.ReliableUnordered].DroppedSendQueue != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestMemReceiveOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := transport.MessageLimits{ReceiveQueueMessages: 5, UnreliableQueue: 3}
		_, c, s := memSetup(t, transport.MessageNetworkConfig{Limits: lim, Default: transport.LinkConfig{Latency: 10 * time.Millisecond}})
		for i := range 5 {
			mustSendMsg(t, c, transport.Unreliable, seqPayload(i))
		}
		time.Sleep(20 * time.Millisecond)
		if st := s.Stats().Channels[transport.Unreliable]; st.Received != 3 || st.DroppedReceiveQueue != 2 {
			t.Fatalf("unreliable stats %+v, want 3 received and 2 dropped", st)
		}
		for i := range 6 {
			mustSendMsg(t, c, transport.ReliableOrdered, seqPayload(i))
		}
		time.Sleep(10 * time.Millisecond)
		// The sixth reliable message overflowed the server's queue: it closed.
		if err := s.Err(); !errors.Is(err, transport.ErrReceiveOverflow) {
			t.Fatalf("server Err() = %v, want ErrReceiveOverflow", err)
		}
		got := receiveAll(t, s, time.Now(), -1) // what arrived before stays readable
		if len(got) != 8 {
			t.Fatalf("server received %d messages after the overflow, want the 8 queued", len(got))
		}
		<-c.Done()
		var ce *transport.CloseError
		if err := c.Err(); !errors.As(err, &ce) || !ce.Remote || !errors.Is(err, transport.ErrReceiveOverflow) {
			t.Fatalf("client Err() = %v, want a remote close with ErrReceiveOverflow", err)
		}
	})
}

func TestMemCloseWithReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, s := memSetup(t, transport.MessageNetworkConfig{Default: transport.LinkConfig{Latency: 40 * time.Millisecond}})
		mustSendMsg(t, s, transport.ReliableOrdered, []byte("bye"))
		time.Sleep(40 * time.Millisecond)
		start := time.Now()
		if err := s.CloseWithReason("server full"); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal("second close:", err)
		}
		select {
		case <-s.Done():
		default:
			t.Fatal("Done not closed after Close")
		}
		var ce *transport.CloseError
		if err := s.Err(); !errors.As(err, &ce) || ce.Remote || ce.Reason != "server full" || !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("local Err() = %v", err)
		}
		if err := s.Send(transport.Unreliable, nil); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Send after Close = %v", err)
		}
		<-c.Done()
		if got := time.Since(start); got != 40*time.Millisecond {
			t.Fatalf("peer learnt of the close after %v, want the 40ms latency", got)
		}
		if err := c.Err(); !errors.As(err, &ce) || !ce.Remote || ce.Reason != "server full" || ce.Err != nil {
			t.Fatalf("peer Err() = %#v", err)
		}
		if err := c.Err().Error(); err != `transport: connection closed by peer: "server full"` {
			t.Fatalf("peer error text %q", err)
		}
		// The message that arrived before the close can still be read.
		if _, p, ok := c.Receive(); !ok || string(p) != "bye" {
			t.Fatalf("Receive() = %q, %v", p, ok)
		}
		if err := c.WaitReceive(t.Context()); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("WaitReceive on a drained closed conn = %v", err)
		}
	})
}

func TestMemDialAndListener(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := transport.NewMessageNetwork(transport.MessageNetworkConfig{
			Default:       transport.LinkConfig{Latency: 15 * time.Millisecond},
			AcceptBacklog: 1,
		})
		defer n.Close()
		if _, err := n.Dial(t.Context(), serverAddr); !errors.Is(err, transport.ErrRefused) {
			t.Fatalf("dial without listener: %v", err)
		}
		ln, err := n.Listen(serverAddr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Listen(serverAddr); !errors.Is(err, transport.ErrAddrInUse) {
			t.Fatalf("second Listen: %v", err)
		}
		start := time.Now()
		c1, err := n.Dial(t.Context(), serverAddr)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 30*time.Millisecond {
			t.Fatalf("Dial took %v, want one 30ms round trip", got)
		}
		// The backlog holds one conn: the second dial is refused.
		if _, err := n.Dial(t.Context(), serverAddr); !errors.Is(err, transport.ErrRefused) {
			t.Fatalf("dial with a full backlog: %v", err)
		}
		s1, err := ln.Accept(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s1.RemoteAddr() != c1.LocalAddr() || c1.RemoteAddr() != serverAddr || s1.LocalAddr() != serverAddr {
			t.Fatalf("addresses: client %v -> %v, server %v -> %v", c1.LocalAddr(), c1.RemoteAddr(), s1.LocalAddr(), s1.RemoteAddr())
		}
		if got := c1.Stats().RTT; got != 30*time.Millisecond {
			t.Fatalf("RTT = %v", got)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := ln.Accept(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Accept with nothing to accept: %v", err)
		}
		// A dial cancelled mid-handshake fails with the context's error.
		dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer dcancel()
		if _, err := n.Dial(dctx, serverAddr); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cancelled dial: %v", err)
		}
		// Closing the listener closes its conns, and tells the clients.
		ln.Close()
		if _, err := ln.Accept(t.Context()); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Accept after Close: %v", err)
		}
		<-c1.Done()
		var ce *transport.CloseError
		if err := c1.Err(); !errors.As(err, &ce) || !ce.Remote || ce.Reason != "listener closed" {
			t.Fatalf("client Err() = %v", err)
		}
		if err := s1.Err(); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("server conn Err() = %v", err)
		}
		// The address is free again.
		if _, err := n.Listen(serverAddr); err != nil {
			t.Fatal(err)
		}
		n.Close()
		if _, err := n.Dial(t.Context(), serverAddr); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Dial after network Close: %v", err)
		}
	})
}

func TestMemBandwidthDelaysReliable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := transport.LinkConfig{BandwidthBytesPerSec: 100_000, QueueBytes: 10_000}
		_, c, s := memSetup(t, transport.MessageNetworkConfig{Default: link})
		start := time.Now()
		big := make([]byte, 200_000) // 20x the bandwidth queue: still delivered
		binary.BigEndian.PutUint32(big, 1)
		mustSendMsg(t, c, transport.ReliableOrdered, big)
		mustSendMsg(t, c, transport.ReliableOrdered, seqPayload(2))
		got := receiveAll(t, s, start, 2)
		want := []msgRecord{{transport.ReliableOrdered, 1, 2 * time.Second}, {transport.ReliableOrdered, 2, 2*time.Second + 40*time.Microsecond}}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

func TestMemMessageOwnership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, s := memSetup(t, transport.MessageNetworkConfig{})
		buf := []byte("first")
		mustSendMsg(t, c, transport.ReliableOrdered, buf)
		copy(buf, "XXXXX") // Send copied it
		_, p, ok := s.Receive()
		if !ok || string(p) != "first" {
			t.Fatalf("Receive() = %q, %v", p, ok)
		}
	})
}

func TestMemLocalCloseDiscardsQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, s := memSetup(t, transport.MessageNetworkConfig{})
		mustSendMsg(t, c, transport.ReliableOrdered, []byte("x"))
		s.Close()
		if _, _, ok := s.Receive(); ok {
			t.Fatal("Receive after local Close returned a message")
		}
		if err := s.WaitReceive(t.Context()); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("WaitReceive after Close = %v", err)
		}
		<-c.Done()
	})
}
