package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
	"github.com/rewindgo/rewind/snapshot"
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
	// DumpFiles are the desync dumps written (--dump-dir), for rewind diff.
	DumpFiles []string `json:"dump_files,omitempty"`
	// DesyncFields are the differences the peers' exchanged dumps show
	// (--dump-dir): "peer 0 vs 127.0.0.1:7001 at frame 330: Type entity
	// 0v1 .X: here != there".
	DesyncFields []string `json:"desync_fields,omitempty"`
	// Running: every peer's session synchronized with every other and
	// started the match; NeverAnswered names the remotes a peer never heard
	// from when the match did not start.
	Running       bool     `json:"running"`
	NeverAnswered []string `json:"never_answered,omitempty"`
	// Abandoned names the peers that left before the match finished (a
	// disconnection seen by a peer whose session had not finished): the
	// rest of the match was played without their inputs, so no one can
	// reproduce it.
	Abandoned []string `json:"abandoned,omitempty"`
	// Rejoined lists the peers that left and came back (rewind peer
	// --rejoin; rollback.EventRejoined): a peer that rejoined is not
	// counted in Abandoned.
	Rejoined []string `json:"rejoined,omitempty"`
	// Remote: this summary describes one process of a match played across
	// processes (rewind peer): its checksums are compared with no one here,
	// only through the digest.
	Remote bool `json:"-"`

	// Each peer's and spectator's confirmed checksums, compared by finish.
	checksums, specSums [][]frameSum
	// running and answered record, per peer or spectator ("peer 0"), its
	// session's EventRunning and the remotes it heard from during the
	// handshake.
	running  map[string]bool
	answered map[string]map[netip.AddrPort]bool
	// dumpDir is where desync dumps go ("" for none); with it the peers
	// exchange their dumps too, and exchanged records, per peer and
	// remote ("peer 0 127.0.0.1:7001") that desynced, whether their
	// dumps arrived (awaitingDumps).
	dumpDir   string
	exchanged map[string]bool
	// lost maps who and the address of a peer that left to its entry in
	// Abandoned, which a rejoin removes.
	lost map[string]string
	// rejoinable: the peers let a peer that left come back (--rejoin-bytes).
	rejoinable bool
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
	// Handle is the peer's player handle.
	Handle          int                `json:"handle"`
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
	return s.Running && s.FramesReached && s.Finished && s.ChecksumsEqual && s.Desyncs == 0 &&
		!s.Interrupted && len(s.Abandoned) == 0
}

