package dashboard

import (
	"io/fs"
	"time"

	"github.com/rewindgo/rewind/replicate"
)

// View is the JSON object the page draws (GET /figures, each event of
// GET /events). Times are in milliseconds, rates in bytes per second.
type View struct {
	Title    string        `json:"title"`
	UnixMS   int64         `json:"unix_ms"`
	Server   *ServerView   `json:"server,omitempty"`
	Predicts []PredictView `json:"predicts"`
	Sessions []SessionView `json:"sessions"`
}

// ServerView is a replication server's part of a View.
type ServerView struct {
	Tick        uint32                 `json:"tick"`
	Samples     uint64                 `json:"samples"`
	LastTickMS  float64                `json:"last_tick_ms"`
	TickP50MS   float64                `json:"tick_p50_ms"`
	TickP99MS   float64                `json:"tick_p99_ms"`
	RTTP50MS    float64                `json:"rtt_p50_ms"`
	Clients     []ClientView           `json:"clients"`
	Connects    uint64                 `json:"connects"`
	Disconnects uint64                 `json:"disconnects"`
	Out         replicate.ByteCounts   `json:"out"`
	In          replicate.ByteCounts   `json:"in"`
	Resyncs     replicate.ResyncCounts `json:"resyncs"`
	Desyncs     uint64                 `json:"desyncs"`
	Violations  uint64                 `json:"violations"`
	LateInputs  uint64                 `json:"late_inputs"`
	Reports     []ReportView           `json:"reports"`
}

// ClientView is one client's line.
type ClientView struct {
	ID         uint64  `json:"id"`
	RTTMS      float64 `json:"rtt_ms"`
	OutPerSec  float64 `json:"out_per_sec"`
	InPerSec   float64 `json:"in_per_sec"`
	Entities   int     `json:"entities"`
	Resyncs    uint64  `json:"resyncs"`
	Desyncs    uint64  `json:"desyncs"`
	Violations uint64  `json:"violations"`
	LateInputs uint64  `json:"late_inputs"`
	AckedTick  uint32  `json:"acked_tick"`
}

// ReportView is a desync or a resync.
type ReportView struct {
	Kind   string   `json:"kind"`
	Client uint64   `json:"client"`
	Tick   uint32   `json:"tick"`
	Types  []string `json:"types,omitempty"`
	Resync string   `json:"resync,omitempty"`
	Reason string   `json:"reason"`
	At     string   `json:"at"`
}

// PredictView is a predicting client's part.
type PredictView struct {
	Name             string  `json:"name"`
	Rollbacks        uint64  `json:"rollbacks"`
	TicksResimulated uint64  `json:"ticks_resimulated"`
	DepthP50         float64 `json:"depth_p50"`
	DepthP99         float64 `json:"depth_p99"`
	Mispredictions   uint64  `json:"mispredictions"`
	Corrections      uint64  `json:"corrections"`
	Resyncs          uint64  `json:"resyncs"`
}

// SessionView is a rollback session's part.
type SessionView struct {
	Name           string     `json:"name"`
	Frame          int64      `json:"frame"`
	Confirmed      int64      `json:"confirmed"`
	Rollbacks      uint64     `json:"rollbacks"`
	RollbackFrames uint64     `json:"rollback_frames"`
	DepthP50       float64    `json:"depth_p50"`
	Stalls         uint64     `json:"stalls"`
	Desyncs        uint64     `json:"desyncs"`
	Peers          []PeerView `json:"peers"`
}

// PeerView is one remote address of a session.
type PeerView struct {
	Handle       int     `json:"handle"`
	PingMS       float64 `json:"ping_ms"`
	KbpsSent     float64 `json:"kbps_sent"`
	FramesBehind int     `json:"frames_behind"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// View reads every source and returns the figures as the page gets them.
func (h *Handler) View() View {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := View{Title: h.cfg.Title, UnixMS: time.Now().UnixMilli(), Predicts: []PredictView{}, Sessions: []SessionView{}}
	if m := h.cfg.Server; m != nil {
		m.Read(&h.srv)
		f := &h.srv
		sv := &ServerView{Tick: uint32(f.Tick), Samples: f.Samples, LastTickMS: ms(f.LastTick),
			TickP50MS: f.TickDuration.Quantile(0.5) * 1000, TickP99MS: f.TickDuration.Quantile(0.99) * 1000,
			RTTP50MS: f.RTT.Quantile(0.5) * 1000, Clients: []ClientView{}, Connects: f.Connects, Disconnects: f.Disconnects,
			Out: f.Out, In: f.In, Resyncs: f.Resyncs, Desyncs: f.Desyncs, Violations: f.Violations, LateInputs: f.LateInputs,
			Reports: []ReportView{}}
		for _, c := range f.Clients {
			sv.Clients = append(sv.Clients, ClientView{ID: uint64(c.ID), RTTMS: ms(c.RTT), OutPerSec: c.OutPerSec, InPerSec: c.InPerSec,
				Entities: c.Entities, Resyncs: c.Resyncs.Total(), Desyncs: c.Desyncs, Violations: c.Violations,
				LateInputs: c.LateInputs, AckedTick: uint32(c.AckedTick)})
		}
		for _, r := range f.Reports {
			rv := ReportView{Kind: "desync", Client: uint64(r.Client), Tick: uint32(r.Tick), Types: r.Types, Reason: r.Reason,
				At: r.At.Format("15:04:05.000")}
			if r.Kind == replicate.ClientResync {
				rv.Kind, rv.Resync = "resync", r.Resync.String()
			}
			sv.Reports = append(sv.Reports, rv)
		}
		v.Server = sv
	}
	for _, m := range h.cfg.Predicts {
		m.Read(&h.pred)
		f := &h.pred
		v.Predicts = append(v.Predicts, PredictView{Name: f.Name, Rollbacks: f.Rollbacks, TicksResimulated: f.TicksResimulated,
			DepthP50: f.Depth.Quantile(0.5), DepthP99: f.Depth.Quantile(0.99), Mispredictions: f.Mispredictions,
			Corrections: f.Corrections, Resyncs: f.Resyncs})
	}
	for _, m := range h.cfg.Sessions {
		m.Read(&h.sess)
		f := &h.sess
		sv := SessionView{Name: f.Name, Frame: int64(f.Frame), Confirmed: int64(f.Confirmed), Rollbacks: f.Rollbacks,
			RollbackFrames: f.RollbackFrames, DepthP50: f.Depth.Quantile(0.5), Stalls: f.Stalls, Desyncs: f.Desyncs, Peers: []PeerView{}}
		for _, p := range f.Peers {
			sv.Peers = append(sv.Peers, PeerView{Handle: int(p.Handle), PingMS: ms(p.Ping), KbpsSent: p.KbpsSent, FramesBehind: p.LocalFramesBehind})
		}
		v.Sessions = append(v.Sessions, sv)
	}
	return v
}

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return s
}
