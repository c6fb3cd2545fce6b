package dashboard_test

import (
	"net/http"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/dashboard"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
)

// A game server mounts the dashboard beside its other handlers in one
// line, and records its figures each tick (metrics.Server.Sample).
func ExampleNew() {
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: replicate.NewProtocol()})
	defer srv.Close()
	m := metrics.NewServer(srv, metrics.ServerConfig{})

	mux := http.NewServeMux()
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", dashboard.New(dashboard.Config{Title: "arena", Server: m})))
	// go http.ListenAndServe(":8080", mux)
	// Output:
}
