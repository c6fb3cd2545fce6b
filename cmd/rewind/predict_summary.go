package main

import (
	"fmt"
	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/tick"
	"io"
	"slices"
	"time"

	"github.com/rewindgo/rewind/replicate"
)

// predictSummary is the result of a prediction demo run (the JSON printed
// with --json). Every number is measured in the run; sums and maxima are
// over the clients.
type predictSummary struct {
	Mode    string `json:"mode"`
	Clients int    `json:"clients"`
	// Ticks is the number of ticks asked for; ServerTicks the ticks the
	// server simulated, including the drain.
	Ticks       int    `json:"ticks"`
	ServerTicks int    `json:"server_ticks"`
	Others      string `json:"others"`
	InputDelay  int    `json:"input_delay"`
	// DurationSec is the whole run; ConnectSec the time until every
	// client was connected; DrainSec how long the server ticked after
	// Ticks until every client had confirmed a tick at or after it.
	DurationSec float64 `json:"duration_sec"`
	ConnectSec  float64 `json:"connect_sec"`
	DrainSec    float64 `json:"drain_sec"`
	// Rollbacks, ResimulatedTicks, Mispredictions and Corrections are the
	// clients' Timeline counters, summed; MaxCorrection the largest move
	// of an entity's shown position by a rollback, in arena units
	// (shooter.Distance: the larger axis, the short way around the
	// arena's wrapping edges).
	Rollbacks        uint64 `json:"rollbacks"`
	ResimulatedTicks uint64 `json:"resimulated_ticks"`
	Mispredictions   uint64 `json:"mispredictions"`
	Corrections      uint64 `json:"corrections"`
	MaxCorrection    int32  `json:"max_correction"`
	// AheadTicks is the mean, over the clients' frames, of how far the
	// client's tick was ahead of the newest complete server tick it had.
	AheadTicks float64 `json:"ahead_ticks"`
	// LateInputs counts the inputs that reached the server after it
	// simulated their tick without them; MissingInputs the ticks it
	// simulated without a client's input (its last one repeated).
	LateInputs    uint64 `json:"late_inputs"`
	MissingInputs uint64 `json:"missing_inputs"`
	// Lead is the distribution, over every client frame after the run's
	// first second, of the client's lead over the server's present: its
	// newest simulated tick minus the server's, both read in this process
	// after the client's frame (the truth, not the client's estimate).
	Lead leadSummary `json:"lead_ticks"`
	// SnapsAhead and SnapsBack count the clients' tick-sync snaps (a
	// wait, a catch-up), SnapsSettled those after the first second.
	SnapsAhead   uint64 `json:"snaps_ahead"`
	SnapsBack    uint64 `json:"snaps_back"`
	SnapsSettled uint64 `json:"snaps_after_1s"`
	// SettledInputs counts the (client, tick) inputs the server simulated
	// after the first second; SettledLate and SettledMissing the late and
	// missing among them, SettledMissingPct the missing in percent.
	SettledInputs     uint64  `json:"inputs_after_1s"`
	SettledLate       uint64  `json:"late_inputs_after_1s"`
	SettledMissing    uint64  `json:"missing_inputs_after_1s"`
	SettledMissingPct float64 `json:"missing_inputs_after_1s_pct"`
	// RefusedPct is PredictedSpawnsRefused in percent of PredictedSpawns;
	// SettledRefusedPct the same after the first second.
	RefusedPct        float64 `json:"predicted_spawns_refused_pct"`
	SettledRefusedPct float64 `json:"predicted_spawns_refused_after_1s_pct"`
	// OwnShots counts the shots the clients' own ships fired (their
	// players' inputs, predicted at once), OwnShotsRefused those the
	// server did not fire (the input that fired it reached the server
	// too late), OwnShotsRefusedPct in percent: the refusals a player
	// feels. The rest of the refusals are other ships' shots predicted
	// with a guessed input (--others predict).
	OwnShots           uint64  `json:"own_shots"`
	OwnShotsRefused    uint64  `json:"own_shots_refused"`
	OwnShotsRefusedPct float64 `json:"own_shots_refused_pct"`
	// SettledOwnShotsRefusedPct is OwnShotsRefusedPct after the first
	// second (the catch-up of the start sends inputs late).
	SettledOwnShotsRefusedPct float64 `json:"own_shots_refused_after_1s_pct"`
	// Scans counts the hit-scans a client judged on its screen and the
	// server judged too (lag compensation: against the other ships as the
	// input's claim says the client showed them); HitsAgreed those whose
	// verdicts (target and hit) agree, HitsDisagreed those that differ,
	// ScanHits the server's hits among them. ScansOneSided counts scans
	// judged on one side only: the input reached the server too late (it
	// judged a guessed input, or none), or the run ended first. With
	// --others predict the client shows the other ships predicted, and a
	// verdict differs when their guessed inputs were wrong.
	Scans         uint64 `json:"scans"`
	ScanHits      uint64 `json:"scan_hits"`
	HitsAgreed    uint64 `json:"hits_agreed"`
	HitsDisagreed uint64 `json:"hits_disagreed"`
	ScansOneSided uint64 `json:"scans_one_sided"`
	// PredictedSpawns counts the bullets the clients' simulations fired
	// as predicted spawns (their own, and the other ships' with --others
	// predict); PredictedSpawnsMatched those a server bullet with the
	// same key adopted; PredictedSpawnsDropped those despawned without
	// one, mispredictions (a re-simulation no longer fired them, their
	// tick or a later one completed without the server's bullet, or their
	// tick left the window unconfirmed; predict.Stats), and
	// PredictedSpawnsRefused the bullets refused at completion (of those
	// dropped, plus the shots refused before being fired). Bullets still
	// waiting for the server at the end are in neither.
	// ServerSpawnsUnpredicted counts the server's bullets that reached a
	// client it had not predicted (of interpolated ships, or fired on the
	// server with an input the client did not predict). Sums over the
	// clients of their Timelines' counters.
	PredictedSpawns         uint64 `json:"predicted_spawns"`
	PredictedSpawnsMatched  uint64 `json:"predicted_spawns_matched"`
	PredictedSpawnsDropped  uint64 `json:"predicted_spawns_dropped"`
	PredictedSpawnsRefused  uint64 `json:"predicted_spawns_refused"`
	ServerSpawnsUnpredicted uint64 `json:"server_spawns_unpredicted"`
	// UnconfirmedBulletTicks counts, over the complete ticks compared,
	// the predicted bullets a client's history held at the tick although
	// no server bullet adopted them: bullets the server did not fire
	// (a wrong guess of another ship's fire, or an input the server did
	// not have in time). The Step after their tick (or a later one)
	// completes refuses them and re-simulates without them, so a
	// comparison, made after that Step, sees one only when the refusal
	// could not reach back to its tick. They are unconfirmed predictions,
	// not part of the confirmed state Converged compares, and counted
	// here.
	UnconfirmedBulletTicks int `json:"unconfirmed_bullet_ticks"`
	// RangeFaults counts the values older than the clients' rollback
	// window (applied as a snap; each asks the server for a resync),
	// Superseded those a newer value replaced before they applied, and
	// Resyncs the full resyncs the clients' Timelines took (predict.Stats,
	// summed).
	RangeFaults uint64 `json:"range_faults"`
	Superseded  uint64 `json:"superseded"`
	Resyncs     uint64 `json:"resyncs"`
	// BulletsFired counts the bullets the server spawned.
	BulletsFired uint64 `json:"bullets_fired"`
	// BytesPerSecPerClient is the mean rate of the messages the server
	// sent each client (replication and forwarded inputs) during the run
	// (after every client joined: the join's handshake and full state are
	// left out, as is its time); UDPBytesPerSecPerClient the same for the
	// UDP payload (QUIC included) that reached each client's proxy from
	// the server;
	// InputBytesPerSecPerClient the rate of each client's input messages.
	BytesPerSecPerClient      float64 `json:"bytes_per_sec_per_client"`
	UDPBytesPerSecPerClient   float64 `json:"udp_bytes_per_sec_per_client"`
	InputBytesPerSecPerClient float64 `json:"input_bytes_per_sec_per_client"`
	// CheckedTicks counts the (client, complete tick) pairs whose state
	// was compared with the server's: every server entity (ships and
	// bullets: Body, and Bullet for a bullet) and every entity replicated
	// since. Converged: every comparison was exact, every client compared a tick at or after Ticks, and
	// ConvergedTick, the newest tick every client compared, exists.
	CheckedTicks int `json:"checked_ticks"`
	// ChecksumsChecked counts the clients' checksum reports of their
	// confirmed state the server compared with its own (every 30 ticks)
	// and Desyncs those that differed.
	ChecksumsChecked uint64                 `json:"checksums_checked"`
	Desyncs          uint64                 `json:"desyncs"`
	Converged        bool                   `json:"converged"`
	ConvergedTick    uint32                 `json:"converged_tick"`
	FirstDifference  string                 `json:"first_difference,omitempty"`
	Link             linkSummary            `json:"link"`
	ClientStats      []predictClientSummary `json:"client_stats"`
	Events           []string               `json:"events,omitempty"`
	Interrupted      bool                   `json:"interrupted,omitempty"`
}

