package predict_test

import (
	"context"
	"github.com/rewindgo/rewind/tick"
	"net/netip"
	"testing"

	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// dialMem dials ln on the in-memory network and gives the server's end of
// the conn to srv. The test's client connects on the returned conn (on a
// clean link: condition it after with setLinks).
func dialMem(t testing.TB, net *transport.MessageNetwork, ln *transport.MessageNetworkListener, srv *replicate.Server) *transport.MessageNetworkConn {
	t.Helper()
	conn, err := net.Dial(context.Background(), ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	sconn, err := ln.Accept(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv.AddConn(sconn)
	return conn
}

// setLinks conditions both directions between a and b with link.
func setLinks(net *transport.MessageNetwork, a, b netip.AddrPort, link transport.LinkConfig) {
	net.SetLink(a, b, link)
	net.SetLink(b, a, link)
}

// Move is a game input: 3 bytes with the default encoding.
type Move struct {
	DX, DY int8
	Fire   bool
}

// moveAt is the input a test client sends for tick t.
func moveAt(t tick.Tick, player int) Move {
	return Move{DX: int8(t), DY: int8(player), Fire: t%3 == 0}
}

func inputProtocol(t testing.TB, cfg input.Config) (*replicate.Protocol, *input.Type[Move]) {
	t.Helper()
	p := replicate.NewProtocol()
	in, err := input.Register[Move](p, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, in
}
