package agones_test

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/agones"
	"github.com/rewindgo/rewind/ops/agones/agonestest"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport"
)

// matchRig is a replication match on the in-memory network, ticked at
// 60 Hz of virtual time by a goroutine until stop.
type matchRig struct {
	net   *transport.MessageNetwork
	ln    *transport.MessageNetworkListener
	srv   *replicate.Server
	match *agones.Match
	saved chan struct{}
}

func newMatchRig(t *testing.T, save bool) *matchRig {
	r := &matchRig{net: transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1}), saved: make(chan struct{})}
	t.Cleanup(func() { r.net.Close() })
	var err error
	if r.ln, err = r.net.Listen(netip.AddrPort{}); err != nil {
		t.Fatal(err)
	}
	if r.srv, err = replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: replicate.NewProtocol()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.srv.Close() })
	cfg := agones.MatchConfig{Server: r.srv, Listener: r.ln, FinishWithin: 5 * time.Second}
	if save {
		cfg.Save = func(context.Context) error {
			close(r.saved)
			return nil
		}
	}
	if r.match, err = agones.NewMatch(cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

// player dials the match with a new client, which says hello; the test
// runs its updates.
func (r *matchRig) player(ctx context.Context, t *testing.T) *replicate.Client {
	c, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: replicate.NewProtocol()})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := r.net.Dial(ctx, r.ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(conn); err != nil {
		t.Fatal(err)
	}
	return c
}

// Players get in after the allocation only; on SIGTERM the match stops
// accepting, plays on until it ends, and the server shuts down without
// saving.
func TestMatchLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMatchRig(t, true)
		f := agonestest.New("gs")
		ctx, sigterm := context.WithCancel(t.Context())
		ret := make(chan error)
		go func() { ret <- agones.Run(ctx, agones.RunConfig{SDK: newSDK(f)}, r.match) }()

		early := r.player(t.Context(), t)
		tick := func(n int) {
			for range n {
				r.srv.Receive()
				r.srv.Send()
				early.Update()
				time.Sleep(time.Second / 60)
			}
		}
		tick(60)
		if early.State() == replicate.Connected || r.match.Accepting() {
			t.Fatalf("a player got in before the allocation (state %v)", early.State())
		}
		f.SetState(agones.StateAllocated)
		synctest.Wait()
		tick(30)
		if early.State() != replicate.Connected || len(r.srv.Clients()) != 1 {
			t.Fatalf("after the allocation: player %v, %d clients", early.State(), len(r.srv.Clients()))
		}

		sigterm()
		synctest.Wait()
		if r.match.Accepting() {
			t.Fatal("still accepting after SIGTERM")
		}
		late := r.player(t.Context(), t)
		tick(60)
		late.Update()
		if late.State() == replicate.Connected || early.State() != replicate.Connected {
			t.Fatalf("draining: late player %v, early player %v", late.State(), early.State())
		}
		r.match.End() // the match finishes within FinishWithin
		if err := <-ret; err != nil {
			t.Fatalf("Run: %v", err)
		}
		select {
		case <-r.saved:
			t.Fatal("saved a checkpoint of a match that ended")
		default:
		}
		if s := f.GameServer().Status.State; s != agones.StateShutdown {
			t.Fatalf("state %s", s)
		}
	})
}

// A match that does not end within FinishWithin is saved.
func TestMatchSavedWhenItDoesNotEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMatchRig(t, true)
		f := agonestest.New("gs")
		ctx, sigterm := context.WithCancel(t.Context())
		ret := make(chan error)
		go func() { ret <- agones.Run(ctx, agones.RunConfig{SDK: newSDK(f)}, r.match) }()
		synctest.Wait()
		f.SetState(agones.StateAllocated)
		synctest.Wait()
		start := time.Now()
		sigterm()
		if err := <-ret; err != nil {
			t.Fatalf("Run: %v", err)
		}
		<-r.saved
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("saved after %v, want FinishWithin (5 s)", d)
		}
	})
}