func (s *demoSummary) print(w io.Writer) {
	fmt.Fprintf(w, "\n%d peers, %d spectators, %d frames in %.1fs (latency %vms ±%vms, loss %.0f%%, dup %.0f%%)\n",
		s.Peers, s.Spectators, s.Frames, s.DurationSec, s.Link.LatencyMS, s.Link.JitterMS, 100*s.Link.Loss, 100*s.Link.Dup)
	for _, p := range s.PeerStats {
		fmt.Fprintf(w, "  peer %d: frame %d, confirmed %d, %d rollbacks (max %d frames), %d stalls, %.0f B/s sent%s\n",
			p.Handle, p.Frame, p.Confirmed, p.Rollbacks, p.MaxRollback, p.Stalls, p.BytesPerSec, pingString(p.PingMS))
	}
	for i, f := range s.SpectatorFrames {
		fmt.Fprintf(w, "  spectator %d: frame %d\n", i, f)
	}
	fmt.Fprintf(w, "rollbacks %d (%d frames re-simulated, longest %d), stalls %d, %.0f B/s per peer\n",
		s.Rollbacks, s.RollbackFrames, s.MaxRollback, s.Stalls, s.BytesPerSecPerPeer)
	fmt.Fprintf(w, "events: %s\n", eventsString(s.Events))
	fmt.Fprintf(w, "confirmed checksums: %s; desyncs %d\n", s.checksumVerdict(), s.Desyncs)
	for _, d := range s.DesyncEvents {
		fmt.Fprintf(w, "  %s\n", d)
	}
	for _, d := range s.DesyncFields {
		fmt.Fprintf(w, "  %s\n", d)
	}
	if len(s.DumpFiles) > 0 {
		fmt.Fprintf(w, "desync dumps (compare two with rewind diff A B): %s\n", strings.Join(s.DumpFiles, " "))
	}
	if s.Record != "" {
		fmt.Fprintf(w, "recorded peer 0's match to %s\n", s.Record)
	}
	switch {
	case s.Interrupted:
		fmt.Fprintln(w, "INTERRUPTED")
	case len(s.Abandoned) > 0 && !s.Running:
		fmt.Fprintf(w, "ABANDONED: %s, before the match started\n", strings.Join(s.Abandoned, "; "))
	case len(s.Abandoned) > 0:
		fmt.Fprintf(w, "ABANDONED: %s; the rest was played without them, so the result is nobody's\n", strings.Join(s.Abandoned, "; "))
	case !s.Running && len(s.NeverAnswered) > 0:
		fmt.Fprintf(w, "FAILED: no match: %s never answered (is it running, with this peer's address in its --remote?)\n", strings.Join(s.NeverAnswered, ", "))
	case !s.Running:
		fmt.Fprintln(w, "FAILED: the match never started")
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

// checksumVerdict says what the comparison of the confirmed checksums
// found, or why there was none.
func (s *demoSummary) checksumVerdict() string {
	switch {
	case s.Interrupted && s.Remote:
		return "not compared (interrupted)"
	case s.Remote && s.CheckedFrames == 0:
		return "none (no frame confirmed)"
	case s.Remote:
		// One process of a match across processes: the digest is the
		// comparison, made by whoever reads every peer's.
		return fmt.Sprintf("%d frames (states 0..%d), compare the digest with the other peers'", s.CheckedFrames, s.ConfirmedTail)
	case s.CheckedFrames == 0:
		return "not compared (no frame confirmed)"
	}
	v := "EQUAL"
	if !s.ChecksumsEqual {
		v = "DIFFERENT"
		if s.FirstMismatchFrame != nil {
			v += fmt.Sprintf(" (first at frame %d)", *s.FirstMismatchFrame)
		}
	}
	v += fmt.Sprintf(" over %d frames (states 0..%d)", s.CheckedFrames, s.ConfirmedTail)
	if s.Interrupted {
		v += " before the interruption"
	}
	if s.Spectators > 0 {
		v += fmt.Sprintf(" (%d spectator frames)", s.SpectatorChecked)
	}
	return v
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

// event counts ev, an event of run's session (who's), and reports the
// notable ones. names labels the remote addresses of a peer (nil for a
// spectator). A disconnection after run finished is how a match ends (the
// others close their sessions); one before is an abandoned match.
func (s *demoSummary) event(live io.Writer, who string, ev rollback.Event, run *runner.Runner, names map[netip.AddrPort]string) {
	s.Events[ev.Kind.String()]++
	switch ev.Kind {
	case rollback.EventDesyncDetected:
		s.DesyncEvents = append(s.DesyncEvents, who+": "+ev.String())
		s.writeDump(live, who, ev, run)
		if s.dumpDir != "" {
			if s.exchanged == nil {
				s.exchanged = map[string]bool{}
			}
			if _, ok := s.exchanged[who+" "+ev.Addr.String()]; !ok {
				s.exchanged[who+" "+ev.Addr.String()] = false
			}
		}
	case rollback.EventDisconnected:
		name := ev.Addr.String()
		if n, ok := names[ev.Addr]; ok {
			name = n
		}
		if s.answered[who] == nil {
			s.answered[who] = map[netip.AddrPort]bool{}
		}
		s.answered[who][ev.Addr] = true
		if run.Finished() {
			fmt.Fprintf(live, "%s: %s left after the match ended\n", who, name)
			return
		}
		left := fmt.Sprintf("%s left at frame %d", name, run.Session().CurrentFrame())
		if ev.Reason != "the peer disconnected us" { // it did not say goodbye
			left = fmt.Sprintf("%s was lost at frame %d (%s)", name, run.Session().CurrentFrame(), ev.Reason)
		}
		s.Abandoned = append(s.Abandoned, left)
		s.DisconnectEvents = append(s.DisconnectEvents, who+": "+ev.String())
		if s.lost == nil {
			s.lost = map[string]string{}
		}
		s.lost[who+" "+ev.Addr.String()] = left
		if s.rejoinable {
			fmt.Fprintf(live, "%s: %s; the match is abandoned unless it rejoins (rewind peer --rejoin)\n", who, left)
		} else {
			fmt.Fprintf(live, "%s: %s; the match is abandoned\n", who, left)
		}
		return
	case rollback.EventRejoined:
		name := ev.Addr.String()
		if n, ok := names[ev.Addr]; ok {
			name = n
		}
		key := who + " " + ev.Addr.String()
		if left, ok := s.lost[key]; ok {
			// It came back: the match is everyone's again.
			delete(s.lost, key)
			if i := slices.Index(s.Abandoned, left); i >= 0 {
				s.Abandoned = slices.Delete(s.Abandoned, i, i+1)
			}
			s.Rejoined = append(s.Rejoined, fmt.Sprintf("%s: %s rejoined, its inputs count from frame %d", who, name, ev.Frame))
		} else {
			s.Rejoined = append(s.Rejoined, fmt.Sprintf("%s: rejoined through %s, its inputs count from frame %d", who, name, ev.Frame))
		}
	case rollback.EventSynchronizing, rollback.EventSynchronized:
		if s.answered[who] == nil {
			s.answered[who] = map[netip.AddrPort]bool{}
		}
		s.answered[who][ev.Addr] = true
		return
	case rollback.EventWaitRecommendation:
		return
	case rollback.EventDesyncDump:
		s.dumpEvent(live, who, ev, names)
		if s.exchanged != nil {
			s.exchanged[who+" "+ev.Addr.String()] = true
		}
		return
	case rollback.EventRunning:
		s.running[who] = true
	}
	fmt.Fprintf(live, "%s: %v\n", who, ev)
}

// started records whether who's session started the match, and which of
// its remotes (names) never answered if it did not.
func (s *demoSummary) started(who string, names map[netip.AddrPort]string) {
	if s.running[who] || len(names) == 0 { // a lone peer has no one to wait for
		return
	}
	s.Running = false
	for _, a := range slices.SortedFunc(maps.Keys(names), netip.AddrPort.Compare) {
		if !s.answered[who][a] && !slices.Contains(s.NeverAnswered, names[a]) {
			s.NeverAnswered = append(s.NeverAnswered, names[a])
		}
	}
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
			Handle: p.idx, Frame: int(st.Frame), Confirmed: int(st.Confirmed), Rollbacks: st.Rollbacks, MaxRollback: st.MaxRollback,
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
		s.started(fmt.Sprintf("peer %d", p.idx), p.names)
		tail := -1
		if n := len(p.sums); n > 0 {
			tail = int(p.sums[n-1].frame)
		}
		s.ConfirmedTail = min(s.ConfirmedTail, tail)
		s.checksums = append(s.checksums, p.sums)
	}
	s.BytesPerSecPerPeer = round3(rate / float64(len(peers)))
	for k, sp := range specs {
		s.Finished = s.Finished && sp.run.Finished()
		s.started(fmt.Sprintf("spectator %d", k), nil)
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
		printLegend(w, sum)
	}
	if !sum.ok() {
		return errFailed
	}
	return nil
}

// writeDump writes who's dump of the differing types of its first desync
// event to a file in the dump directory (nothing without one, or when the
// runner no longer holds the frame).
func (s *demoSummary) writeDump(live io.Writer, who string, ev rollback.Event, run *runner.Runner) {
	if s.dumpDir == "" {
		return
	}
	tag := "-" + strings.ReplaceAll(who, " ", "") + ".rwdump"
	for _, f := range s.DumpFiles {
		if strings.HasSuffix(f, tag) {
			return // the first desync of each peer is the one to examine
		}
	}
	path := filepath.Join(s.dumpDir, fmt.Sprintf("desync-f%d%s", ev.Frame, tag))
	d, ok := run.Dump(ev.Frame, ev.Types)
	if !ok {
		fmt.Fprintf(live, "%s: no dump of frame %d is held any more\n", who, ev.Frame)
		return
	}
	err := os.MkdirAll(s.dumpDir, 0o755)
	if err == nil {
		err = snapshot.WriteDumpFile(path, d)
	}
	if err != nil {
		fmt.Fprintf(live, "%s: writing the desync dump: %v\n", who, err)
		return
	}
	s.DumpFiles = append(s.DumpFiles, path)
	fmt.Fprintf(live, "%s: wrote its state at frame %d to %s (compare with the other side's: rewind diff)\n", who, ev.Frame, path)
}

// awaitingDumps reports whether a peer that desynced with another has not
// yet received the other's dump (only the first desync with each peer is
// exchanged: later ones are already in the map).
func (s *demoSummary) awaitingDumps() bool {
	for _, got := range s.exchanged {
		if !got {
			return true
		}
	}
	return false
}

// dumpEvent records (and prints) what an EventDesyncDump's two dumps show.
func (s *demoSummary) dumpEvent(live io.Writer, who string, ev rollback.Event, names map[netip.AddrPort]string) {
	other := ev.Addr.String()
	if n, ok := names[ev.Addr]; ok {
		other = n
	}
	dd, err := runner.DiffDumpEvent(ev, 10)
	if err != nil {
		fmt.Fprintf(live, "%s: desync dumps with %s at frame %d: %v\n", who, other, ev.Frame, err)
		return
	}
	for _, d := range dd.Diffs {
		line := fmt.Sprintf("%s vs %s at frame %d: %s (here != there)", who, other, ev.Frame, d)
		s.DesyncFields = append(s.DesyncFields, line)
		fmt.Fprintln(live, line)
	}
	if dd.Total > len(dd.Diffs) {
		fmt.Fprintf(live, "%s vs %s at frame %d: %d more differences\n", who, other, ev.Frame, dd.Total-len(dd.Diffs))
	}
}
