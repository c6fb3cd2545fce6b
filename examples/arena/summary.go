package main

import (
	"fmt"
	"math"
	"time"

	"github.com/hajimehoshi/ebiten/v2"

	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/tick"
)

// matchedTail is how many truths a --ticks run matches at or after
// --ticks before it ends: several, so that two clients share one (a tick
// skipped by one client under loss is left unchecked by it).
const matchedTail = 5

// clientSummary is the JSON a client prints at the end of a --ticks run.
type clientSummary struct {
	Player uint64 `json:"player"`
	Ticks  int    `json:"ticks"`
	// Converged: the client's confirmed state equalled the server's truth
	// (stateDigest) at matchedTail ticks at or after Ticks, and never
	// differed. ConvergedTick is the first of them, MatchedTicks all the
	// recent ones (two clients converged at a common tick when their
	// lists share one).
	Converged      bool        `json:"converged"`
	ConvergedTick  tick.Tick   `json:"converged_tick"`
	MatchedTicks   []tick.Tick `json:"matched_ticks"`
	TruthsMatched  int         `json:"truths_matched"`
	TruthMismatch  int         `json:"truth_mismatches"`
	FirstDiff      string      `json:"first_diff,omitempty"`
	TruthUnchecked int         `json:"truths_unchecked"`
	// ChecksumsChecked and Desyncs: replicate's own desync detection
	// (the server's verdicts on this client's checksum reports).
	ChecksumsChecked uint64 `json:"checksums_checked"`
	Desyncs          uint64 `json:"desyncs"`
	// SlowFrames and HeldFrames: frames run overloaded (a slow machine)
	// and those whose rollbacks were held then (predict.ClientFrameStats).
	SlowFrames       uint64 `json:"slow_frames"`
	HeldFrames       uint64 `json:"held_frames"`
	Rollbacks        uint64 `json:"rollbacks"`
	TicksResimulated uint64 `json:"ticks_resimulated"`
	Corrections      uint64 `json:"corrections"`
	MaxCorrection    int32  `json:"max_correction"`
	// Own bullets predicted (spawned before the server's arrived) and
	// matched (adopted by the server's).
	BulletsPredicted uint64 `json:"bullets_predicted"`
	BulletsMatched   uint64 `json:"bullets_matched"`
	BulletsDropped   uint64 `json:"bullets_dropped"`
	// Effects of shots and scans (effect.Tracker): played once each,
	// cancelled when a rollback removed them.
	EffectsPlayed    uint64 `json:"effects_played"`
	EffectsRefired   uint64 `json:"effects_refired"`
	EffectsCancelled uint64 `json:"effects_cancelled"`
	EffectsConfirmed uint64 `json:"effects_confirmed"`
	// Scans: the own hit-scans; ScansAgreed those whose server verdict
	// (lag compensated) equals the client's prediction.
	Scans          int     `json:"scans"`
	HitsPredicted  int     `json:"hits_predicted"`
	HitsServer     int     `json:"hits_server"`
	ScansAgreed    int     `json:"scans_agreed"`
	ScansDisagreed int     `json:"scans_disagreed"`
	BytesInPerSec  float64 `json:"bytes_in_per_sec"`
	BytesOutPerSec float64 `json:"bytes_out_per_sec"`
	PingMS         int64   `json:"ping_ms"`
	// TicksAhead is how far the client's tick runs ahead of the newest
	// server tick at the end (negative: it fell behind, a display too
	// slow to keep up); FPS the frames drawn per second then.
	TicksAhead  int32   `json:"ticks_ahead"`
	FPS         float64 `json:"fps"`
	DurationSec float64 `json:"duration_sec"`
	Screenshot  string  `json:"screenshot,omitempty"`
	OK          bool    `json:"ok"`
	Failure     string  `json:"failure,omitempty"`
}

// tail returns the matched ticks at or after n.
func (c *client) tail(n int) []tick.Tick {
	var out []tick.Tick
	for _, t := range c.matched {
		if int(t) >= n {
			out = append(out, t)
		}
	}
	return out
}

// done reports whether a --ticks run has what it needs.
func (c *client) done(n int) bool { return len(c.tail(n)) >= matchedTail }

