package replicate_test

// A client that lies about its checksums (issue 21, defect 1).

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
	"github.com/rewindgo/rewind/transport"
)

// warnCounter is a slog handler counting the records at warning level.
type warnCounter struct{ n *atomic.Int64 }

func (h warnCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h warnCounter) Handle(context.Context, slog.Record) error    { h.n.Add(1); return nil }
func (h warnCounter) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h warnCounter) WithGroup(string) slog.Handler                { return h }

// liarReports is how many false checksum reports the liar sends per tick,
// spread over the report ticks the server still keeps.
const liarReports = 20

// TestChecksumLiar: a client that sends 20 false checksum reports per tick
// (of the report ticks the server keeps) to a server with ResyncOnDesync,
// in a 20,000-entity world (and a 100,000-entity one with REWIND_LONG=1, not -short or
// -race), beside two honest clients that report too. The liar costs at
// most one resync per ResyncRequestInterval and is disconnected, with
// the reason, once MaxUnrepairedResyncs resyncs in a row did not repair
// it; desync warnings are logged at most once a second per client; the
// honest clients are never resynced and stay converged; the server's CPU
// time per tick and its heap stay near their level before the liar came.
// (Before: 355 full resyncs in 10 s at 20k, and a heap from 89.5 to
// 573 MiB in 3 s at 100k.)
func TestChecksumLiar(t *testing.T) {
	for _, n := range memWorldSizes(20000) {
		t.Run(fmt.Sprint("entities=", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checksumLiar(t, n) })
		})
	}
}

func checksumLiar(t *testing.T, n int) {
	var warns atomic.Int64
	r := newMemRig(t, 21, replicate.ServerConfig{ChecksumInterval: desyncInterval, ResyncOnDesync: true,
		Logger: slog.New(warnCounter{&warns})})
	defer r.close()
	r.ccfg.ChecksumInterval = desyncInterval
	ents := r.spawnMany(n)
	link := transport.LinkConfig{Latency: 20 * time.Millisecond, Jitter: 5 * time.Millisecond}
	r.connect(2, link)
	pos := ecs.StoreOf[Position](r.sw)
	k := 0
	// run steps the rig, moving 1% of the entities each tick, and returns
	// the CPU time of the server's sends.
	run := func(ticks int, each func()) time.Duration {
		var cpu time.Duration
		for range ticks {
			for range n / 100 {
				pos.Ptr(ents[k%n]).Y++
				k += 7
			}
			c0 := cpuTime()
			r.srv.Send()
			cpu += cpuTime() - c0
			for _, c := range r.clients {
				c.Update()
			}
			if each != nil {
				each()
			}
			time.Sleep(memTick)
		}
		return cpu
	}
	run(120, nil) // the honest clients catch up
	base := run(300, nil)
	heap0 := heapMiB()

	conn, err := r.net.Dial(context.Background(), r.ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r.net.SetLink(conn.LocalAddr(), r.ln.Addr(), link)
	r.net.SetLink(r.ln.Addr(), conn.LocalAddr(), link)
	liar, err := replicate.NewClient(replicate.ClientConfig{World: ecs.New(), Protocol: r.tp.p})
	if err != nil {
		t.Fatal(err)
	}
	if err := liar.Connect(conn); err != nil {
		t.Fatal(err)
	}
	run(30, func() { liar.Update() })
	for k := 0; liar.Entities() < n; k++ {
		if k == 600 {
			t.Fatalf("the liar holds %d of %d entities after %d ticks", liar.Entities(), n, k)
		}
		run(1, func() { liar.Update() })
	}
	heap1 := heapMiB() // with the liar, its own world included
	var resyncs int
	var reason string
	var buf []byte
	lie := func() {
		liar.Update()
		for _, ev := range r.srv.Events() {
			switch {
			case ev.Client != liar.ID():
			case ev.Kind == replicate.ClientResync:
				resyncs++
			case ev.Kind == replicate.ClientDisconnected:
				reason = ev.Reason
			}
		}
		if liar.State() != replicate.Connected {
			return
		}
		last := r.srv.Tick() - r.srv.Tick()%desyncInterval
		for j := range liarReports {
			buf = replicate.AppendChecksumReport(buf[:0], last-tick.Tick(desyncInterval*(j%16)), 0xbad)
			_ = conn.Send(transport.ReliableOrdered, buf)
		}
	}
	heapPeak := heap1
	var lying time.Duration
	const seconds = 10
	for range seconds {
		lying += run(60, lie)
		heapPeak = max(heapPeak, heapMiB())
	}
	for range 60 { // nothing moves: what is in flight to the honest clients arrives
		r.step()
	}
	perTick := func(d time.Duration, ticks int) float64 { return float64(d) / float64(ticks) / 1e6 }
	t.Logf("%d entities: liar resynced %d times, disconnected: %q; %d warnings; send %.3f ms/tick before, %.3f with the liar; heap %.1f MiB before the liar, %.1f with it, peak %.1f while it lied",
		n, resyncs, reason, warns.Load(), perTick(base, 300), perTick(lying, seconds*60), heap0, heap1, heapPeak)

	if lim := replicate.DefaultMaxUnrepairedResyncs; resyncs == 0 || resyncs > lim {
		t.Errorf("liar resynced %d times, want 1..%d", resyncs, lim)
	}
	if !strings.Contains(reason, "desync persists") {
		t.Errorf("liar not disconnected for its desyncs: state %v, reason %q", liar.State(), reason)
	}
	if w := warns.Load(); w > seconds+2 {
		t.Errorf("%d desync warnings in %d s", w, seconds)
	}
	for i, c := range r.clients {
		st, err := r.srv.Stats(c.ID())
		if err != nil {
			t.Fatalf("honest client %d: %v", i, err)
		}
		if st.Resyncs != 0 || st.Desyncs != 0 || st.ChecksumsChecked == 0 {
			t.Errorf("honest client %d: %d resyncs, %d desyncs, %d reports checked", i, st.Resyncs, st.Desyncs, st.ChecksumsChecked)
		}
	}
	if d := r.diff(nil); d != "" {
		t.Errorf("honest clients diverged: %s", d)
	}
	if base > 0 && perTick(lying, seconds*60) > 3*perTick(base, 300)+0.2 {
		t.Errorf("server send cost %.3f ms/tick with the liar, %.3f before", perTick(lying, seconds*60), perTick(base, 300))
	}
	// A full resync of the world queued for the liar is a few MiB.
	if heapPeak > heap1+float64(n)*100/(1<<20)+8 {
		t.Errorf("heap peak %.1f MiB while the liar lied, %.1f before", heapPeak, heap1)
	}
}
