package quic_test

import (
	"strings"
	"testing"

	"github.com/rewindgo/rewind/transport/quic"
)

// TestSelfSignedLoopback: a certificate for "localhost" is valid for the
// loopback addresses too, so a client that dials 127.0.0.1 or [::1] (as
// the examples and demos do) does not fail with "doesn't contain any IP
// SANs"; other names stay exactly as given.
func TestSelfSignedLoopback(t *testing.T) {
	cases := []struct {
		hosts      []string
		valid, not []string
	}{
		{nil, []string{"localhost", "127.0.0.1", "::1"}, []string{"example.com", "10.0.0.1"}},
		{[]string{"localhost"}, []string{"localhost", "127.0.0.1", "::1"}, []string{"example.com"}},
		{[]string{"game.example", "10.0.0.7"}, []string{"game.example", "10.0.0.7"}, []string{"localhost", "127.0.0.1"}},
	}
	for _, c := range cases {
		srv, _, err := quic.SelfSigned(c.hosts...)
		if err != nil {
			t.Fatal(err)
		}
		leaf := srv.Certificates[0].Leaf
		for _, h := range c.valid {
			if err := leaf.VerifyHostname(h); err != nil {
				t.Errorf("SelfSigned(%q): %s: %v", c.hosts, h, err)
			}
		}
		for _, h := range c.not {
			if leaf.VerifyHostname(h) == nil {
				t.Errorf("SelfSigned(%q): valid for %s", c.hosts, h)
			}
		}
	}
}

// TestListenInUse: a QUIC listener on a UDP port already in use fails with
// one readable error that names the address once.
func TestListenInUse(t *testing.T) {
	srvTLS, _, err := quic.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	l, err := quic.Listen(t.Context(), "127.0.0.1:0", quic.Config{TLS: srvTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	_, err = quic.Listen(t.Context(), addr, quic.Config{TLS: srvTLS})
	if err == nil {
		t.Fatal("second listen on", addr, "succeeded")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "quic: listen udp "+addr+": ") || strings.Count(msg, addr) != 1 {
		t.Errorf("error %q: want the address named once, after \"quic: listen udp\"", msg)
	}
}
