package metrics

import (
	"sync"

	"github.com/rewindgo/rewind/predict"
)

// PredictConfig configures a Predict recorder. The zero value is usable.
type PredictConfig struct {
	// Name labels the client in the dashboard and in Prometheus (default
	// "client").
	Name string
	// DepthBuckets are the rollback depth histogram's upper bounds in
	// ticks (default DepthBuckets()).
	DepthBuckets []float64
}

// PredictFigures are a predicting client's figures (Predict.Read).
type PredictFigures struct {
	Name string
	// Samples counts the samples taken.
	Samples uint64
	// Rollbacks counts the Steps that rolled back, TicksResimulated the
	// ticks they simulated again; Depth holds the depth of each rollback
	// in ticks (a sample that saw several rollbacks observes their mean
	// depth once per rollback).
	Rollbacks, TicksResimulated uint64
	Depth                       Histogram
	// Mispredictions sums the registered types' mispredictions (values
	// that differed from the prediction), Corrections their correction
	// records.
	Mispredictions, Corrections uint64
	// Resyncs, RangeFaults and PredictedSpawnsDropped are the timeline's
	// counts (predict.Stats).
	Resyncs, RangeFaults, PredictedSpawnsDropped uint64
	// HistoryBytes is the memory of the predicted types' history.
	HistoryBytes int
}

// Predict records a predict.Timeline's figures. Sample runs on the
// client's goroutine, Read on any.
type Predict struct {
	st predict.Stats // scratch of StatsTo

	mu  sync.Mutex
	fig PredictFigures
}

// NewPredict returns a recorder of a predicting client.
func NewPredict(cfg PredictConfig) *Predict {
	if cfg.Name == "" {
		cfg.Name = "client"
	}
	if cfg.DepthBuckets == nil {
		cfg.DepthBuckets = DepthBuckets()
	}
	return &Predict{fig: PredictFigures{Name: cfg.Name, Depth: NewHistogram(cfg.DepthBuckets)}}
}

// Sample records tl's figures, once per frame (or per Step). It
// allocates nothing once the recorder has seen the timeline's types.
func (m *Predict) Sample(tl *predict.Timeline) {
	tl.StatsTo(&m.st)
	m.mu.Lock()
	defer m.mu.Unlock()
	f := &m.fig
	f.Samples++
	if n := m.st.Rollbacks - f.Rollbacks; n > 0 {
		depth := float64(m.st.TicksResimulated-f.TicksResimulated) / float64(n)
		for range n {
			f.Depth.Observe(depth)
		}
	}
	f.Rollbacks, f.TicksResimulated = m.st.Rollbacks, m.st.TicksResimulated
	f.Mispredictions, f.Corrections = 0, m.st.Corrections
	for _, t := range m.st.Types {
		f.Mispredictions += t.Mispredictions
	}
	f.Resyncs, f.RangeFaults, f.PredictedSpawnsDropped = m.st.Resyncs, m.st.RangeFaults, m.st.PredictedSpawnsDropped
	f.HistoryBytes = m.st.HistoryBytes
}

// Read copies the figures into dst, reusing its storage; safe on any
// goroutine.
func (m *Predict) Read(dst *PredictFigures) {
	m.mu.Lock()
	defer m.mu.Unlock()
	depth := dst.Depth
	*dst = m.fig
	m.fig.Depth.CopyTo(&depth)
	dst.Depth = depth
}
