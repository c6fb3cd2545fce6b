package input_test

import (
	"context"
	"testing"
	"time"

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

// wireTick is the tick length of the tests over the in-memory network.
const wireTick = time.Second / 60
