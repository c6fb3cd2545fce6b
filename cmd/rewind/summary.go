package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rewindgo/rewind/rollback"
)

// demoSummary is the result of a demo match (the JSON printed with --json).
type demoSummary struct {
	Mode string `json:"mode"`
	// Frames is the frame count every peer had to reach; FramesReached
	// whether they all did.
	Frames        int  `json:"frames"`
	FramesReached bool `json:"frames_reached"`
	// Finished: every peer and spectator finished the match (every frame
	// confirmed, checked, recorded and sent to the spectators).
	Finished bool `json:"finished"`
	// ConfirmedTail is the newest frame whose state every peer confirmed
	// (Frames when the match finished: the state after the last frame).
	ConfirmedTail int     `json:"confirmed_tail"`
	Peers         int     `json:"peers"`
	Spectators    int     `json:"spectators"`
	DurationSec   float64 `json:"duration_sec"`
	// Rollbacks, RollbackFrames and Stalls are summed over the peers;
	// MaxRollback is the longest rollback of any peer, in frames.
	Rollbacks      int `json:"rollbacks"`
	RollbackFrames int `json:"rollback_frames"`
	MaxRollback    int `json:"max_rollback"`
	Stalls         int `json:"stalls"`
	// Desyncs counts EventDesyncDetected over all peers.
	Desyncs int `json:"desyncs"`
	// BytesPerSecPerPeer is the mean UDP payload rate each peer sent.
	BytesPerSecPerPeer float64 `json:"bytes_per_sec_per_peer"`
	// ChecksumsEqual: every peer (and spectator) had the same checksum at
	// every confirmed frame they all have; CheckedFrames counts those
	// frames, FirstMismatchFrame names the first that differed.
	ChecksumsEqual     bool           `json:"checksums_equal"`
	CheckedFrames      int            `json:"checked_frames"`
	FirstMismatchFrame *int           `json:"first_mismatch_frame,omitempty"`
	SpectatorFrames    []int          `json:"spectator_frames,omitempty"`
	SpectatorChecked   int            `json:"spectator_checked_frames,omitempty"`
	Events             map[string]int `json:"events"`
	Score              []int32        `json:"score"`
	Record             string         `json:"record,omitempty"`
	Link               linkSummary    `json:"link"`
	PeerStats          []peerSummary  `json:"peer_stats"`
	Interrupted        bool           `json:"interrupted,omitempty"`
	DesyncEvents       []string       `json:"desync_events,omitempty"`
	DisconnectEvents   []string       `json:"disconnect_events,omitempty"`

	// Each peer's and spectator's confirmed checksums, compared by finish.
	checksums, specSums [][]frameSum
}

type frameSum struct {
	frame rollback.Frame
	sum   uint64
}

type linkSummary struct {
	LatencyMS float64 `json:"latency_ms"`
	JitterMS  float64 `json:"jitter_ms"`
	Loss      float64 `json:"loss"`
	Dup       float64 `json:"dup"`
}

type peerSummary struct {
	Frame           int                `json:"frame"`
	Confirmed       int                `json:"confirmed"`
	Rollbacks       int                `json:"rollbacks"`
	MaxRollback     int                `json:"max_rollback"`
	Stalls          int                `json:"stalls"`
	Desyncs         int                `json:"desyncs"`
	BytesSent       uint64             `json:"bytes_sent"`
	BytesReceived   uint64             `json:"bytes_received"`
	BytesPerSec     float64            `json:"bytes_per_sec"`
	PingMS          map[string]float64 `json:"ping_ms,omitempty"`
	ConfirmedFrames int                `json:"confirmed_checksums"`
}

func (s *demoSummary) ok() bool {
	return s.FramesReached && s.Finished && s.ChecksumsEqual && s.Desyncs == 0 && !s.Interrupted
}

