package signal_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rewindgo/rewind/transport/signal"
)

// newServer starts a signalling server on loopback and returns it and its
// ws:// base URL.
func newServer(t *testing.T, cfg signal.ServerConfig) (*signal.Server, string) {
	t.Helper()
	srv := signal.NewServer(cfg)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http")
}

func join(t *testing.T, url string) *signal.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := signal.Join(ctx, url, signal.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func receive(t *testing.T, c *signal.Client) signal.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	m, err := c.Receive(ctx)
	if err != nil {
		t.Fatalf("peer %d: %v", c.Index(), err)
	}
	return m
}

func TestRoomIndexesReadyAndRelay(t *testing.T) {
	srv, base := newServer(t, signal.ServerConfig{})
	url := base + "/room/match-1?n=3"
	var cs []*signal.Client
	for i := range 3 {
		c := join(t, url)
		if c.Index() != i || c.N() != 3 {
			t.Fatalf("peer %d: index %d of %d", i, c.Index(), c.N())
		}
		cs = append(cs, c)
	}
	for _, c := range cs {
		if m := receive(t, c); m.Type != signal.TypeReady || m.N != 3 {
			t.Fatalf("peer %d: %+v, want ready", c.Index(), m)
		}
	}
	ctx := t.Context()
	// Offers, answers and candidates reach the peer they name, stamped
	// with the sender; the sender's own From is ignored.
	sends := []struct {
		from, to int
		typ      string
	}{{0, 2, signal.TypeOffer}, {2, 0, signal.TypeAnswer}, {2, 1, signal.TypeCandidate}, {1, 0, signal.TypeOffer}}
	for _, s := range sends {
		if err := cs[s.from].Send(ctx, signal.Message{Type: s.typ, To: s.to, From: 7, Data: "sdp from " + s.typ}); err != nil {
			t.Fatal(err)
		}
		m := receive(t, cs[s.to])
		if m.Type != s.typ || m.From != s.from || m.Data != "sdp from "+s.typ {
			t.Fatalf("peer %d received %+v, want %s from %d", s.to, m, s.typ, s.from)
		}
	}
	if st := srv.Stats(); st.Relayed != 4 || st.Rooms != 1 || st.Peers != 3 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
	// A peer that leaves is announced; the room goes with its last peer.
	cs[1].Close()
	for _, i := range []int{0, 2} {
		if m := receive(t, cs[i]); m.Type != signal.TypeLeave || m.From != 1 {
			t.Fatalf("peer %d: %+v, want leave from 1", i, m)
		}
	}
	cs[0].Close()
	if m := receive(t, cs[2]); m.Type != signal.TypeLeave || m.From != 0 {
		t.Fatalf("peer 2: %+v, want leave from 0", m)
	}
	cs[2].Close()
	waitFor(t, func() bool { return srv.Stats().Rooms == 0 })
}

// waitFor polls cond (the server's bookkeeping follows a peer's close
// asynchronously) for up to 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRefused(t *testing.T) {
	srv, base := newServer(t, signal.ServerConfig{MaxRooms: 1})
	join(t, base+"/room/a?n=2")
	join(t, base+"/room/a?n=2")
	ctx := t.Context()
	cases := []struct {
		url  string
		want error
	}{
		{base + "/room/a?n=2", signal.ErrRoomFull},
		{base + "/room/a?n=3", signal.ErrRoomSize},
		{base + "/room/b?n=1", signal.ErrBadRoom},
		{base + "/room/b?n=17", signal.ErrBadRoom},
		{base + "/room/no%20spaces", signal.ErrBadRoom},
		{base + "/room/" + strings.Repeat("x", signal.MaxRoomName+1), signal.ErrBadRoom},
		{base + "/room/b?n=2", nil}, // too many rooms: refused, no sentinel
	}
	for _, c := range cases {
		_, err := signal.Join(ctx, c.url, signal.ClientConfig{})
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.url, err, c.want)
		}
		if errors.Is(err, signal.ErrRoomFull) && errors.Is(err, signal.ErrRoomSize) {
			t.Errorf("%s: %v is both full and of another size", c.url, err)
		}
	}
	if st := srv.Stats(); st.Refused != uint64(len(cases)) {
		t.Fatalf("refused %d, want %d", st.Refused, len(cases))
	}
}

