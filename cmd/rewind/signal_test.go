package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	rsignal "github.com/rewindgo/rewind/transport/signal"
)

// TestSignal: "rewind signal" serves rooms; two peers join one and relay
// an offer, and an interrupt stops the server with its counts.
func TestSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := newLineWriter("rooms at ")
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"signal", "--listen", "127.0.0.1:0"}, out, out) }()
	select {
	case <-out.seen:
	case c := <-code:
		t.Fatalf("exit %d: %s", c, out)
	case <-time.After(10 * time.Second):
		t.Fatalf("no address printed: %s", out)
	}
	m := regexp.MustCompile(`ws://\S+/room/`).FindString(out.String())
	url := m + "t?n=2"
	a, err := rsignal.Join(ctx, url, rsignal.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := rsignal.Join(ctx, url, rsignal.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Receive(ctx); err != nil { // ready
		t.Fatal(err)
	}
	if err := a.Send(ctx, rsignal.Message{Type: rsignal.TypeOffer, To: 1, Data: "x"}); err != nil {
		t.Fatal(err)
	}
	if msg, err := b.Receive(ctx); err != nil || msg.Type != rsignal.TypeOffer || msg.From != 0 {
		t.Fatalf("%+v, %v", msg, err)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, out)
	}
	if !regexp.MustCompile(`1 messages relayed, 0 dropped`).MatchString(out.String()) {
		t.Fatalf("output %q", out)
	}
}

func TestSignalUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"help", "signal"}, 0, "-ttl"},
		{[]string{"help"}, 0, "rewind signal [flags]"},
		{[]string{"signal", "--ttl", "0s"}, 2, "--ttl and --max-rooms must be positive"},
		{[]string{"signal", "extra"}, 2, "unexpected arguments"},
		{[]string{"signal", "--listen", "256.0.0.1:0"}, 1, "256.0.0.1"},
	} {
		var out bytes.Buffer
		code := run(t.Context(), c.args, &out, &out)
		if code != c.code || !strings.Contains(out.String(), c.want) {
			t.Errorf("rewind %q: exit %d (want %d), output %q (want %q)", c.args, code, c.code, out.String(), c.want)
		}
	}
}