func (s *demoSummary) print(w io.Writer) {
	fmt.Fprintf(w, "\n%d peers, %d spectators, %d frames in %.1fs (latency %vms ±%vms, loss %.0f%%, dup %.0f%%)\n",
		s.Peers, s.Spectators, s.Frames, s.DurationSec, s.Link.LatencyMS, s.Link.JitterMS, 100*s.Link.Loss, 100*s.Link.Dup)
	for i, p := range s.PeerStats {
		fmt.Fprintf(w, "  peer %d: frame %d, confirmed %d, %d rollbacks (max %d frames), %d stalls, %.0f B/s sent%s\n",
			i, p.Frame, p.Confirmed, p.Rollbacks, p.MaxRollback, p.Stalls, p.BytesPerSec, pingString(p.PingMS))
	}
	for i, f := range s.SpectatorFrames {
		fmt.Fprintf(w, "  spectator %d: frame %d\n", i, f)
	}
	fmt.Fprintf(w, "rollbacks %d (%d frames re-simulated, longest %d), stalls %d, %.0f B/s per peer\n",
		s.Rollbacks, s.RollbackFrames, s.MaxRollback, s.Stalls, s.BytesPerSecPerPeer)
	fmt.Fprintf(w, "events: %s\n", eventsString(s.Events))
	verdict := "EQUAL"
	if !s.ChecksumsEqual {
		verdict = "DIFFERENT"
		if s.FirstMismatchFrame != nil {
			verdict += fmt.Sprintf(" (first at frame %d)", *s.FirstMismatchFrame)
		}
	}
	fmt.Fprintf(w, "confirmed checksums: %s over %d frames (states 0..%d)", verdict, s.CheckedFrames, s.ConfirmedTail)
	if s.Spectators > 0 {
		fmt.Fprintf(w, " (%d spectator frames)", s.SpectatorChecked)
	}
	fmt.Fprintf(w, "; desyncs %d\n", s.Desyncs)
	for _, d := range s.DesyncEvents {
		fmt.Fprintf(w, "  %s\n", d)
	}
	if s.Record != "" {
		fmt.Fprintf(w, "recorded peer 0's match to %s\n", s.Record)
	}
	switch {
	case s.Interrupted:
		fmt.Fprintln(w, "INTERRUPTED")
	case !s.FramesReached:
		fmt.Fprintln(w, "FAILED: not every peer reached the last frame")
	case !s.Finished:
		fmt.Fprintf(w, "FAILED: the match did not finish (every peer confirmed up to frame %d of %d)\n", s.ConfirmedTail, s.Frames)
	case !s.ok():
		fmt.Fprintln(w, "FAILED")
	default:
		fmt.Fprintln(w, "OK")
	}
}

func pingString(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(", ping")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s %.0fms", k, m[k])
	}
	return b.String()
}

