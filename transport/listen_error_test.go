package transport_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rewindgo/rewind/transport"
)

// TestListenUDPInUse: listening on a port already in use fails with one
// readable error that names the address once.
func TestListenUDPInUse(t *testing.T) {
	ctx := t.Context()
	a, err := transport.ListenUDP(ctx, "127.0.0.1:0", transport.UDPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	addr := a.LocalAddr().String()
	_, err = transport.ListenUDP(context.Background(), addr, transport.UDPConfig{})
	if err == nil {
		t.Fatal("second listen on", addr, "succeeded")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "transport: listen udp "+addr+": ") || strings.Count(msg, addr) != 1 {
		t.Errorf("error %q: want the address named once, after \"transport: listen udp\"", msg)
	}
}
