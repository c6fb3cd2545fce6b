package prom

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rewindgo/rewind/ops/metrics"
)

// Options name the metrics. The zero value is usable.
type Options struct {
	// Namespace prefixes every name (default "rewind").
	Namespace string
	// ConstLabels are added to every metric (e.g. the match or the
	// server's name).
	ConstLabels prometheus.Labels
}

func (o Options) desc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	ns := o.Namespace
	if ns == "" {
		ns = "rewind"
	}
	return prometheus.NewDesc(prometheus.BuildFQName(ns, subsystem, name), help, labels, o.ConstLabels)
}

// hist turns a metrics.Histogram into a constant Prometheus histogram
// (cumulative buckets).
func hist(d *prometheus.Desc, h *metrics.Histogram, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets, labels...)
}

func counter(d *prometheus.Desc, v uint64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// ServerCollector exposes a replication server's figures.
type ServerCollector struct {
	m *metrics.Server

	clients, connects, disconnects, sent, received, rtt, tickDur *prometheus.Desc
	resyncs, desyncs, desyncParts, violations, late              *prometheus.Desc

	mu  sync.Mutex
	fig metrics.ServerFigures
}

// NewServerCollector returns a collector of m's figures.
func NewServerCollector(m *metrics.Server, o Options) *ServerCollector {
	return &ServerCollector{
		m:           m,
		clients:     o.desc("server", "clients", "Connected clients."),
		connects:    o.desc("server", "client_connects_total", "Clients that connected."),
		disconnects: o.desc("server", "client_disconnects_total", "Clients that left or were disconnected."),
		sent:        o.desc("server", "sent_bytes_total", "Message bytes sent to clients, by what they carry.", "kind"),
		received:    o.desc("server", "received_bytes_total", "Message bytes received from clients, by what they carry.", "kind"),
		rtt:         o.desc("server", "rtt_seconds", "Clients' smoothed round-trip times, sampled once a second per client."),
		tickDur:     o.desc("server", "tick_duration_seconds", "Duration of each server tick as the game measured it."),
		resyncs:     o.desc("server", "resyncs_total", "Resyncs sent to clients, by kind.", "kind"),
		desyncs:     o.desc("server", "desyncs_total", "Client checksum reports that differed from the server's."),
		desyncParts: o.desc("server", "desync_parts_total", "Desyncs by differing checksum part (a desync counts once per part).", "part"),
		violations:  o.desc("server", "violations_total", "Protocol violations counted against clients."),
		late:        o.desc("server", "late_inputs_total", "Client inputs that arrived after their tick was simulated."),
	}
}

// Describe sends the descriptors.
func (c *ServerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.clients, c.connects, c.disconnects, c.sent, c.received, c.rtt, c.tickDur,
		c.resyncs, c.desyncs, c.desyncParts, c.violations, c.late} {
		ch <- d
	}
}

// Collect reads the recorder and sends the metrics.
func (c *ServerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m.Read(&c.fig)
	f := &c.fig
	ch <- gauge(c.clients, float64(len(f.Clients)))
	ch <- counter(c.connects, f.Connects)
	ch <- counter(c.disconnects, f.Disconnects)
	bytes := func(d *prometheus.Desc, b [7]uint64) {
		for i, k := range [...]string{"updates", "mutations", "acks", "messages", "checksums", "resyncs", "control"} {
			ch <- counter(d, b[i], k)
		}
	}
	bytes(c.sent, [7]uint64{f.Out.Updates, f.Out.Mutations, f.Out.Acks, f.Out.Messages, f.Out.Checksums, f.Out.Resyncs, f.Out.Control})
	bytes(c.received, [7]uint64{f.In.Updates, f.In.Mutations, f.In.Acks, f.In.Messages, f.In.Checksums, f.In.Resyncs, f.In.Control})
	ch <- hist(c.rtt, &f.RTT)
	ch <- hist(c.tickDur, &f.TickDuration)
	ch <- counter(c.resyncs, f.Resyncs.Full, "full")
	ch <- counter(c.resyncs, f.Resyncs.Partial, "partial")
	ch <- counter(c.resyncs, f.Resyncs.RNG, "rng")
	ch <- counter(c.desyncs, f.Desyncs)
	for _, d := range f.DesyncTypes {
		ch <- counter(c.desyncParts, d.Count, d.Type)
	}
	ch <- counter(c.violations, f.Violations)
	ch <- counter(c.late, f.LateInputs)
}