func eventsString(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// ms returns d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

// round3 rounds x to three decimals, for readable output.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// event counts ev and reports the notable ones.
func (s *demoSummary) event(live io.Writer, who string, ev rollback.Event) {
	s.Events[ev.Kind.String()]++
	switch ev.Kind {
	case rollback.EventDesyncDetected:
		s.DesyncEvents = append(s.DesyncEvents, who+": "+ev.String())
	case rollback.EventDisconnected:
		s.DisconnectEvents = append(s.DisconnectEvents, who+": "+ev.String())
	case rollback.EventSynchronizing, rollback.EventSynchronized, rollback.EventWaitRecommendation:
		return
	}
	fmt.Fprintf(live, "%s: %v\n", who, ev)
}

// finish fills the summary from the peers' final state and compares their
// confirmed checksums.
func (s *demoSummary) finish(peers []*demoPeer, specs []*demoSpectator, elapsed time.Duration) {
	s.DurationSec = round3(elapsed.Seconds())
	s.FramesReached = true
	s.Finished = true
	s.ConfirmedTail = s.Frames
	var rate float64
	for _, p := range peers {
		st := p.sess.Stats()
		ts := p.conn.Stats()
		ps := peerSummary{
			Frame: int(st.Frame), Confirmed: int(st.Confirmed), Rollbacks: st.Rollbacks, MaxRollback: st.MaxRollback,
			Stalls: st.Stalls, Desyncs: st.Desyncs, BytesSent: ts.BytesSent, BytesReceived: ts.BytesReceived,
			BytesPerSec: round3(float64(ts.BytesSent) / elapsed.Seconds()), PingMS: pings(p), ConfirmedFrames: len(p.sums),
		}
		s.PeerStats = append(s.PeerStats, ps)
		s.Rollbacks += st.Rollbacks
		s.RollbackFrames += st.RollbackFrames
		s.MaxRollback = max(s.MaxRollback, st.MaxRollback)
		s.Stalls += st.Stalls
		s.Desyncs += st.Desyncs
		rate += ps.BytesPerSec
		if st.Frame < rollback.Frame(s.Frames) {
			s.FramesReached = false
		}
		s.Finished = s.Finished && p.run.Finished()
		tail := -1
		if n := len(p.sums); n > 0 {
			tail = int(p.sums[n-1].frame)
		}
		s.ConfirmedTail = min(s.ConfirmedTail, tail)
		s.checksums = append(s.checksums, p.sums)
	}
	s.BytesPerSecPerPeer = round3(rate / float64(len(peers)))
	for _, sp := range specs {
		s.Finished = s.Finished && sp.run.Finished()
		s.SpectatorFrames = append(s.SpectatorFrames, int(sp.sess.CurrentFrame()))
		s.specSums = append(s.specSums, sp.sums)
	}
	sc := peers[0].game.Score()
	s.Score = append([]int32(nil), sc.Points[:len(peers)]...)

	var first int
	s.CheckedFrames, s.SpectatorChecked, first = compareChecksums(s.checksums, s.specSums)
	s.ChecksumsEqual = first < 0
	if first >= 0 {
		s.FirstMismatchFrame = &first
	}
}

// compareChecksums compares the confirmed checksums of the peers (peers[i]
// lists peer i's) at every frame, and each spectator's with peer 0's. It
// returns how many frames every peer has (checked), how many spectator
// checksums peer 0 also has (spec), and the first frame at which two
// checksums differ (-1 when none does).
func compareChecksums(peers, specs [][]frameSum) (checked, spec, first int) {
	first = -1
	mismatch := func(f rollback.Frame) {
		if first < 0 || int(f) < first {
			first = int(f)
		}
	}
	index := make([]map[rollback.Frame]uint64, len(peers))
	for i, sums := range peers {
		index[i] = make(map[rollback.Frame]uint64, len(sums))
		for _, fs := range sums {
			index[i][fs.frame] = fs.sum
		}
	}
	for _, fs := range peers[0] {
		all := true
		for _, m := range index[1:] {
			_, ok := m[fs.frame]
			all = all && ok
		}
		if all {
			checked++
		}
	}
	// Every pair of peers, at every frame both have.
	for i, sums := range peers {
		for _, fs := range sums {
			for _, m := range index[i+1:] {
				if o, ok := m[fs.frame]; ok && o != fs.sum {
					mismatch(fs.frame)
				}
			}
		}
	}
	for _, sums := range specs {
		for _, fs := range sums {
			if o, ok := index[0][fs.frame]; ok {
				spec++
				if o != fs.sum {
					mismatch(fs.frame)
				}
			}
		}
	}
	return checked, spec, first
}

// summaryReport is a demo's final summary.
type summaryReport interface {
	print(w io.Writer)
	ok() bool
}

// report prints a demo's summary (one JSON object with asJSON) and returns
// errFailed when the run failed its checks.
func report(w io.Writer, asJSON bool, sum summaryReport) error {
	if asJSON {
		if err := json.NewEncoder(w).Encode(sum); err != nil {
			return err
		}
	} else {
		sum.print(w)
	}
	if !sum.ok() {
		return errFailed
	}
	return nil
}
