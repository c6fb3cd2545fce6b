// Command boxgame is the bevy_ggrs box game on rewind and Ebitengine: 2-4
// players move boxes with the keyboard, in one process or across machines,
// with rollback netcode (package rollback, driven by rollback/runner).
//
// The simulation is package sim (display-free, fixed-point, tested); this
// package opens the session from the flags (match.go), reads the keyboard
// and draws the boxes and the HUD (game.go). Run it with -help for the
// flags; examples/README.md walks through the code.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	_ "boxgame.local/nodisplay" // a message instead of a panic without a display
	"github.com/hajimehoshi/ebiten/v2"

	"github.com/rewindgo/rewind/transport"
)

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "boxgame: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.Web != "" {
		if o.Signal, err = serveWeb(ctx, o, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "boxgame: --web: %v\n", err)
			return 1
		}
	}
	if o.Signal != "" {
		msg := fmt.Sprintf("joining the WebRTC room %s; waiting for the other players...", o.Signal)
		fmt.Fprintf(stderr, "boxgame: %s\n", msg)
		pageStatus(msg)
	}
	m, err := newMatch(ctx, o)
	pageStatus("")
	if err != nil {
		fmt.Fprintf(stderr, "boxgame: %v\n", err)
		return 1
	}
	g := newGame(ctx, m)
	title := fmt.Sprintf("rewind box game (%s, port %d)", o.Mode, o.Port)
	if o.Signal != "" {
		title = fmt.Sprintf("rewind box game (WebRTC, P%d of %d)", m.local[0]+1, len(m.o.Players))
	}
	ebiten.SetWindowTitle(title)
	ebiten.SetWindowSize(int(screenW*o.Scale), int(screenH*o.Scale))
	ebiten.SetRunnableOnUnfocused(true) // two windows on one screen both keep running
	ebiten.SetTPS(60)
	err = ebiten.RunGame(g)
	if cerr := m.close(); err == nil {
		err = cerr
	}
	if o.Frames == 0 {
		if err != nil {
			fmt.Fprintf(stderr, "boxgame: %v\n", err)
			return 1
		}
		return 0
	}
	sum := m.summary(err, g.shotErr)
	publishSummary(sum)
	if o.JSON {
		_ = json.NewEncoder(stdout).Encode(sum)
	} else {
		fmt.Fprintf(stdout, "frame %d, digest %s over frames 0..%d, %d rollbacks, %d desyncs\n",
			sum.Frame, sum.Digest, sum.DigestFrames-1, sum.Rollbacks, sum.Desyncs)
	}
	if !sum.OK {
		fmt.Fprintln(stderr, "boxgame: FAILED:", sum.Failure)
		return 1
	}
	return 0
}

// summary is the JSON printed at the end of a --frames run.
type summary struct {
	Mode    string `json:"mode"`
	Players int    `json:"players"`
	Local   []int  `json:"local_players"`
	// Frames is the last frame every peer had to confirm; Frame the frame
	// this peer reached.
	Frames int `json:"frames"`
	Frame  int `json:"frame"`
	// Finished: the session finished the match (rollback.Config.EndFrame):
	// every frame confirmed and checked on every peer.
	Finished bool `json:"finished"`
	// Digest covers the confirmed checksums of frames 0..DigestFrames-1
	// (see sim.Digest); equal digests mean equal states at every frame.
	Digest         string           `json:"digest"`
	DigestFrames   int              `json:"digest_frames"`
	Rollbacks      int              `json:"rollbacks"`
	RollbackFrames int              `json:"rollback_frames"`
	MaxRollback    int              `json:"max_rollback"`
	Stalls         int              `json:"stalls"`
	Desyncs        int              `json:"desyncs"`
	DesyncEvents   []string         `json:"desync_events,omitempty"`
	BytesSent      uint64           `json:"bytes_sent"`
	BytesPerSec    float64          `json:"bytes_per_sec"`
	PingMS         map[string]int64 `json:"ping_ms,omitempty"`
	LinkLost       uint64           `json:"link_lost"`
	DurationSec    float64          `json:"duration_sec"`
	Screenshot     string           `json:"screenshot,omitempty"`
	OK             bool             `json:"ok"`
	Failure        string           `json:"failure,omitempty"`
}

// summary describes the run; runErr is the error that ended it, if any.
func (m *match) summary(runErr, shotErr error) summary {
	st := m.stats()
	s := summary{
		Mode: m.o.Mode.String(), Players: m.game.Config().Players, Frames: m.o.Frames, Frame: int(st.Frame),
		Finished: m.run.Finished(),
		Digest:   m.digest.String(), DigestFrames: m.digest.Frames(),
		Rollbacks: st.Rollbacks, RollbackFrames: st.RollbackFrames, MaxRollback: st.MaxRollback,
		Stalls: st.Stalls, Desyncs: st.Desyncs, DesyncEvents: m.desyncs,
		BytesSent: m.bytesSent(), DurationSec: time.Since(m.start).Seconds(), Screenshot: m.o.Screenshot,
	}
	s.Local = []int{}
	for _, h := range m.local {
		s.Local = append(s.Local, int(h))
	}
	if s.DurationSec > 0 {
		s.BytesPerSec = float64(s.BytesSent) / s.DurationSec
	}
	for _, p := range m.remotes {
		if d, ok := m.ping(p); ok {
			if s.PingMS == nil {
				s.PingMS = map[string]int64{}
			}
			s.PingMS[p.label] = d.Milliseconds()
		}
	}
	if c, ok := m.conn.(interface{ LinkStats() transport.LinkStats }); ok {
		s.LinkLost = c.LinkStats().Lost
	}
	switch {
	case runErr != nil:
		s.Failure = runErr.Error()
	case !m.complete():
		s.Failure = fmt.Sprintf("only frames 0..%d confirmed, want 0..%d", m.digest.Frames()-1, m.o.Frames)
	case s.Desyncs > 0:
		s.Failure = fmt.Sprintf("%d desyncs", s.Desyncs)
	case shotErr != nil:
		s.Failure = "screenshot: " + shotErr.Error()
	default:
		s.OK = true
	}
	return s
}
