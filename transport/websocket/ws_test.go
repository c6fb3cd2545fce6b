//go:build !js

package websocket_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	cws "github.com/coder/websocket"

	"github.com/rewindgo/rewind/transport"
	"github.com/rewindgo/rewind/transport/websocket"
)

// server starts a standalone listener on loopback.
func server(t *testing.T, cfg websocket.Config) (*websocket.Listener, string) {
	t.Helper()
	ln, err := websocket.Listen(t.Context(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, "ws://" + ln.Addr().String() + "/"
}

// connect dials url and accepts the conn on the server side.
func connect(t *testing.T, ln *websocket.Listener, url string, cfg websocket.Config) (*websocket.Conn, transport.MessageConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, err := websocket.Dial(ctx, url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return c, s
}

func msg(tag byte, i int) []byte { return binary.BigEndian.AppendUint32([]byte{tag}, uint32(i)) }

type rec struct {
	ch  transport.Channel
	tag byte
	i   int
}

// receive collects messages from c until n have arrived.
func receive(t *testing.T, c transport.MessageConn, n int) []rec {
	t.Helper()
	return receiveUntil(t, c, func(got []rec) bool { return len(got) >= n })
}

// receiveUntil collects messages from c until done says so.
func receiveUntil(t *testing.T, c transport.MessageConn, done func([]rec) bool) []rec {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []rec
	for !done(got) {
		if err := c.WaitReceive(ctx); err != nil {
			t.Fatalf("WaitReceive after %d messages: %v", len(got), err)
		}
		for {
			ch, p, ok := c.Receive()
			if !ok {
				break
			}
			got = append(got, rec{ch, p[0], int(binary.BigEndian.Uint32(p[1:]))})
		}
	}
	return got
}

func TestChannelsBothWays(t *testing.T) {
	ln, url := server(t, websocket.Config{})
	c, s := connect(t, ln, url, websocket.Config{})
	const n = 200
	for i := range n {
		for _, ch := range []transport.Channel{transport.Unreliable, transport.ReliableOrdered, transport.ReliableUnordered} {
			if err := c.Send(ch, msg('c', i)); err != nil {
				t.Fatal(err)
			}
			if err := s.Send(ch, msg('s', i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, side := range []struct {
		conn, peer transport.MessageConn
		tag        byte
	}{{s, c, 'c'}, {c, s, 's'}} {
		// One stream: everything arrives in Send order, whatever the
		// channel, except unreliable messages pushed out of the sender's
		// backlog while the socket was backed up (counted). The last
		// message sent is reliable, so it comes last.
		got := receiveUntil(t, side.conn, func(got []rec) bool {
			return len(got) > 0 && got[len(got)-1] == rec{transport.Unreliable - 1, side.tag, n - 1}
		})
		unrel := 0
		for _, r := range got {
			if r.ch == transport.Unreliable {
				unrel++
			}
		}
		if dropped := side.peer.Stats().Channels[transport.Unreliable].DroppedSendQueue; unrel+int(dropped) != n {
			t.Fatalf("%d unreliable received + %d dropped at the sender, want %d", unrel, dropped, n)
		}
		var next [transport.NumChannels]int
		for _, r := range got {
			if r.tag != side.tag {
				t.Fatalf("message from the wrong peer: %+v", r)
			}
			if r.ch != transport.Unreliable && r.i != next[r.ch] {
				t.Fatalf("%v: got %d, want %d", r.ch, r.i, next[r.ch])
			}
			if r.i < next[r.ch] {
				t.Fatalf("%v: %d after %d", r.ch, r.i, next[r.ch])
			}
			next[r.ch] = r.i + 1
		}
	}
	st := c.Stats()
	if st.Channels[transport.ReliableOrdered].Sent != n || st.WireBytesSent == 0 || st.WirePacketsReceived == 0 {
		t.Fatalf("stats %+v", st)
	}
	if !c.RemoteAddr().IsValid() || c.RemoteAddr() != s.LocalAddr() || c.LocalAddr() != s.RemoteAddr() {
		t.Fatalf("addresses: client %v -> %v, server %v <- %v", c.LocalAddr(), c.RemoteAddr(), s.LocalAddr(), s.RemoteAddr())
	}
}

// The dropped-and-counted backlog cannot be waited for over a real
// socket without timing; it is tested in sendq_internal_test.go.

func TestCloseWithReason(t *testing.T) {
	ln, url := server(t, websocket.Config{})
	c, s := connect(t, ln, url, websocket.Config{})
	long := strings.Repeat("é", 200) // 400 bytes: over WebSocket's 123
	if err := c.Send(transport.ReliableOrdered, []byte("last")); err != nil {
		t.Fatal(err)
	}
	receive(t, s, 0)
	s.CloseWithReason(long)
	<-c.Done()
	var ce *transport.CloseError
	if err := c.Err(); !errors.As(err, &ce) || !ce.Remote || ce.Reason != transport.TruncateReason(long) || ce.Err != nil {
		t.Fatalf("client Err = %v", err)
	}
	if !errors.Is(c.Err(), transport.ErrClosed) {
		t.Fatal("not ErrClosed")
	}
	if err := c.Send(transport.Unreliable, []byte("x")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Send after close = %v", err)
	}
	if err := s.Err(); !errors.As(err, &ce) || ce.Remote {
		t.Fatalf("server Err = %v", err)
	}
}

func TestListenerCloseClosesConns(t *testing.T) {
	ln, url := server(t, websocket.Config{})
	c, _ := connect(t, ln, url, websocket.Config{})
	ln.Close()
	<-c.Done()
	var ce *transport.CloseError
	if !errors.As(c.Err(), &ce) || ce.Reason != "listener closed" {
		t.Fatalf("Err = %v", c.Err())
	}
	if _, err := ln.Accept(t.Context()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Accept after Close = %v", err)
	}
}

func TestMountedBesideAPage(t *testing.T) {
	ln := websocket.NewListener(websocket.Config{})
	defer ln.Close()
	mux := http.NewServeMux()
	mux.Handle("/ws", ln)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, s := connect(t, ln, websocket.WebSocketURL(srv.URL+"/index.html?bot=1", "/ws"), websocket.Config{})
	if err := s.Send(transport.ReliableOrdered, msg('s', 7)); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, c, 1); got[0] != (rec{transport.ReliableOrdered, 's', 7}) {
		t.Fatalf("got %+v", got)
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("page: %d", resp.StatusCode)
	}
}

func TestWebSocketURL(t *testing.T) {
	for _, c := range [][3]string{
		{"http://localhost:8080/?bot=1", "/ws", "ws://localhost:8080/ws"},
		{"https://game.example/play/index.html#x", "ws", "wss://game.example/ws"},
		{"ws://h:1", "/ws", "ws://h:1/ws"},
	} {
		if got := websocket.WebSocketURL(c[0], c[1]); got != c[2] {
			t.Errorf("WebSocketURL(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// raw dials the listener with the WebSocket library alone, as a hostile
// or broken client would.
func raw(t *testing.T, url string, subprotocols ...string) *cws.Conn {
	t.Helper()
	if subprotocols == nil {
		subprotocols = []string{websocket.Subprotocol}
	}
	ws, _, err := cws.Dial(t.Context(), url, &cws.DialOptions{Subprotocols: subprotocols})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// readClose reads from ws until this package's close frame, and returns
// its cause byte and reason.
func readClose(t *testing.T, ws *cws.Conn) (byte, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("no close frame: %v", err)
		}
		if len(b) >= 2 && b[0] == 20 {
			return b[1], string(b[2:])
		}
	}
}

func TestHelloDeadline(t *testing.T) {
	ln, url := server(t, websocket.Config{HandshakeTimeout: 50 * time.Millisecond})
	ws := raw(t, url)
	// No hello: the listener drops the socket after its handshake timeout.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, _, err := ws.Read(ctx); err == nil {
		t.Fatal("read a frame without saying hello")
	}
	actx, acancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer acancel()
	if c, err := ln.Accept(actx); err == nil {
		t.Fatalf("accepted %v", c.RemoteAddr())
	}
}

func TestHostileFrames(t *testing.T) {
	hello := []byte{16, 1}
	for _, tc := range []struct {
		name   string
		frames [][]byte
		text   bool
	}{
		{"unknown kind", [][]byte{hello, {99}}, false},
		{"text message", [][]byte{hello, []byte("hi")}, true},
		{"second hello", [][]byte{hello, hello}, false},
		{"empty message", [][]byte{hello, {}}, false},
		{"reliable over the limit", [][]byte{hello, append([]byte{0}, make([]byte, 1025)...)}, false},
		{"bad ping", [][]byte{hello, {18, 1, 2}}, false},
		{"bad hello version", [][]byte{{16, 9}}, false},
		{"data before hello", [][]byte{{0, 1, 2}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, url := server(t, websocket.Config{Limits: transport.MessageLimits{MaxMessageSize: 1024}})
			ws := raw(t, url)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var accepted transport.MessageConn
			for i, f := range tc.frames {
				typ := cws.MessageBinary
				if tc.text && i == len(tc.frames)-1 {
					typ = cws.MessageText
				}
				if err := ws.Write(ctx, typ, f); err != nil {
					t.Fatal(err)
				}
				if i == 0 && f[0] == 16 && f[1] == 1 {
					c, err := ln.Accept(ctx)
					if err != nil {
						t.Fatal(err)
					}
					accepted = c
				}
			}
			cause, reason := readClose(t, ws)
			if cause != 2 {
				t.Fatalf("close cause %d (%q), want 2 (protocol)", cause, reason)
			}
			if accepted != nil {
				<-accepted.Done()
				if !errors.Is(accepted.Err(), transport.ErrProtocol) {
					t.Fatalf("server conn Err = %v", accepted.Err())
				}
			}
		})
	}
}

func TestWrongSubprotocolRefused(t *testing.T) {
	_, url := server(t, websocket.Config{})
	ws := raw(t, url, "chat")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, _, err := ws.Read(ctx)
	if cws.CloseStatus(err) != cws.StatusPolicyViolation {
		t.Fatalf("Read = %v, want a policy-violation close", err)
	}
}

func TestUnreliableOversizeDroppedAndCounted(t *testing.T) {
	ln, url := server(t, websocket.Config{Limits: transport.MessageLimits{MaxUnreliableSize: 100}})
	ws := raw(t, url)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := ws.Write(ctx, cws.MessageBinary, []byte{16, 1}); err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	big := append([]byte{2}, make([]byte, 101)...)
	small := append([]byte{2}, msg('c', 1)...)
	for _, f := range [][]byte{big, small} {
		if err := ws.Write(ctx, cws.MessageBinary, f); err != nil {
			t.Fatal(err)
		}
	}
	if got := receive(t, s, 1); got[0] != (rec{transport.Unreliable, 'c', 1}) {
		t.Fatalf("got %+v", got)
	}
	if st := s.Stats().Channels[transport.Unreliable]; st.DroppedOversize != 1 || st.Received != 1 {
		t.Fatalf("unreliable stats %+v", st)
	}
	if s.Err() != nil {
		t.Fatalf("conn closed: %v", s.Err())
	}
}

func TestReceiveOverflowCloses(t *testing.T) {
	ln, url := server(t, websocket.Config{Limits: transport.MessageLimits{ReceiveQueueMessages: 4}})
	c, s := connect(t, ln, url, websocket.Config{})
	for i := range 5 {
		if err := c.Send(transport.ReliableOrdered, msg('c', i)); err != nil {
			t.Fatal(err)
		}
	}
	<-c.Done() // the server never calls Receive
	if !errors.Is(c.Err(), transport.ErrReceiveOverflow) || !errors.Is(s.Err(), transport.ErrReceiveOverflow) {
		t.Fatalf("client Err = %v, server Err = %v", c.Err(), s.Err())
	}
}

func TestIdleTimeout(t *testing.T) {
	ln, url := server(t, websocket.Config{IdleTimeout: 150 * time.Millisecond})
	ws := raw(t, url)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := ws.Write(ctx, cws.MessageBinary, []byte{16, 1}); err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The raw client answers no pings and sends nothing.
	<-s.Done()
	if !errors.Is(s.Err(), transport.ErrTimeout) {
		t.Fatalf("Err = %v", s.Err())
	}
}

func TestKeepAliveAndRTT(t *testing.T) {
	cfg := websocket.Config{IdleTimeout: 600 * time.Millisecond}
	ln, url := server(t, cfg)
	c, s := connect(t, ln, url, cfg)
	// Idle for several timeouts: pings (every 200 ms) keep both ends
	// alive and measure.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := c.WaitReceive(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReceive = %v", err)
	}
	if c.Err() != nil || s.Err() != nil {
		t.Fatalf("closed: %v / %v", c.Err(), s.Err())
	}
	if c.Stats().RTT <= 0 || s.Stats().RTT <= 0 {
		t.Fatalf("RTT %v / %v", c.Stats().RTT, s.Stats().RTT)
	}
}

func TestBacklogFullRefuses(t *testing.T) {
	_, url := server(t, websocket.Config{AcceptBacklog: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, err := websocket.Dial(ctx, url, websocket.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = websocket.Dial(ctx, url, websocket.Config{})
	if !errors.Is(err, transport.ErrRefused) {
		t.Fatalf("second Dial = %v, want ErrRefused", err)
	}
}

func TestPendingUpgradesBounded(t *testing.T) {
	_, url := server(t, websocket.Config{MaxPending: 1})
	raw(t, url) // upgraded, no hello: it holds the one pending place
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := websocket.Dial(ctx, url, websocket.Config{}); !errors.Is(err, transport.ErrRefused) {
		t.Fatalf("Dial with the pending place taken = %v, want ErrRefused", err)
	}
}

func TestSendErrors(t *testing.T) {
	ln, url := server(t, websocket.Config{})
	c, _ := connect(t, ln, url, websocket.Config{Limits: transport.MessageLimits{MaxMessageSize: 64, MaxUnreliableSize: 32, SendQueueMessages: 1}})
	var se *transport.SizeError
	if err := c.Send(transport.ReliableOrdered, make([]byte, 65)); !errors.As(err, &se) || se.Limit != 64 {
		t.Fatalf("oversize reliable: %v", err)
	}
	if err := c.Send(transport.Unreliable, make([]byte, 33)); !errors.Is(err, transport.ErrTooLarge) {
		t.Fatalf("oversize unreliable: %v", err)
	}
	if err := c.Send(3, nil); !errors.Is(err, transport.ErrInvalidChannel) {
		t.Fatalf("channel 3: %v", err)
	}
	if c.MaxUnreliableSize() != 32 {
		t.Fatalf("MaxUnreliableSize %d", c.MaxUnreliableSize())
	}
	_ = bytes.MinRead
}