// predictClientSummary describes one client of a prediction demo.
type predictClientSummary struct {
	ID               uint64  `json:"id"`
	RTTMS            float64 `json:"rtt_ms"`
	JitterMS         float64 `json:"jitter_ms"`
	AheadTicks       float64 `json:"ahead_ticks"`
	Rollbacks        uint64  `json:"rollbacks"`
	ResimulatedTicks uint64  `json:"resimulated_ticks"`
	Mispredictions   uint64  `json:"mispredictions"`
	Corrections      uint64  `json:"corrections"`
	MaxCorrection    int32   `json:"max_correction"`
	// PredictedSpawns... are the client's Timeline counters.
	PredictedSpawns         uint64 `json:"predicted_spawns"`
	PredictedSpawnsMatched  uint64 `json:"predicted_spawns_matched"`
	PredictedSpawnsDropped  uint64 `json:"predicted_spawns_dropped"`
	PredictedSpawnsRefused  uint64 `json:"predicted_spawns_refused"`
	ServerSpawnsUnpredicted uint64 `json:"server_spawns_unpredicted"`
	UnconfirmedBulletTicks  int    `json:"unconfirmed_bullet_ticks"`
	// RangeFaults, Superseded and Resyncs are the client's Timeline
	// counters.
	RangeFaults    uint64 `json:"range_faults"`
	Superseded     uint64 `json:"superseded"`
	Resyncs        uint64 `json:"resyncs"`
	Steps          uint64 `json:"steps"`
	InputsSent     uint64 `json:"inputs_sent"`
	InputsReceived uint64 `json:"inputs_received"`
	LateInputs     uint64 `json:"late_inputs"`
	MissingInputs  uint64 `json:"missing_inputs"`
	// Lead is the client's lead over the server's present after each
	// frame after the first second (see predictSummary.Lead);
	// LeadEstimateErrMS the median error of the client's own estimate
	// (ClientFrame.PresentLead) in milliseconds.
	Lead              leadSummary `json:"lead_ticks"`
	LeadEstimateErrMS float64     `json:"lead_estimate_err_ms"`
	SnapsAhead        uint64      `json:"snaps_ahead"`
	SnapsBack         uint64      `json:"snaps_back"`
	SnapsSettled      uint64      `json:"snaps_after_1s"`
	// SettledLate and SettledMissing are the server's counts of the
	// client's inputs after the first second; ReportedLate and
	// ReportedMissing what the client heard of its inputs from the
	// server's input reports (ticksync.Sync.Stats).
	SettledLate     uint64 `json:"late_inputs_after_1s"`
	SettledMissing  uint64 `json:"missing_inputs_after_1s"`
	ReportedLate    uint64 `json:"reported_late"`
	ReportedMissing uint64 `json:"reported_missing"`
	// InputLossPct is the loss of the client's input messages its tick
	// sync measured (percent), Redundancy the inputs per message it sent
	// last, InputJitterMS the jitter of their arrival.
	InputLossPct float64 `json:"input_loss_pct"`
	// OwnShots and OwnShotsRefused: see predictSummary.
	OwnShots        uint64 `json:"own_shots"`
	OwnShotsRefused uint64 `json:"own_shots_refused"`
	// Scans, HitsAgreed, HitsDisagreed, ScansOneSided: see predictSummary.
	Scans            uint64  `json:"scans"`
	HitsAgreed       uint64  `json:"hits_agreed"`
	HitsDisagreed    uint64  `json:"hits_disagreed"`
	ScansOneSided    uint64  `json:"scans_one_sided"`
	Redundancy       int     `json:"redundancy"`
	InputJitterMS    float64 `json:"input_jitter_ms"`
	BytesPerSec      float64 `json:"bytes_per_sec"`
	UDPBytesPerSec   float64 `json:"udp_bytes_per_sec"`
	InputBytesPerSec float64 `json:"input_bytes_per_sec"`
	// Bytes is where the bytes per second go (bytes_summary.go).
	Bytes        byteRates `json:"bytes"`
	LostUp       uint64    `json:"lost_up"`
	LostDown     uint64    `json:"lost_down"`
	CheckedTicks int       `json:"checked_ticks"`
	LastChecked  uint32    `json:"last_checked"`
	Unchecked    int       `json:"unchecked"`
	Converged    bool      `json:"converged"`
}

