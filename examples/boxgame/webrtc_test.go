//go:build !js

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewindgo/rewind/examples/internal/webserve"
)

// startWeb serves what --web serves on loopback and returns its base URL
// (http://127.0.0.1:PORT) and the browser reports it received.
func startWeb(t *testing.T) (string, *webserve.Handler, <-chan []byte) {
	t.Helper()
	reports := make(chan []byte, 4)
	h, page, rooms, err := webServer(func(b []byte) {
		select {
		case reports <- b:
		default: // a fifth report: not ours
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { rooms.Close(); hs.Close() })
	return hs.URL, page, reports
}

// TestMatchWebRTC: two native peers join a room of the --web server's
// signalling and play 120 frames over WebRTC data channels, with loss on
// one side: same digest, and each plays the handle of its room index.
func TestMatchWebRTC(t *testing.T) {
	base, _, _ := startWeb(t)
	room := "ws" + strings.TrimPrefix(base, "http") + "/room/native"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := [][]string{
		{"--signal", room, "--frames", "120", "--script", "--loss", "0.1", "--latency", "5ms"},
		{"--signal", room, "--frames", "120", "--script"},
	}
	ms := make([]*match, len(lines))
	errs := make([]error, len(lines))
	var wg sync.WaitGroup
	for i, l := range lines {
		o, err := parseOptions(l, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { ms[i], errs[i] = newMatch(ctx, o) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("peer %d: %v", i, err)
		}
		defer ms[i].close()
	}
	play(t, ms, func() bool { return ms[0].complete() && ms[1].complete() }, func() string {
		return fmt.Sprintf("not complete: frames confirmed %d %d", ms[0].digest.Frames(), ms[1].digest.Frames())
	})
	handles := map[int]bool{}
	for i, m := range ms {
		s := m.summary(nil, nil)
		t.Logf("peer %d: local %v, digest %s over %d frames, %d rollbacks, %d B sent, link lost %d", i, s.Local, s.Digest, s.DigestFrames, s.Rollbacks, s.BytesSent, s.LinkLost)
		if !s.OK || s.Digest != ms[0].digest.String() || s.Players != 2 || len(s.Local) != 1 {
			t.Errorf("peer %d: %+v", i, s)
		}
		handles[s.Local[0]] = true
	}
	if !handles[0] || !handles[1] {
		t.Errorf("local handles %v, want 0 and 1", handles)
	}
}

// TestJoinBeforeServer: peers started before the --web server listens
// (two players started together) keep trying, and meet once it does.
func TestJoinBeforeServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := parseOptions([]string{"--signal", "ws://" + addr + "/room/late", "--frames", "30", "--script"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		m   *match
		err error
	}
	results := make(chan res, 2)
	for range 2 {
		go func() {
			m, err := newMatch(ctx, o)
			results <- res{m, err}
		}()
	}
	h, _, rooms, err := webServer(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rooms.Close()
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		defer r.m.close() // not before the other has its conn too
	}
}

func TestWebOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the error; "" for none
	}{
		{[]string{"--signal", "ws://h:1/room/a"}, ""},
		{[]string{"--signal", "http://h:1/room/a"}, "want ws://"},
		{[]string{"--signal", "ws://h:1/room/a", "--players", "local,local"}, "take the players from the room"},
		{[]string{"--web", ":0", "--synctest"}, "take the players from the room"},
		{[]string{"--web", ":0", "--num-players", "1"}, "2..4 players"},
		{[]string{"--web", ":0", "--room", "a b"}, "--room"},
	} {
		o, err := parseOptions(c.args, io.Discard)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.want == "" && o.Signal != "ws://h:1/room/a?n=2":
			t.Errorf("%q: signal %q", c.args, o.Signal)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
