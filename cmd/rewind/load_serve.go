package main

// "rewind load serve": the match servers of the replication arena under
// load, each on its own port, and their tick statistics.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/ops/dashboard"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/transport/quic"
)

// tickBuckets are the bounds of the load server's tick histograms, in
// seconds: fine around half the 60 Hz budget.
func tickBuckets() []float64 {
	return []float64{0.0001, 0.0002, 0.0003, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.006,
		0.007, 0.00833, 0.01, 0.0125, 0.01667, 0.025, 0.0333, 0.05, 0.1}
}

// halfBudget is half a 60 Hz tick.
const halfBudget = time.Second / serverTickRate / 2

// loadMatch is one match server of "rewind load serve".
type loadMatch struct {
	idx   int
	arena *demo.Arena
	srv   *replicate.Server
	ln    *quic.Listener
	mx    *metrics.Server
	prio  float32

	hist               metrics.Histogram // tick work: receive, simulate, send
	late               metrics.Histogram // tick end after the tick was due
	max, maxLate       time.Duration
	ticks, over        int
	clients, measuring int
}

// matchSummary is one match's part of the serve summary.
type matchSummary struct {
	Match          int     `json:"match"`
	Addr           string  `json:"addr"`
	Clients        int     `json:"clients"`
	Ticks          int     `json:"ticks"`
	P50MS          float64 `json:"tick_p50_ms"`
	P99MS          float64 `json:"tick_p99_ms"`
	MaxMS          float64 `json:"tick_max_ms"`
	EndP50MS       float64 `json:"end_after_due_p50_ms"`
	EndP99MS       float64 `json:"end_after_due_p99_ms"`
	EndMaxMS       float64 `json:"end_after_due_max_ms"`
	OverHalfBudget int     `json:"ticks_over_half_budget"`
	OutPerClient   float64 `json:"out_bytes_per_sec_per_client"`
}

