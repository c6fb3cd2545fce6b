package main

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/rewindgo/rewind/ops/agones"
	"github.com/rewindgo/rewind/ops/agones/agonestest"
)

func sdkConfig(f *agonestest.Fake) agones.Config {
	return agones.Config{Client: f.Client(), RetryEvery: 10 * time.Millisecond}
}

// A child that ends (the match is over) ends the lifecycle: Ready, then
// Shutdown.
func TestChildExits(t *testing.T) {
	f := agonestest.New("gs")
	err := run(t.Context(), []string{"--label", "game=arena", "--", "true"}, sdkConfig(f), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PUT /metadata/label", "POST /ready", "GET /watch/gameserver", "POST /shutdown"}
	if got := f.Paths(); !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if l := f.GameServer().ObjectMeta.Labels["agones.dev/sdk-game"]; l != "arena" {
		t.Fatalf("label %q", l)
	}
}

// SIGTERM (the context) is passed on to the child; once it exited, the
// server shuts down.
func TestStopPassesSIGTERM(t *testing.T) {
	f := agonestest.New("gs")
	ctx, stop := context.WithCancel(t.Context())
	ret := make(chan error)
	go func() { ret <- run(ctx, []string{"--", "sleep", "60"}, sdkConfig(f), io.Discard) }()
	for f.GameServer().Status.State != agones.StateReady {
		<-f.Changed()
	}
	start := time.Now()
	stop()
	if err := <-ret; err != nil {
		t.Fatalf("run: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v: the child did not get SIGTERM", d)
	}
	if s := f.GameServer().Status.State; s != agones.StateShutdown {
		t.Fatalf("state %s, want Shutdown", s)
	}
}
