package agones_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ops/agones"
	"github.com/rewindgo/rewind/ops/agones/agonestest"
)

func newSDK(f *agonestest.Fake) *agones.SDK {
	return agones.New(agones.Config{Client: f.Client(), BaseURL: "http://localhost:9358", RetryFor: 10 * time.Second, RetryEvery: 250 * time.Millisecond})
}

// Every call reaches its documented endpoint with its documented body,
// and the GameServer object follows.
func TestSDKCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := agonestest.New("gs-1")
		sdk := newSDK(f)
		ctx := t.Context()
		must(t, sdk.SetLabel(ctx, "mode", "arena"))
		must(t, sdk.SetAnnotation(ctx, "map", "dust"))
		must(t, sdk.Ready(ctx))
		must(t, sdk.Health(ctx))
		must(t, sdk.Reserve(ctx, 30*time.Second))
		must(t, sdk.Allocate(ctx))
		gs, err := sdk.GameServer(ctx)
		must(t, err)
		must(t, sdk.Shutdown(ctx))
		want := []agonestest.Call{
			{Method: "PUT", Path: "/metadata/label", Body: `{"key":"mode","value":"arena"}`},
			{Method: "PUT", Path: "/metadata/annotation", Body: `{"key":"map","value":"dust"}`},
			{Method: "POST", Path: "/ready", Body: "{}"},
			{Method: "POST", Path: "/health", Body: "{}"},
			{Method: "POST", Path: "/reserve", Body: `{"seconds":30}`},
			{Method: "POST", Path: "/allocate", Body: "{}"},
			{Method: "GET", Path: "/gameserver", Body: ""},
			{Method: "POST", Path: "/shutdown", Body: "{}"},
		}
		if got := f.Calls(); !slices.Equal(got, want) {
			t.Fatalf("calls\n%q\nwant\n%q", got, want)
		}
		if gs.ObjectMeta.Name != "gs-1" || gs.Status.State != agones.StateAllocated ||
			gs.ObjectMeta.Labels["agones.dev/sdk-mode"] != "arena" || gs.ObjectMeta.Annotations["agones.dev/sdk-map"] != "dust" {
			t.Fatalf("game server %+v", gs)
		}
		if s := f.GameServer().Status.State; s != agones.StateShutdown {
			t.Fatalf("state %s after Shutdown", s)
		}
	})
}

// The sidecar may start after the game server: calls retry until it
// answers, and give up with ErrUnavailable after RetryFor.
func TestRetryWhileSidecarStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := agonestest.New("gs")
		f.SetDown(true)
		sdk := newSDK(f)
		start := time.Now()
		done := make(chan error)
		go func() { done <- sdk.Ready(t.Context()) }()
		time.Sleep(2 * time.Second) // the sidecar starts 2 s late
		f.SetDown(false)
		if err := <-done; err != nil {
			t.Fatalf("Ready: %v", err)
		}
		if d := time.Since(start); d < 2*time.Second || d > 2*time.Second+250*time.Millisecond {
			t.Fatalf("Ready took %v, want the 2 s outage plus at most one retry period", d)
		}
		f.SetDown(true)
		err := sdk.Health(t.Context())
		if !errors.Is(err, agones.ErrUnavailable) || !errors.Is(err, agonestest.ErrRefused) {
			t.Fatalf("Health with the sidecar down: %v, want ErrUnavailable wrapping the refusal", err)
		}
	})
}

// A refusal (not 200) is ErrStatus, not retried.
func TestStatusError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := agonestest.New("gs")
		err := newSDK(f).SetLabel(t.Context(), "", "x")
		if !errors.Is(err, agones.ErrStatus) || f.Count("/metadata/label") != 1 {
			t.Fatalf("empty key: %v after %d calls, want ErrStatus after 1", err, f.Count("/metadata/label"))
		}
	})
}

// game records what Run asks of it.
type game struct {
	done      chan struct{}
	allocated chan agones.GameServer
	drained   chan struct{}
}

func newGame() *game {
	return &game{done: make(chan struct{}), allocated: make(chan agones.GameServer, 1), drained: make(chan struct{})}
}

func (g *game) Allocated(_ context.Context, gs agones.GameServer) error {
	g.allocated <- gs
	return nil
}
func (g *game) Done() <-chan struct{} { return g.done }
func (g *game) Drain(context.Context) error {
	close(g.drained)
	return nil
}

// The whole lifecycle: metadata, Ready, health pings, allocation seen on
// the watch, the match's end, drain, Shutdown.
func TestRunMatchEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := agonestest.New("gs-7")
		g := newGame()
		ret := make(chan error)
		go func() {
			ret <- agones.Run(t.Context(), agones.RunConfig{SDK: newSDK(f), Labels: map[string]string{"match": "m1"}, HealthEvery: time.Second}, g)
		}()
		synctest.Wait()
		if s := f.GameServer().Status.State; s != agones.StateReady {
			t.Fatalf("state %s, want Ready", s)
		}
		select {
		case <-g.allocated:
			t.Fatal("allocated before Agones allocated it")
		default:
		}
		time.Sleep(10 * time.Second) // waiting for a player: health pings go on
		f.SetState(agones.StateAllocated)
		gs := <-g.allocated
		if gs.ObjectMeta.Name != "gs-7" {
			t.Fatalf("allocated %+v", gs)
		}
		close(g.done) // the match ends
		if err := <-ret; err != nil {
			t.Fatalf("Run: %v", err)
		}
		<-g.drained
		want := []string{"PUT /metadata/label", "POST /ready", "GET /watch/gameserver", "POST /shutdown"}
		if got := f.Paths(); !slices.Equal(got, want) {
			t.Fatalf("calls %q, want %q", got, want)
		}
		if n := f.Count("/health"); n < 10 || n > 12 {
			t.Fatalf("%d health pings in 10 s at 1 s, want about 11", n)
		}
	})
}

// SIGTERM (the context) before the match ends: drain, then Shutdown.
func TestRunStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := agonestest.New("gs")
		g := newGame()
		ctx, stop := context.WithCancel(t.Context())
		ret := make(chan error)
		go func() { ret <- agones.Run(ctx, agones.RunConfig{SDK: newSDK(f)}, g) }()
		synctest.Wait()
		f.SetState(agones.StateAllocated)
		<-g.allocated
		stop() // SIGTERM
		if err := <-ret; err != nil {
			t.Fatalf("Run: %v", err)
		}
		<-g.drained
		if s := f.GameServer().Status.State; s != agones.StateShutdown {
			t.Fatalf("state %s, want Shutdown", s)
		}
	})
}

// The fake serves over real HTTP too; the watch streams every change.
func TestWatchOverLoopback(t *testing.T) {
	f := agonestest.New("gs")
	srv := httptest.NewServer(f)
	defer srv.Close()
	sdk := agones.New(agones.Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel() // before srv.Close, which waits for the stream
	states := make(chan string, 8)
	ret := make(chan error)
	go func() { ret <- sdk.Watch(ctx, func(gs agones.GameServer) { states <- gs.Status.State }) }()
	if s := <-states; s != agones.StateScheduled {
		t.Fatalf("first state %s", s)
	}
	must(t, sdk.Ready(ctx))
	if s := <-states; s != agones.StateReady {
		t.Fatalf("after Ready: %s", s)
	}
	cancel()
	if err := <-ret; err != nil {
		t.Fatalf("Watch after cancel: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