// serveSummary is the summary of "rewind load serve".
type serveSummary struct {
	Mode            string         `json:"mode"`
	Matches         int            `json:"matches"`
	Entities        int            `json:"entities"`
	Priority        float64        `json:"priority"`
	GOMAXPROCS      int            `json:"gomaxprocs"`
	MeasuredSec     float64        `json:"measured_sec"`
	CPUPerSec       float64        `json:"cpu_sec_per_sec"`
	WorstP99MS      float64        `json:"worst_tick_p99_ms"`
	WorstEndP99MS   float64        `json:"worst_end_after_due_p99_ms"`
	OverHalfBudget  float64        `json:"ticks_over_half_budget_fraction"`
	UnderHalfBudget bool           `json:"p99_under_half_budget"`
	PerMatch        []matchSummary `json:"per_match"`
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runLoadServe runs the match servers until they have measured for
// o.Duration (or ctx ends) and returns the summary.
func runLoadServe(ctx context.Context, o loadServeOptions, live io.Writer) (*serveSummary, error) {
	if o.Procs > 0 {
		prev := runtime.GOMAXPROCS(o.Procs)
		defer runtime.GOMAXPROCS(prev)
	}
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, usageError("--listen %q: %v", o.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, usageError("--listen %q: port: %v", o.Listen, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvTLS, _, err := quic.SelfSigned()
	if err != nil {
		return nil, err
	}
	matches := make([]*loadMatch, o.Matches)
	var serving sync.WaitGroup
	defer serving.Wait()
	defer cancel()
	for k := range matches {
		m := &loadMatch{idx: k, prio: float32(o.Priority), hist: metrics.NewHistogram(tickBuckets()), late: metrics.NewHistogram(tickBuckets())}
		matches[k] = m
		if m.arena, err = demo.NewArena(demo.ArenaConfig{Entities: o.Entities, Seed: uint64(k + 1)}); err != nil {
			return nil, err
		}
		proto, err := demo.NewArenaProtocol()
		if err != nil {
			return nil, err
		}
		if m.srv, err = replicate.NewServer(replicate.ServerConfig{World: m.arena.World(), Protocol: proto.Protocol, TickRate: serverTickRate,
			MaxClients: 4096, MaxPending: 1024}); err != nil {
			return nil, err
		}
		defer m.srv.Close()
		addr := net.JoinHostPort(host, strconv.Itoa(port+k))
		if m.ln, err = quic.Listen(ctx, addr, quic.Config{TLS: srvTLS}); err != nil {
			return nil, fmt.Errorf("match %d: %w", k, err)
		}
		defer m.ln.Close()
		serving.Go(func() { _ = m.srv.Serve(ctx, m.ln) })
	}
	if o.Dashboard != "" {
		matches[0].mx = metrics.NewServer(matches[0].srv, metrics.ServerConfig{TickBuckets: tickBuckets()})
		if err := serveDashboard(ctx, o.Dashboard, dashboard.Config{Title: "rewind load serve: match 0", Server: matches[0].mx}, live); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(live, "%d matches of %d entities listening on %s..%d; waiting for %d clients each\n", o.Matches, o.Entities, o.Listen, port+o.Matches-1, o.Wait)

	// Every match waits for its clients, then all measure together.
	var ready sync.WaitGroup
	ready.Add(o.Matches)
	startMeasure := make(chan struct{})
	stopMeasure := make(chan struct{})
	var cpu0 time.Duration
	var t0 time.Time
	go func() {
		ready.Wait()
		cpu0, t0 = cpuTime(), time.Now()
		close(startMeasure)
		if ctx.Err() == nil {
			fmt.Fprintf(live, "measuring for %v\n", o.Duration)
		}
		select {
		case <-time.After(o.Duration):
		case <-ctx.Done():
		}
		close(stopMeasure)
	}()
	errs := make([]error, o.Matches)
	var loops sync.WaitGroup
	deadline := time.Now().Add(o.WaitFor)
	for k, m := range matches {
		loops.Go(func() { errs[k] = m.loop(ctx, o, &ready, startMeasure, stopMeasure, deadline) })
	}
	loops.Wait()
	wall := time.Since(t0)
	cpu := cpuTime() - cpu0
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sum := &serveSummary{Mode: "load serve", Matches: o.Matches, Entities: o.Entities, Priority: o.Priority, GOMAXPROCS: runtime.GOMAXPROCS(0),
		MeasuredSec: round3(wall.Seconds()), CPUPerSec: round3(cpu.Seconds() / wall.Seconds())}
	ticks, over := 0, 0
	for _, m := range matches {
		s := matchSummary{Match: m.idx, Addr: m.ln.Addr().String(), Clients: m.clients, Ticks: m.ticks,
			P50MS: round3(m.hist.Quantile(0.5) * 1000), P99MS: round3(m.hist.Quantile(0.99) * 1000), MaxMS: ms(m.max),
			EndP50MS: round3(m.late.Quantile(0.5) * 1000), EndP99MS: round3(m.late.Quantile(0.99) * 1000), EndMaxMS: ms(m.maxLate), OverHalfBudget: m.over}
		var out float64
		for _, id := range m.srv.Clients() {
			if st, err := m.srv.Stats(id); err == nil {
				out += st.OutPerSec
			}
		}
		if n := len(m.srv.Clients()); n > 0 {
			s.OutPerClient = round3(out / float64(n))
		}
		sum.PerMatch = append(sum.PerMatch, s)
		sum.WorstP99MS = max(sum.WorstP99MS, s.P99MS)
		sum.WorstEndP99MS = max(sum.WorstEndP99MS, s.EndP99MS)
		ticks += m.ticks
		over += m.over
	}
	if ticks > 0 {
		sum.OverHalfBudget = round3(float64(over) / float64(ticks))
	}
	sum.UnderHalfBudget = sum.WorstEndP99MS < ms(halfBudget)
	return sum, nil
}

// loop runs the match at 60 Hz: until o.Wait clients are connected, then
// measuring between start and stop.
func (m *loadMatch) loop(ctx context.Context, o loadServeOptions, ready *sync.WaitGroup, start, stop <-chan struct{}, deadline time.Time) error {
	wait := newPacer(ctx, 0, nil).wait
	waiting, measuring := true, false
	due := time.Now() // when this tick was due (the pacer's schedule)
	const period = time.Second / serverTickRate
	for {
		t0 := time.Now()
		if t0.Sub(due) > 250*time.Millisecond {
			due = t0 // the pacer gives up catching up too
		}
		m.srv.Receive()
		if err := m.arena.Step(); err != nil {
			return err
		}
		for _, e := range m.arena.Spawned() {
			m.srv.SetPriority(e, m.prio)
		}
		m.srv.Send()
		evs := m.srv.Events()
		end := time.Now()
		d, late := end.Sub(t0), end.Sub(due)
		due = due.Add(period)
		if m.mx != nil {
			m.mx.Sample(d)
			m.mx.Events(evs)
		}
		if waiting && len(m.srv.Clients()) >= o.Wait {
			waiting = false
			ready.Done()
		} else if waiting && time.Now().After(deadline) {
			ready.Done()
			return fmt.Errorf("match %d: %d of %d clients after %v", m.idx, len(m.srv.Clients()), o.Wait, o.WaitFor)
		}
		if !measuring {
			select {
			case <-start:
				measuring = true
			default:
			}
		} else {
			m.ticks++
			m.hist.Observe(d.Seconds())
			m.max = max(m.max, d)
			m.late.Observe(late.Seconds())
			m.maxLate = max(m.maxLate, late)
			if late > halfBudget {
				m.over++
			}
			m.clients = max(m.clients, len(m.srv.Clients()))
			select {
			case <-stop:
				return nil
			default:
			}
		}
		if !wait(phaseRun) {
			return nil
		}
	}
}