// leadSummary is a distribution of leads in ticks.
type leadSummary struct {
	Min int32 `json:"min"`
	P10 int32 `json:"p10"`
	P50 int32 `json:"p50"`
	P90 int32 `json:"p90"`
	Max int32 `json:"max"`
	N   int   `json:"n"`
}

func newLeadSummary(v []int32) leadSummary {
	if len(v) == 0 {
		return leadSummary{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	at := func(q float64) int32 { return s[int(q*float64(len(s)-1))] }
	return leadSummary{Min: s[0], P10: at(0.1), P50: at(0.5), P90: at(0.9), Max: s[len(s)-1], N: len(s)}
}

// ok reports a successful run.
func (s *predictSummary) ok() bool { return s.Converged && !s.Interrupted }

// finish fills the summary from the final state of the demo.
func (d *predictDemo) finish(sum *predictSummary, start time.Time) {
	end := time.Now()
	sum.DurationSec = round3(end.Sub(start).Seconds())
	sum.ServerTicks = int(d.tick)
	sum.BulletsFired = d.game.Fired()
	sum.Events = d.events
	elapsed := end.Sub(d.runStart).Seconds()
	if d.runStart.IsZero() || elapsed <= 0 {
		elapsed = end.Sub(start).Seconds()
	}
	sum.Converged = true
	var rate, udp, in, aheadSum, aheadN, spawns, refused, settledOwn, settledOwnRef float64
	var leads []int32
	type scanKey struct {
		player uint64
		t      tick.Tick
	}
	judged := map[scanKey]shooter.ScanResult{}
	for _, r := range d.game.Scans() {
		judged[scanKey{r.Player, r.Tick}] = r
	}
	for _, pc := range d.clients {
		st := pc.tl.Stats()
		fs := pc.frame.Stats()
		is := d.frame.Buffer().Stats(pc.rc.ID())
		cs := predictClientSummary{
			ID: uint64(pc.rc.ID()), JitterMS: ms(pc.frame.Jitter()),
			Rollbacks: st.Rollbacks, ResimulatedTicks: st.TicksResimulated, Corrections: st.Corrections,
			MaxCorrection: pc.maxCorr, Steps: fs.Steps, InputsSent: fs.Inputs,
			PredictedSpawns: st.PredictedSpawns, PredictedSpawnsMatched: st.PredictedSpawnsMatched,
			PredictedSpawnsDropped: st.PredictedSpawnsDropped, PredictedSpawnsRefused: st.PredictedSpawnsRefused,
			ServerSpawnsUnpredicted: st.ServerSpawnsUnpredicted,
			UnconfirmedBulletTicks:  pc.ghosts,
			RangeFaults:             st.RangeFaults, Superseded: st.Superseded, Resyncs: st.Resyncs,
			InputsReceived: is.Received, LateInputs: is.Late, MissingInputs: is.Missing,
			InputBytesPerSec: round3(float64(fs.InputBytes) / elapsed),
			CheckedTicks:     pc.nChecks, LastChecked: uint32(pc.lastChk), Unchecked: pc.stale,
		}
		for _, ts := range st.Types {
			cs.Mispredictions += ts.Mispredictions
		}
		if pc.conn != nil {
			cs.RTTMS = ms(pc.conn.Stats().RTT)
		}
		ss := pc.frame.Sync().Stats()
		cs.SnapsAhead, cs.SnapsBack = ss.SnapsAhead, ss.SnapsBack
		cs.ReportedLate, cs.ReportedMissing = ss.Late, ss.Missing
		loss, _ := pc.frame.Sync().Loss()
		cs.InputLossPct = round3(100 * loss)
		cs.Redundancy = pc.frame.Sender().Redundancy()
		cs.InputJitterMS = ms(pc.frame.Sync().Jitter())
		cs.Lead = newLeadSummary(pc.leads)
		if len(pc.leadEst) > 0 {
			e := slices.Clone(pc.leadEst)
			slices.Sort(e)
			cs.LeadEstimateErrMS = ms(e[len(e)/2])
		}
		if b := pc.at1s; b.set {
			cs.SnapsSettled = ss.SnapsAhead + ss.SnapsBack - b.snaps
			cs.SettledLate, cs.SettledMissing = is.Late-b.late, is.Missing-b.miss
			sum.SettledInputs += uint64(d.tick.Sub(b.serverTick))
			spawns += float64(st.PredictedSpawns - b.spawns)
			refused += float64(st.PredictedSpawnsRefused - b.refused)
			ownRef, _ := pc.game.RefusedShots(uint64(pc.rc.ID()))
			settledOwn += float64(pc.game.FiredShots(uint64(pc.rc.ID())) - b.ownShots)
			settledOwnRef += float64(ownRef - b.ownRef)
		}
		own := uint64(pc.rc.ID())
		cs.OwnShots = pc.game.FiredShots(own)
		cs.OwnShotsRefused, _ = pc.game.RefusedShots(own)
		sum.OwnShots += cs.OwnShots
		sum.OwnShotsRefused += cs.OwnShotsRefused
		for _, r := range pc.game.Scans() {
			k := scanKey{r.Player, r.Tick}
			srv, ok := judged[k]
			switch {
			case !ok:
				cs.ScansOneSided++
				continue
			case srv == r:
				cs.HitsAgreed++
			default:
				cs.HitsDisagreed++
			}
			delete(judged, k)
			cs.Scans++
			if srv.Hit {
				sum.ScanHits++
			}
		}
		sum.Scans += cs.Scans
		sum.HitsAgreed += cs.HitsAgreed
		sum.HitsDisagreed += cs.HitsDisagreed
		sum.ScansOneSided += cs.ScansOneSided
		leads = append(leads, pc.leads...)
		sum.SnapsAhead += cs.SnapsAhead
		sum.SnapsBack += cs.SnapsBack
		sum.SnapsSettled += cs.SnapsSettled
		sum.SettledLate += cs.SettledLate
		sum.SettledMissing += cs.SettledMissing
		if pc.aheadN > 0 {
			cs.AheadTicks = round3(float64(pc.aheadSum) / float64(pc.aheadN))
			aheadSum += float64(pc.aheadSum)
			aheadN += float64(pc.aheadN)
		}
		run, down, err := pc.runStats(d.srv)
		if err == nil {
			cs.BytesPerSec = round3(float64(run.BytesOut) / elapsed)
			cs.Bytes = newByteRates(run, elapsed)
			sum.ChecksumsChecked += run.ChecksumsChecked
			sum.Desyncs += run.Desyncs
		}
		ps := pc.proxy.Stats()
		cs.UDPBytesPerSec = round3(float64(down) / elapsed)
		cs.LostUp, cs.LostDown = ps.Up.Lost, ps.Down.Lost
		cs.Converged = pc.diff == "" && pc.nChecks > 0 && int(pc.lastChk) >= d.o.Ticks && pc.rc.State() == replicate.Connected
		if !cs.Converged && sum.FirstDifference == "" {
			why := pc.diff
			switch {
			case why != "":
			case pc.rc.State() != replicate.Connected:
				why = "client " + pc.rc.State().String()
			default:
				why = fmt.Sprintf("newest tick compared %v, before the last tick %d", pc.lastChk, d.o.Ticks)
			}
			sum.FirstDifference = fmt.Sprintf("client %d: %s", pc.idx, why)
		}
		sum.Converged = sum.Converged && cs.Converged
		sum.Rollbacks += cs.Rollbacks
		sum.ResimulatedTicks += cs.ResimulatedTicks
		sum.Mispredictions += cs.Mispredictions
		sum.Corrections += cs.Corrections
		sum.MaxCorrection = max(sum.MaxCorrection, cs.MaxCorrection)
		sum.PredictedSpawns += cs.PredictedSpawns
		sum.PredictedSpawnsMatched += cs.PredictedSpawnsMatched
		sum.PredictedSpawnsDropped += cs.PredictedSpawnsDropped
		sum.PredictedSpawnsRefused += cs.PredictedSpawnsRefused
		sum.RangeFaults += cs.RangeFaults
		sum.Superseded += cs.Superseded
		sum.Resyncs += cs.Resyncs
		sum.ServerSpawnsUnpredicted += cs.ServerSpawnsUnpredicted
		sum.UnconfirmedBulletTicks += cs.UnconfirmedBulletTicks
		sum.LateInputs += cs.LateInputs
		sum.MissingInputs += cs.MissingInputs
		sum.CheckedTicks += cs.CheckedTicks
		rate += cs.BytesPerSec
		udp += cs.UDPBytesPerSec
		in += cs.InputBytesPerSec
		sum.ClientStats = append(sum.ClientStats, cs)
	}
	n := float64(len(d.clients))
	sum.BytesPerSecPerClient = round3(rate / n)
	sum.UDPBytesPerSecPerClient = round3(udp / n)
	sum.InputBytesPerSecPerClient = round3(in / n)
	if aheadN > 0 {
		sum.AheadTicks = round3(aheadSum / aheadN)
	}
	sum.Lead = newLeadSummary(leads)
	if sum.SettledInputs > 0 {
		sum.SettledMissingPct = round3(100 * float64(sum.SettledMissing) / float64(sum.SettledInputs))
	}
	if sum.PredictedSpawns > 0 {
		sum.RefusedPct = round3(100 * float64(sum.PredictedSpawnsRefused) / float64(sum.PredictedSpawns))
	}
	if spawns > 0 {
		sum.SettledRefusedPct = round3(100 * refused / spawns)
	}
	if sum.OwnShots > 0 {
		sum.OwnShotsRefusedPct = round3(100 * float64(sum.OwnShotsRefused) / float64(sum.OwnShots))
	}
	if settledOwn > 0 {
		sum.SettledOwnShotsRefusedPct = round3(100 * settledOwnRef / settledOwn)
	}
	if tk, ok := d.commonTick(); ok {
		sum.ConvergedTick = uint32(tk)
	} else if sum.Converged {
		sum.Converged = false
		sum.FirstDifference = "no complete tick compared by every client"
	}
}

// print writes the summary for people.
func (s *predictSummary) print(w io.Writer) {
	fmt.Fprintf(w, "\n%d clients, %d ticks (%d with the drain) in %.1fs, others %s (latency %vms ±%vms, loss %.0f%%)\n",
		s.Clients, s.Ticks, s.ServerTicks, s.DurationSec, s.Others, s.Link.LatencyMS, s.Link.JitterMS, 100*s.Link.Loss)
	for i, c := range s.ClientStats {
		state := "converged"
		if s.Interrupted {
			state = "not compared"
		} else if !c.Converged {
			state = "DIFFERENT"
		}
		fmt.Fprintf(w, "  client %d: rtt %.0fms, lead %d..%d (min %d, %d snaps after 1s), ahead %.1f ticks, %d rollbacks (%d resimulated), %d mispredictions, %d corrections (max %d), inputs %d late %d missing, %.0f B/s down, %.0f B/s inputs, %d ticks compared (last %d), %s\n",
			i, c.RTTMS, c.Lead.P10, c.Lead.P90, c.Lead.Min, c.SnapsSettled, c.AheadTicks, c.Rollbacks, c.ResimulatedTicks, c.Mispredictions, c.Corrections, c.MaxCorrection,
			c.LateInputs, c.MissingInputs, c.BytesPerSec, c.InputBytesPerSec, c.CheckedTicks, c.LastChecked, state)
	}
	fmt.Fprintf(w, "%d bullets fired; predicted on the clients %d (%d matched, %d dropped, %d refused; %d bullet-ticks unconfirmed), %d server bullets unpredicted\n",
		s.BulletsFired, s.PredictedSpawns, s.PredictedSpawnsMatched, s.PredictedSpawnsDropped, s.PredictedSpawnsRefused, s.UnconfirmedBulletTicks, s.ServerSpawnsUnpredicted)
	fmt.Fprintf(w, "%d range faults, %d late values superseded, %d resyncs\n", s.RangeFaults, s.Superseded, s.Resyncs)
	fmt.Fprintf(w, "hit-scans judged by client and server: %d (%d hits), verdicts agree %d, differ %d; %d judged on one side only\n",
		s.Scans, s.ScanHits, s.HitsAgreed, s.HitsDisagreed, s.ScansOneSided)
	fmt.Fprintf(w, "after the first second: lead over the server %d..%d ticks (p10..p90, min %d, max %d), %d snaps, inputs %d late %d missing of %d (%.2f%%), own shots refused %.2f%% (all run: %d of %d)\n",
		s.Lead.P10, s.Lead.P90, s.Lead.Min, s.Lead.Max, s.SnapsSettled, s.SettledLate, s.SettledMissing, s.SettledInputs, s.SettledMissingPct,
		s.SettledOwnShotsRefusedPct, s.OwnShotsRefused, s.OwnShots)
	fmt.Fprintf(w, "%.0f B/s per client down (%.0f B/s UDP), %.0f B/s inputs up\n",
		s.BytesPerSecPerClient, s.UDPBytesPerSecPerClient, s.InputBytesPerSecPerClient)
	for _, e := range s.Events {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if s.ChecksumsChecked > 0 {
		fmt.Fprintf(w, "desync detection: %d checksum reports checked, %d desyncs\n", s.ChecksumsChecked, s.Desyncs)
	}
	if s.Interrupted {
		fmt.Fprintln(w, "confirmed state: not compared (interrupted)")
	} else if s.Converged {
		fmt.Fprintf(w, "confirmed state: EQUAL to the server's on every client at every complete tick compared (%d; all at tick %d)\n", s.CheckedTicks, s.ConvergedTick)
	} else {
		fmt.Fprintf(w, "confirmed state: DIFFERENT: %s\n", s.FirstDifference)
	}
	switch {
	case s.Interrupted:
		fmt.Fprintln(w, "INTERRUPTED")
	case !s.ok():
		fmt.Fprintln(w, "FAILED")
	default:
		fmt.Fprintln(w, "OK")
	}
}