// PredictCollector exposes predicting clients' figures, labelled by
// their names (metrics.PredictConfig.Name).
type PredictCollector struct {
	ms []*metrics.Predict

	rollbacks, resim, depth, mispred, corrections, resyncs *prometheus.Desc

	mu  sync.Mutex
	fig metrics.PredictFigures
}

// NewPredictCollector returns a collector of the recorders' figures.
func NewPredictCollector(o Options, ms ...*metrics.Predict) *PredictCollector {
	return &PredictCollector{
		ms:          ms,
		rollbacks:   o.desc("predict", "rollbacks_total", "Steps that rolled back.", "client"),
		resim:       o.desc("predict", "resimulated_ticks_total", "Ticks simulated again by rollbacks.", "client"),
		depth:       o.desc("predict", "rollback_depth_ticks", "Depth of each rollback in ticks.", "client"),
		mispred:     o.desc("predict", "mispredictions_total", "Authoritative values that differed from the prediction.", "client"),
		corrections: o.desc("predict", "corrections_total", "Correction records made.", "client"),
		resyncs:     o.desc("predict", "resyncs_total", "Resyncs of the timeline.", "client"),
	}
}

// Describe sends the descriptors.
func (c *PredictCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.rollbacks, c.resim, c.depth, c.mispred, c.corrections, c.resyncs} {
		ch <- d
	}
}

// Collect reads the recorders and sends the metrics.
func (c *PredictCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.ms {
		m.Read(&c.fig)
		f := &c.fig
		ch <- counter(c.rollbacks, f.Rollbacks, f.Name)
		ch <- counter(c.resim, f.TicksResimulated, f.Name)
		ch <- hist(c.depth, &f.Depth, f.Name)
		ch <- counter(c.mispred, f.Mispredictions, f.Name)
		ch <- counter(c.corrections, f.Corrections, f.Name)
		ch <- counter(c.resyncs, f.Resyncs, f.Name)
	}
}

// SessionCollector exposes rollback sessions' figures, labelled by their
// names (metrics.SessionConfig.Name).
type SessionCollector struct {
	ms []*metrics.Session

	frame, rollbacks, rbFrames, depth, stalls, desyncs, ping *prometheus.Desc

	mu  sync.Mutex
	fig metrics.SessionFigures
}

// NewSessionCollector returns a collector of the recorders' figures.
func NewSessionCollector(o Options, ms ...*metrics.Session) *SessionCollector {
	return &SessionCollector{
		ms:        ms,
		frame:     o.desc("session", "frame", "The session's current frame.", "session"),
		rollbacks: o.desc("session", "rollbacks_total", "Rollbacks (loads).", "session"),
		rbFrames:  o.desc("session", "rollback_frames_total", "Frames simulated again by rollbacks.", "session"),
		depth:     o.desc("session", "rollback_depth_frames", "Depth of each rollback in frames.", "session"),
		stalls:    o.desc("session", "stalls_total", "Frames the session could not advance (prediction threshold).", "session"),
		desyncs:   o.desc("session", "desyncs_total", "Desyncs detected.", "session"),
		ping:      o.desc("session", "ping_seconds", "Peers' smoothed round-trip times.", "session"),
	}
}

// Describe sends the descriptors.
func (c *SessionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.frame, c.rollbacks, c.rbFrames, c.depth, c.stalls, c.desyncs, c.ping} {
		ch <- d
	}
}

// Collect reads the recorders and sends the metrics.
func (c *SessionCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.ms {
		m.Read(&c.fig)
		f := &c.fig
		ch <- gauge(c.frame, float64(f.Frame), f.Name)
		ch <- counter(c.rollbacks, f.Rollbacks, f.Name)
		ch <- counter(c.rbFrames, f.RollbackFrames, f.Name)
		ch <- hist(c.depth, &f.Depth, f.Name)
		ch <- counter(c.stalls, f.Stalls, f.Name)
		ch <- counter(c.desyncs, f.Desyncs, f.Name)
		ch <- hist(c.ping, &f.Ping, f.Name)
	}
}
