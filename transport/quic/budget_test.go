package quic

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/transport"
)

// TestSharedBudget: 8 peers that each send 128 KiB of a 1 MiB message they
// never finish need 64 KiB each beyond their allowance; a listener whose
// MaxBufferedBytes is 256 KiB closes those it cannot cover with
// ErrReceiveOverflow, never holds more, keeps an honest conn with small
// messages working throughout, and has every byte back once the conns
// are closed.
func TestSharedBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	srvTLS, cliTLS, err := SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	const limit = 256 << 10
	ln, err := Listen(ctx, "127.0.0.1:0", Config{TLS: srvTLS, MaxBufferedBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	honest, err := Dial(ctx, ln.Addr().String(), Config{TLS: cliTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer honest.Close()
	honestSrv, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var srvConns []transport.MessageConn
	for range 8 {
		qc, err := quicgo.DialAddr(ctx, ln.Addr().String(), cliTLS.Clone(), &quicgo.Config{EnableDatagrams: true})
		if err != nil {
			t.Fatal(err)
		}
		defer qc.CloseWithError(0, "")
		st, err := qc.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		// The write fails if the server closes the conn first.
		_, _ = st.Write(append(binary.AppendUvarint([]byte{preface}, 1<<20), make([]byte, 128<<10)...))
		s, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		srvConns = append(srvConns, s)
	}
	used := func() int {
		return ln.buf.Used()
	}
	// Wait until the peers' bytes are in: every conn holds its 128 KiB or
	// was closed.
	for {
		held, closed := 0, 0
		for _, s := range srvConns {
			c := s.(*Conn)
			c.mu.Lock()
			_, b := c.rx.Usage()
			c.mu.Unlock()
			switch {
			case s.Err() != nil:
				closed++
			case b == 128<<10:
				held++
			}
		}
		if u := used(); u > limit {
			t.Fatalf("shared budget at %d bytes, over its %d", u, limit)
		}
		if held+closed == len(srvConns) {
			if closed < 4 || held > limit/(64<<10) {
				t.Fatalf("%d conns closed, %d hold their bytes: want the ones past %d bytes closed", closed, held, limit)
			}
			t.Logf("%d conns closed, %d hold 128 KiB each, %d bytes of the shared budget used", closed, held, used())
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d conns hold their bytes, %d closed, after 20 s", held, closed)
		}
		if err := honest.Send(transport.ReliableOrdered, []byte("ping")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, s := range srvConns {
		if err := s.Err(); err != nil && !errors.Is(err, transport.ErrReceiveOverflow) {
			t.Fatalf("conn closed with %v, want ErrReceiveOverflow", err)
		}
	}
	// The honest conn's pings all arrived, in order.
	if err := honest.Send(transport.ReliableOrdered, []byte("last")); err != nil {
		t.Fatal(err)
	}
	for {
		if err := honestSrv.WaitReceive(ctx); err != nil {
			t.Fatalf("honest conn: %v", err)
		}
		_, m, _ := honestSrv.Receive()
		if bytes.Equal(m, []byte("last")) {
			break
		}
		if !bytes.Equal(m, []byte("ping")) {
			t.Fatalf("honest conn received %q", m)
		}
	}
	for _, s := range srvConns {
		s.Close()
	}
	if u := used(); u != 0 {
		t.Fatalf("%d bytes of the shared budget still used after closing every conn", u)
	}
}
