package metrics_test

import (
	"fmt"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
)

// A server records its figures once per tick, after the send phase, on
// the goroutine that runs it; a scraper or a dashboard reads a copy from
// any goroutine.
func ExampleServer() {
	srv, err := replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: newProtocol()})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	m := metrics.NewServer(srv, metrics.ServerConfig{})
	for range 3 {
		start := time.Now()
		srv.Receive()
		// ... simulate the tick ...
		srv.Send()
		m.Events(srv.Events())
		m.Sample(time.Since(start))
	}
	var f metrics.ServerFigures
	m.Read(&f)
	fmt.Println(f.Samples, "samples,", len(f.Clients), "clients,", f.TickDuration.Count, "tick durations")
	// Output: 3 samples, 0 clients, 3 tick durations
}
