package replicate_test

import (
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport/quic"
)

// heapInUse returns the live heap after two collections (the second
// empties the sync.Pool victim caches).
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// hostileQUIC dials addr with quic-go and never says hello: it announces
// messages of 1 MiB on the ordered stream and on 7 unidirectional streams,
// sends real bytes of the first (partial, shared by all peers so that the
// test's own memory does not grow with them), a byte of each other, and then
// nothing more. It returns the raw connection.
func hostileQUIC(ctx context.Context, addr string, srv *quic.Config, partial []byte) (*quicgo.Conn, error) {
	qc, err := quicgo.DialAddr(ctx, addr, srv.TLS.Clone(), &quicgo.Config{EnableDatagrams: true, MaxIdleTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	st, err := qc.OpenStream()
	if err != nil {
		return qc, err
	}
	if _, err := st.Write(binary.AppendUvarint([]byte{1}, 1<<20)); err != nil { // preface, length
		return qc, err
	}
	if _, err := st.Write(partial); err != nil {
		return qc, err
	}
	for range 7 {
		u, err := qc.OpenUniStreamSync(ctx)
		if err != nil {
			return qc, err
		}
		if _, err := u.Write(binary.AppendUvarint(nil, 1<<20)); err != nil {
			return qc, err
		}
		if _, err := u.Write([]byte{0}); err != nil {
			return qc, err
		}
	}
	return qc, nil
}

// TestHostileQUICPeersBounded: 100 QUIC peers that announce 1 MiB
// messages and never finish them (nor say hello) cost the server the bytes
// they really sent, up to the listener's MaxBufferedBytes beyond 64 KiB per
// conn, instead of the announced lengths; the honest clients beside them
// keep converging.
func TestHostileQUICPeersBounded(t *testing.T) {
	hostile := raceSize(100, 25)   // handshakes are slow under the race detector
	const partial = 256 << 10      // real bytes each hostile peer sends
	buffered := hostile * 80 << 10 // the listener's shared cap: 7.8 MiB for 100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srvTLS, cliTLS, err := quic.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := quic.Listen(ctx, "127.0.0.1:0", quic.Config{TLS: srvTLS, MaxBufferedBytes: buffered})
	if err != nil {
		t.Fatal(err)
	}
	tp := newProto(t)
	sw := ecs.New()
	// The server keeps the silent peers pending (its own caps would close
	// them): what they cost while connected is under test.
	srv, err := replicate.NewServer(replicate.ServerConfig{World: sw, Protocol: tp.p, MaxPending: 2 * hostile, HelloTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() { _ = srv.Serve(ctx, ln) }()
	var clients []*replicate.Client
	var cws []*ecs.World
	for range 2 {
		dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
		conn, err := quic.Dial(dctx, ln.Addr().String(), quic.Config{TLS: cliTLS})
		dcancel()
		if err != nil {
			t.Fatal(err)
		}
		cw := ecs.New()
		c, err := replicate.NewClient(replicate.ClientConfig{World: cw, Protocol: newProto(t).p})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Connect(conn); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients, cws = append(clients, c), append(cws, cw)
	}
	var ents []ecs.Entity
	for i := range 100 {
		ents = append(ents, spawnRep(sw, Position{X: float64(i)}, int32(i)))
	}
	pos := ecs.StoreOf[Position](sw)
	k := 0
	step := func() {
		k++
		for i, e := range ents {
			if (i+k)%5 == 0 {
				_ = pos.Set(e, Position{X: float64(k), Y: float64(i)})
			}
		}
		srv.Send()
		for _, c := range clients {
			c.Update()
		}
		time.Sleep(2 * time.Millisecond)
	}
	converge := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			for range 3 { // stop changing, and let the last changes arrive
				srv.Send()
				for _, c := range clients {
					c.Update()
				}
				time.Sleep(2 * time.Millisecond)
			}
			ok := true
			for i, c := range clients {
				ok = ok && c.State() == replicate.Connected && diffViews(serverView(&harness{sw: sw}, nil), clientView(c, cws[i])) == ""
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("honest clients did not converge %s", what)
			}
		}
	}
	for range 20 {
		step()
	}
	converge("before the hostile peers")
	before := heapInUse()

	payload := make([]byte, partial)
	var wg sync.WaitGroup
	raws := make([]*quicgo.Conn, hostile)
	errs := make([]error, hostile)
	dialing := make(chan struct{}, 8) // handshakes at once
	for i := range hostile {
		wg.Go(func() {
			dialing <- struct{}{}
			defer func() { <-dialing }()
			dctx, dcancel := context.WithTimeout(ctx, 20*time.Second)
			defer dcancel()
			raws[i], errs[i] = hostileQUIC(dctx, ln.Addr().String(), &quic.Config{TLS: cliTLS}, payload)
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	for running := true; running; {
		select {
		case <-finished:
			running = false
		default:
		}
		step()
	}
	defer func() {
		for _, qc := range raws {
			if qc != nil {
				qc.CloseWithError(0, "")
			}
		}
	}()
	for range 50 { // let the server read what they sent
		step()
	}
	converge("beside the hostile peers")
	with := heapInUse()
	overflow := 0
	for i, qc := range raws {
		var ae *quicgo.ApplicationError
		switch {
		case qc == nil:
			t.Fatalf("hostile peer %d: %v", i, errs[i])
		case errors.As(context.Cause(qc.Context()), &ae) && ae.Remote && ae.ErrorCode == 1:
			overflow++ // closed with transport.ErrReceiveOverflow
		case qc.Context().Err() != nil:
			t.Fatalf("hostile peer %d closed by %v", i, context.Cause(qc.Context()))
		}
	}
	t.Logf("heap %.1f MiB before, %.1f MiB with %d hostile peers (%d closed by the server for overflowing its buffers)",
		float64(before)/(1<<20), float64(with)/(1<<20), hostile, overflow)
	// Each hostile peer costs its real bytes (64 KiB of them free of the
	// shared cap) and QUIC state on both sides (the peers run in this
	// process); announced lengths cost nothing. Together they sent 256 KiB
	// each, more than the cap (80 KiB each) and their 64 KiB allowances:
	// the server closed the peers that needed more.
	// 4 MiB more for the runtime's own noise.
	if growth := int64(with) - int64(before); growth > int64(buffered+hostile*(64<<10+192<<10)+4<<20) {
		t.Fatalf("heap grew by %.1f MiB with %d hostile peers", float64(growth)/(1<<20), hostile)
	}
	if overflow < hostile-(buffered+hostile*64<<10)/partial {
		t.Fatalf("%d hostile peers closed for overflow, want the ones past the cap", overflow)
	}
}
