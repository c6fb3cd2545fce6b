package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/rewindgo/rewind/ops/dashboard"
	"github.com/rewindgo/rewind/ops/metrics"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rollback"
)

// The --dashboard flag of the demos and of peer: a live view of the
// match's figures (package ops/dashboard) while it runs.

// dashboardFlag adds --dashboard to fs.
func dashboardFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "dashboard", "", "serve a live dashboard of the match on this `address` (e.g. :8080) while it runs")
}

// serveDashboard serves a dashboard of cfg on addr until ctx is done and
// says where on live.
func serveDashboard(ctx context.Context, addr string, cfg dashboard.Config, live io.Writer) error {
	a, _, err := dashboard.Serve(ctx, addr, dashboard.New(cfg))
	if err != nil {
		return fmt.Errorf("--dashboard: %w", err)
	}
	fmt.Fprintf(live, "dashboard: http://%s/\n", a)
	return nil
}

// matchOps records the sessions of a P2P match for its dashboard.
type matchOps struct {
	sess  []*metrics.Session
	runs  []*rollback.P2PSession
	peers [][]rollback.PlayerHandle
}

// startDashboard serves m's dashboard (o.Dashboard) until ctx is done.
func (m *match) startDashboard(ctx context.Context, title string, live io.Writer) error {
	if m.o.Dashboard == "" {
		return nil
	}
	ops := &matchOps{}
	for _, p := range m.peers {
		ops.sess = append(ops.sess, metrics.NewSession(metrics.SessionConfig{Name: fmt.Sprintf("peer %d", p.idx)}))
		ops.runs = append(ops.runs, p.sess)
		ops.peers = append(ops.peers, slices.Sorted(maps.Keys(p.remotes)))
	}
	m.ops = ops
	return serveDashboard(ctx, m.o.Dashboard, dashboard.Config{Title: title, Sessions: ops.sess}, live)
}

// sample records every peer's session once.
func (o *matchOps) sample() {
	if o == nil {
		return
	}
	for i, s := range o.sess {
		s.Sample(o.runs[i].Stats(), o.runs[i], o.peers[i])
	}
}

// sinceTick is the duration since start, for a tick's measurement.
func sinceTick(start time.Time) time.Duration { return time.Since(start) }

// sample records the server's figures of a tick that started at t0 and
// its events, and the server's view of each client's late inputs (no-op
// without --dashboard).
func (d *predictDemo) sample(t0 time.Time, evs []replicate.ServerEvent) {
	if d.mx == nil {
		return
	}
	d.mx.Sample(sinceTick(t0))
	d.mx.Events(evs)
	buf := d.frame.Buffer()
	for _, pc := range d.clients {
		if id := pc.rc.ID(); id != 0 {
			d.mx.Inputs(id, buf.Stats(id))
		}
	}
}