func TestRoomExpires(t *testing.T) {
	srv, base := newServer(t, signal.ServerConfig{RoomTTL: time.Second}) // long enough for Join on a busy machine
	c := join(t, base+"/room/short?n=2")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.Receive(ctx); !errors.Is(err, signal.ErrClosed) || ctx.Err() != nil {
		t.Fatalf("Receive after expiry: %v, want ErrClosed before the timeout", err)
	}
	if st := srv.Stats(); st.Expired != 1 || st.Rooms != 0 {
		t.Fatalf("stats %+v", st)
	}
	// The name is free again.
	if c := join(t, base+"/room/short?n=2"); c.Index() != 0 {
		t.Fatalf("index %d in a new room", c.Index())
	}
}

// TestHostilePeer: what a peer sends that cannot be relayed is dropped and
// counted, and the room keeps working for the others; a message over the
// size limit disconnects only its sender.
func TestHostilePeer(t *testing.T) {
	srv, base := newServer(t, signal.ServerConfig{})
	url := base + "/room/h?n=3"
	a, b := join(t, url), join(t, url)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	evil, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer evil.CloseNow()
	evil.SetReadLimit(signal.MaxMessageSize)
	for _, c := range []*signal.Client{a, b} {
		receive(t, c) // ready
	}
	bad := []string{
		`not json`, `{"type":"welcome","to":0}`, `{"type":"offer","to":2}`, // self
		`{"type":"offer","to":5}`, `{"type":"offer","to":-1}`, `{"type":"ready","n":99}`, `{"type":"bogus"}`, `[]`, ``,
	}
	for _, m := range bad {
		if err := evil.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := evil.Write(ctx, websocket.MessageText, []byte(`{"type":"candidate","to":0,"data":"ok"}`)); err != nil {
		t.Fatal(err)
	}
	if m := receive(t, a); m.Type != signal.TypeCandidate || m.From != 2 || m.Data != "ok" {
		t.Fatalf("a received %+v", m)
	}
	if st := srv.Stats(); st.Dropped != uint64(len(bad)) || st.Relayed != 1 {
		t.Fatalf("stats %+v, want %d dropped, 1 relayed", st, len(bad))
	}
	// Over the size limit: the sender is disconnected, the others told.
	_ = evil.Write(ctx, websocket.MessageText, []byte(`{"type":"offer","to":0,"data":"`+strings.Repeat("x", signal.MaxMessageSize)+`"}`))
	for _, c := range []*signal.Client{a, b} {
		if m := receive(t, c); m.Type != signal.TypeLeave || m.From != 2 {
			t.Fatalf("peer %d: %+v, want leave from 2", c.Index(), m)
		}
	}
	if err := a.Send(ctx, signal.Message{Type: signal.TypeOffer, To: 1, Data: "still works"}); err != nil {
		t.Fatal(err)
	}
	if m := receive(t, b); m.Data != "still works" {
		t.Fatalf("b received %+v", m)
	}
}

func TestDecode(t *testing.T) {
	good := `{"type":"offer","from":1,"to":3,"data":"v=0"}`
	m, err := signal.Decode([]byte(good))
	if err != nil || m.Type != signal.TypeOffer || m.From != 1 || m.To != 3 || m.Data != "v=0" {
		t.Fatalf("%+v, %v", m, err)
	}
	for _, b := range []string{``, `null`, `{"type":"x"}`, `{"type":"offer","to":16}`, `{"type":"ready","n":17}`,
		`{"type":"offer","from":-3}`, `{"type":"offer","data":` + strings.Repeat(" ", signal.MaxMessageSize) + `""}`} {
		if _, err := signal.Decode([]byte(b)); !errors.Is(err, signal.ErrMalformed) {
			t.Errorf("Decode(%.40q): %v, want ErrMalformed", b, err)
		}
	}
	if _, err := signal.Encode(signal.Message{Type: signal.TypeOffer, To: signal.MaxPeers}); !errors.Is(err, signal.ErrMalformed) {
		t.Errorf("Encode of a bad index: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"offer","from":1,"to":3,"data":"v=0"}`))
	f.Add([]byte(`{"type":"welcome","index":1,"n":2}`))
	f.Add([]byte(`{"type":"candidate","to":0,"data":"{\"candidate\":\"x\"}"}`))
	f.Add([]byte(`{"type":"leave","from":15}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := signal.Decode(b)
		if err != nil {
			if !errors.Is(err, signal.ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		// What decodes re-encodes, and decodes to the same message.
		enc, err := signal.Encode(m)
		if err != nil {
			t.Fatalf("Encode(%+v): %v", m, err)
		}
		m2, err := signal.Decode(enc)
		if err != nil || m2 != m {
			t.Fatalf("round trip: %+v -> %+v, %v", m, m2, err)
		}
	})
}
