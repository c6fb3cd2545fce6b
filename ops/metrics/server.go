package metrics

import (
	"sync"
	"time"

	"github.com/rewindgo/rewind/predict/input"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// ServerConfig configures a Server recorder. The zero value is usable.
type ServerConfig struct {
	// RTTBuckets and TickBuckets are the histograms' upper bounds in
	// seconds (default RTTBuckets(), TickBuckets()).
	RTTBuckets, TickBuckets []float64
	// RTTEvery is the number of samples between two observations of each
	// client's round-trip time (default 60: once a second at 60 Hz).
	RTTEvery int
	// Reports is the number of desync and resync reports kept, the newest
	// (default 16).
	Reports int
}

func (c *ServerConfig) defaults() {
	if c.RTTBuckets == nil {
		c.RTTBuckets = RTTBuckets()
	}
	if c.TickBuckets == nil {
		c.TickBuckets = TickBuckets()
	}
	if c.RTTEvery <= 0 {
		c.RTTEvery = 60
	}
	if c.Reports <= 0 {
		c.Reports = 16
	}
}

// ClientFigures are one connected client's figures as the server sees
// them.
type ClientFigures struct {
	ID replicate.ClientID
	// RTT is the smoothed round-trip time; OutPerSec and InPerSec the
	// message bytes per second over the last second.
	RTT                 time.Duration
	OutPerSec, InPerSec float64
	// Out and In are the message bytes by kind since the client
	// connected.
	Out, In replicate.ByteCounts
	// Resyncs by kind, Desyncs (checksum reports that differed) and
	// Violations (protocol violations counted).
	Resyncs             replicate.ResyncCounts
	Desyncs, Violations uint64
	// LateInputs and MissingInputs are the server's input buffer counts
	// for this client (Server.Inputs; zero when the game does not report
	// them): inputs that arrived after their tick was simulated, ticks
	// simulated without the client's input.
	LateInputs, MissingInputs uint64
	Entities                  int
	AckedTick                 tick.Tick
}

// Report is a desync or resync as the server reported it (a
// replicate.ServerEvent).
type Report struct {
	// Kind is replicate.ClientDesync or replicate.ClientResync.
	Kind   replicate.ServerEventKind
	Client replicate.ClientID
	// Tick is the server tick checked (desync) or of the resync.
	Tick tick.Tick
	// Types names the checksum parts that differ (desync).
	Types []string
	// Resync is the kind of a resync; Reason says why.
	Resync replicate.ResyncKind
	Reason string
	// At is the wall-clock time the event reached the recorder.
	At time.Time
}

// DesyncCount counts the desyncs in which one checksum part differed.
type DesyncCount struct {
	Type  string
	Count uint64
}

// ServerFigures are a replication server's figures (Server.Read).
type ServerFigures struct {
	// Tick is the server tick of the last sample; Samples the samples
	// taken; LastTick the duration of the last tick sampled.
	Tick     tick.Tick
	Samples  uint64
	LastTick time.Duration
	// Clients are the connected clients, in connection order.
	Clients []ClientFigures
	// Connects and Disconnects count clients that connected and left.
	Connects, Disconnects uint64
	// Out, In, Resyncs, Desyncs, Violations, LateInputs are the totals of
	// every client ever connected.
	Out, In             replicate.ByteCounts
	Resyncs             replicate.ResyncCounts
	Desyncs, Violations uint64
	LateInputs          uint64
	// DesyncTypes counts desyncs by differing checksum part (a desync of
	// two parts counts in both), in order of first appearance.
	DesyncTypes []DesyncCount
	// RTT holds each client's round-trip time every RTTEvery samples;
	// TickDuration every sampled tick's duration, in seconds.
	RTT, TickDuration Histogram
	// Reports are the last desyncs and resyncs, oldest first.
	Reports []Report
}

// clientRec is the recorder's state of one client.
type clientRec struct {
	fig  ClientFigures
	seen uint64 // the sample that last saw the client
}

// Server records a replicate.Server's figures. Sample and Events run on
// the goroutine that runs the server; Read on any goroutine.
type Server struct {
	srv *replicate.Server
	cfg ServerConfig

	ids []replicate.ClientID      // scratch of AppendClients
	st  replicate.ConnectionStats // scratch of StatsTo

	mu      sync.Mutex
	fig     ServerFigures // totals of departed clients folded in; Clients unused
	clients []clientRec   // connected, in connection order
	reports []Report      // ring of cfg.Reports
	next    int           // next slot of the ring
}

// NewServer returns a recorder of srv's figures.
func NewServer(srv *replicate.Server, cfg ServerConfig) *Server {
	cfg.defaults()
	m := &Server{srv: srv, cfg: cfg}
	m.fig.RTT = NewHistogram(cfg.RTTBuckets)
	m.fig.TickDuration = NewHistogram(cfg.TickBuckets)
	m.reports = make([]Report, 0, cfg.Reports)
	return m
}

// Sample records the server's figures after a tick whose send phase
// took tickDuration (or the whole tick: what the game measures; zero or
// less: not observed). It allocates nothing while the clients stay the
// same.
func (m *Server) Sample(tickDuration time.Duration) {
	m.ids = m.srv.AppendClients(m.ids[:0])
	m.mu.Lock()
	defer m.mu.Unlock()
	f := &m.fig
	f.Samples++
	f.Tick = m.srv.Tick()
	if tickDuration > 0 {
		f.LastTick = tickDuration
		f.TickDuration.Observe(tickDuration.Seconds())
	}
	observeRTT := f.Samples%uint64(m.cfg.RTTEvery) == 0
	for _, id := range m.ids {
		if m.srv.StatsTo(id, &m.st) != nil {
			continue
		}
		r := m.client(id)
		r.seen = f.Samples
		c := &r.fig
		c.RTT, c.OutPerSec, c.InPerSec = m.st.RTT, m.st.OutPerSec, m.st.InPerSec
		c.Out, c.In = m.st.Out, m.st.In
		c.Resyncs, c.Desyncs, c.Violations = m.st.ResyncKinds, m.st.Desyncs, m.st.Violations
		c.Entities, c.AckedTick = m.st.Entities, m.st.AckedTick
		if observeRTT && m.st.RTT > 0 {
			f.RTT.Observe(m.st.RTT.Seconds())
		}
	}
	// Fold the clients that left into the totals, keeping order.
	kept := m.clients[:0]
	for _, r := range m.clients {
		if r.seen == f.Samples {
			kept = append(kept, r)
			continue
		}
		f.Disconnects++
		m.fold(&f.Out, &f.In, &f.Resyncs, &f.Desyncs, &f.Violations, &f.LateInputs, &r.fig)
	}
	clear(m.clients[len(kept):])
	m.clients = kept
}

// fold adds c's counters to the given totals.
func (m *Server) fold(out, in *replicate.ByteCounts, rs *replicate.ResyncCounts, desyncs, violations, late *uint64, c *ClientFigures) {
	addBytes(out, c.Out)
	addBytes(in, c.In)
	rs.Full += c.Resyncs.Full
	rs.Partial += c.Resyncs.Partial
	rs.RNG += c.Resyncs.RNG
	*desyncs += c.Desyncs
	*violations += c.Violations
	*late += c.LateInputs
}

func addBytes(dst *replicate.ByteCounts, b replicate.ByteCounts) {
	dst.Updates += b.Updates
	dst.Mutations += b.Mutations
	dst.Acks += b.Acks
	dst.Messages += b.Messages
	dst.Checksums += b.Checksums
	dst.Resyncs += b.Resyncs
	dst.Control += b.Control
}

// client returns id's record, adding it (a connect) when new.
func (m *Server) client(id replicate.ClientID) *clientRec {
	for i := range m.clients {
		if m.clients[i].fig.ID == id {
			return &m.clients[i]
		}
	}
	m.fig.Connects++
	m.clients = append(m.clients, clientRec{fig: ClientFigures{ID: id}})
	return &m.clients[len(m.clients)-1]
}

// Inputs records the server's input buffer counts of client id
// (input.Buffer.Stats), for the late-input figures of predicting clients.
// An unknown client is ignored.
func (m *Server) Inputs(id replicate.ClientID, st input.Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.clients {
		if c := &m.clients[i].fig; c.ID == id {
			c.LateInputs, c.MissingInputs = st.Late, st.Missing
		}
	}
}

// Events records the desyncs and resyncs among the server's events; the
// game passes on what replicate.Server.Events returned. Others are
// ignored.
func (m *Server) Events(evs []replicate.ServerEvent) {
	if len(evs) == 0 {
		return
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ev := range evs {
		if ev.Kind != replicate.ClientDesync && ev.Kind != replicate.ClientResync {
			continue
		}
		if ev.Kind == replicate.ClientDesync {
			m.countDesync(ev.Types)
		}
		r := Report{Kind: ev.Kind, Client: ev.Client, Tick: ev.Tick, Types: ev.Types, Resync: ev.Resync, Reason: ev.Reason, At: now}
		if len(m.reports) < cap(m.reports) {
			m.reports = append(m.reports, r)
		} else {
			m.reports[m.next] = r
		}
		m.next = (m.next + 1) % cap(m.reports)
	}
}

func (m *Server) countDesync(types []string) {
next:
	for _, t := range types {
		for i := range m.fig.DesyncTypes {
			if m.fig.DesyncTypes[i].Type == t {
				m.fig.DesyncTypes[i].Count++
				continue next
			}
		}
		m.fig.DesyncTypes = append(m.fig.DesyncTypes, DesyncCount{Type: t, Count: 1})
	}
}

// Read copies the figures into dst, reusing its storage; safe on any
// goroutine.
func (m *Server) Read(dst *ServerFigures) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := &m.fig
	clients, desyncTypes, reports := dst.Clients[:0], dst.DesyncTypes[:0], dst.Reports[:0]
	rtt, td := dst.RTT, dst.TickDuration
	*dst = *f
	for _, r := range m.clients {
		clients = append(clients, r.fig)
		m.fold(&dst.Out, &dst.In, &dst.Resyncs, &dst.Desyncs, &dst.Violations, &dst.LateInputs, &r.fig)
	}
	dst.Clients = clients
	dst.DesyncTypes = append(desyncTypes, f.DesyncTypes...)
	if len(m.reports) == cap(m.reports) {
		reports = append(reports, m.reports[m.next:]...)
		reports = append(reports, m.reports[:m.next]...)
	} else {
		reports = append(reports, m.reports...)
	}
	dst.Reports = reports
	f.RTT.CopyTo(&rtt)
	f.TickDuration.CopyTo(&td)
	dst.RTT, dst.TickDuration = rtt, td
}