func (c *client) summary(o clientOptions, runErr, shotErr error) clientSummary {
	if c.tl == nil {
		// Never started: no server tick arrived.
		s := clientSummary{Ticks: o.Ticks, MatchedTicks: []tick.Tick{}, Failure: "no server tick received"}
		if runErr != nil {
			s.Failure = runErr.Error()
		}
		return s
	}
	st := c.tl.Stats()
	rs := c.rc.Stats()
	fs := c.fx.Stats()
	s := clientSummary{Player: uint64(c.rc.ID()), Ticks: o.Ticks, MatchedTicks: c.tail(o.Ticks),
		TruthsMatched: c.nMatched, TruthMismatch: c.mismatches, FirstDiff: c.firstDiff, TruthUnchecked: c.unchecked,
		ChecksumsChecked: rs.ChecksumsChecked, Desyncs: rs.Desyncs,
		SlowFrames: c.frame.Stats().SlowFrames, HeldFrames: c.frame.Stats().HeldFrames,
		Rollbacks: st.Rollbacks, TicksResimulated: st.TicksResimulated, Corrections: st.Corrections, MaxCorrection: c.maxCorr,
		BulletsPredicted: st.PredictedSpawns, BulletsMatched: st.PredictedSpawnsMatched, BulletsDropped: st.PredictedSpawnsDropped,
		EffectsPlayed: fs.Played, EffectsRefired: fs.Refired, EffectsCancelled: fs.Cancelled, EffectsConfirmed: fs.Confirmed,
		Scans: len(c.game.Scans()), HitsServer: c.serverHits, ScansAgreed: c.agreed, ScansDisagreed: c.disagreed,
		Screenshot: o.Screenshot}
	if s.MatchedTicks == nil {
		s.MatchedTicks = []tick.Tick{}
	}
	for _, r := range c.game.Scans() {
		if r.Hit {
			s.HitsPredicted++
		}
	}
	if !c.started.IsZero() {
		s.DurationSec = time.Since(c.started).Seconds()
		in, out := c.bytes()
		if s.DurationSec > 0 {
			s.BytesInPerSec = float64(in-c.startIn) / s.DurationSec
			s.BytesOutPerSec = float64(out-c.startOut) / s.DurationSec
		}
	}
	if c.conn != nil {
		s.PingMS = c.conn.Stats().RTT.Milliseconds()
	}
	s.TicksAhead = c.frame.Ahead()
	s.FPS = math.Round(ebiten.ActualFPS()*10) / 10
	if len(s.MatchedTicks) > 0 {
		s.ConvergedTick = s.MatchedTicks[0]
	}
	s.Converged = len(s.MatchedTicks) >= matchedTail && c.mismatches == 0
	switch {
	case runErr != nil:
		s.Failure = runErr.Error()
	case c.mismatches > 0:
		s.Failure = fmt.Sprintf("%d truths differed, first at %s", c.mismatches, c.firstDiff)
	case !s.Converged:
		s.Failure = fmt.Sprintf("not converged: %d truths matched at or after tick %d, want %d", len(s.MatchedTicks), o.Ticks, matchedTail)
	case shotErr != nil:
		s.Failure = "screenshot: " + shotErr.Error()
	default:
		s.OK = true
	}
	return s
}

// serverSummary is the JSON the server prints with --json.
type serverSummary struct {
	Ticks        tick.Tick `json:"ticks"`
	Joined       int       `json:"players_joined"`
	BulletsFired uint64    `json:"bullets_fired"`
	Scans        int       `json:"scans"`
	Hits         int       `json:"hits"`
	DurationSec  float64   `json:"duration_sec"`
	Events       []string  `json:"events,omitempty"`
	OK           bool      `json:"ok"`
	Failure      string    `json:"failure,omitempty"`
}

func (s *server) summary(d time.Duration, runErr error) serverSummary {
	scans, hits := s.hits()
	sum := serverSummary{Ticks: s.tick, Joined: s.joined, BulletsFired: s.game.Fired(), Scans: scans, Hits: hits,
		DurationSec: d.Seconds(), Events: s.events, OK: runErr == nil}
	if runErr != nil {
		sum.Failure = runErr.Error()
	}
	return sum
}

// botButtons is a bot's input of tick t (shooter.Bot): it holds a
// direction for a while, fires in about half of its stretches and scans
// in about a third.
func botButtons(seed, player uint64, t tick.Tick) uint8 {
	return shooter.Bot(seed, player, t).Buttons
}
