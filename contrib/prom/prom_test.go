package prom_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rewindgo/rewind/contrib/prom"
	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/transport"
)

type pos struct{ X, Y float32 }

func newProtocol() *replicate.Protocol {
	p := replicate.NewProtocol()
	if _, err := replicate.Component[pos](p, replicate.WithOwnRule()); err != nil {
		panic(err)
	}
	return p
}

// match is a server with one entity moving every tick and one client
// over the in-memory network, its figures recorded.
type match struct {
	srv    *replicate.Server
	client *replicate.Client
	conn   *transport.MessageNetworkConn
	world  *ecs.World
	e      ecs.Entity
	m      *metrics.Server
}

func newMatch(t testing.TB) *match {
	ctx := context.Background()
	network := transport.NewMessageNetwork(transport.MessageNetworkConfig{Seed: 1})
	t.Cleanup(func() { network.Close() })
	ln, _ := network.Listen(netip.AddrPort{})
	mt := &match{world: ecs.New()}
	var err error
	if mt.srv, err = replicate.NewServer(replicate.ServerConfig{World: mt.world, Protocol: newProtocol()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mt.srv.Close() })
	mt.e = mt.world.Spawn()
	_ = ecs.Register[replicate.Replicated](mt.world).Set(mt.e, replicate.Replicated{})
	_ = ecs.Register[pos](mt.world).Set(mt.e, pos{})
	mt.client, _ = replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: newProtocol()})
	t.Cleanup(func() { mt.client.Close() })
	if mt.conn, err = network.Dial(ctx, ln.Addr()); err != nil {
		t.Fatal(err)
	}
	sconn, _ := ln.Accept(ctx)
	mt.srv.AddConn(sconn)
	_ = mt.client.Connect(mt.conn)
	_ = sconn.WaitReceive(ctx)
	mt.m = metrics.NewServer(mt.srv, metrics.ServerConfig{RTTEvery: 1})
	return mt
}

// tick moves the entity, sends, waits for the client to receive and
// records the figures.
func (mt *match) tick(t testing.TB) {
	mt.srv.Receive()
	st := ecs.StoreOf[pos](mt.world)
	p, _ := st.Get(mt.e)
	p.X++
	_ = st.Set(mt.e, p)
	mt.srv.Send()
	if err := mt.conn.WaitReceive(context.Background()); err != nil {
		t.Fatal(err)
	}
	mt.client.Update()
	mt.m.Events(mt.srv.Events())
	mt.m.Sample(2 * time.Millisecond)
}

func TestServerCollector(t *testing.T) {
	mt := newMatch(t)
	for range 10 {
		mt.tick(t)
	}
	if err := mt.srv.Resync(mt.client.ID(), "operator"); err != nil {
		t.Fatal(err)
	}
	mt.tick(t)
	c := prom.NewServerCollector(mt.m, prom.Options{ConstLabels: prometheus.Labels{"match": "m1"}})
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	want := `
# HELP rewind_server_clients Connected clients.
# TYPE rewind_server_clients gauge
rewind_server_clients{match="m1"} 1
# HELP rewind_server_resyncs_total Resyncs sent to clients, by kind.
# TYPE rewind_server_resyncs_total counter
rewind_server_resyncs_total{kind="full",match="m1"} 1
rewind_server_resyncs_total{kind="partial",match="m1"} 0
rewind_server_resyncs_total{kind="rng",match="m1"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "rewind_server_clients", "rewind_server_resyncs_total"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range fams {
		found[f.GetName()] = true
		switch f.GetName() {
		case "rewind_server_tick_duration_seconds":
			h := f.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 11 || h.GetSampleSum() < 0.0219 || h.GetSampleSum() > 0.0221 {
				t.Errorf("tick durations: %d samples, sum %v; want 11, 0.022", h.GetSampleCount(), h.GetSampleSum())
			}
		case "rewind_server_sent_bytes_total":
			for _, m := range f.GetMetric() {
				if m.GetLabel()[0].GetValue() == "mutations" && m.GetCounter().GetValue() == 0 {
					t.Errorf("no mutation bytes counted")
				}
			}
		}
	}
	for _, n := range []string{"rewind_server_rtt_seconds", "rewind_server_tick_duration_seconds", "rewind_server_sent_bytes_total",
		"rewind_server_received_bytes_total", "rewind_server_desyncs_total", "rewind_server_violations_total", "rewind_server_late_inputs_total"} {
		if !found[n] {
			t.Errorf("no %s", n)
		}
	}
}

func TestPredictAndSessionCollectorsLint(t *testing.T) {
	s := metrics.NewSession(metrics.SessionConfig{Name: "peer 0"})
	s.Sample(rollback.SessionStats{Frame: 5, Rollbacks: 2, RollbackFrames: 6}, nil, nil)
	sc := prom.NewSessionCollector(prom.Options{}, s)
	pc := prom.NewPredictCollector(prom.Options{}, metrics.NewPredict(metrics.PredictConfig{Name: "client 1"}))
	for _, c := range []prometheus.Collector{sc, pc} {
		if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
			t.Fatalf("lint: %v %+v", err, problems)
		}
	}
	want := `
# HELP rewind_session_rollbacks_total Rollbacks (loads).
# TYPE rewind_session_rollbacks_total counter
rewind_session_rollbacks_total{session="peer 0"} 2
`
	if err := testutil.CollectAndCompare(sc, strings.NewReader(want), "rewind_session_rollbacks_total"); err != nil {
		t.Fatal(err)
	}
}

// The per-tick path with a collector registered and scraped: Sample
// allocates nothing (a scrape allocates, at its own pace).
func BenchmarkSampleWithCollector(b *testing.B) {
	mt := newMatch(b)
	mt.tick(b)
	reg := prometheus.NewRegistry()
	reg.MustRegister(prom.NewServerCollector(mt.m, prom.Options{}))
	if _, err := reg.Gather(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		mt.m.Sample(time.Millisecond)
	}
}

// A game server registers the collectors and serves /metrics with
// promhttp.Handler (or promhttp.HandlerFor with its own registry).
func ExampleNewServerCollector() {
	srv, _ := replicate.NewServer(replicate.ServerConfig{World: ecs.New(), Protocol: newProtocol()})
	defer srv.Close()
	m := metrics.NewServer(srv, metrics.ServerConfig{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(prom.NewServerCollector(m, prom.Options{}))
	// http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// Output:
}

// What a Prometheus server scrapes: the text exposition over HTTP.
func TestScrapeOverHTTP(t *testing.T) {
	mt := newMatch(t)
	for range 3 {
		mt.tick(t)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prom.NewServerCollector(mt.m, prom.Options{}))
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		"rewind_server_clients 1\n",
		`rewind_server_tick_duration_seconds_bucket{le="0.002"} 3` + "\n",
		"rewind_server_tick_duration_seconds_count 3\n",
		`rewind_server_sent_bytes_total{kind="updates"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %q:\n%s", want, body)
		}
	}
}
