package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rewindgo/rewind/cmd/rewind/internal/demo"
	"github.com/rewindgo/rewind/rollback"
	"github.com/rewindgo/rewind/rollback/runner"
)

type replayOptions struct {
	JSON bool
}

func replayFlags() (*flag.FlagSet, *replayOptions) {
	o := &replayOptions{}
	fs := flag.NewFlagSet("rewind replay", flag.ContinueOnError)
	fs.BoolVar(&o.JSON, "json", false, "print the result as one JSON object")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: rewind replay [flags] FILE

Plays a recording made with "rewind demo --record FILE" through the demo
game and checks every recorded checksum. Exits with status 1 on a mismatch.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, o
}

// replayResult is what a replay found.
type replayResult struct {
	File       string `json:"file"`
	Players    int    `json:"players"`
	NPCs       int    `json:"npcs"`
	Seed       uint64 `json:"seed"`
	Frames     int    `json:"frames"`
	Checksums  int    `json:"checksums_verified"`
	Match      bool   `json:"match"`
	Mismatch   string `json:"mismatch,omitempty"`
	MismatchAt *int   `json:"mismatch_frame,omitempty"`
	// Types names the component and resource types that differed.
	Types []string `json:"mismatch_types,omitempty"`
}

func replayCommand(args []string, stdout, stderr io.Writer) error {
	fs, o := replayFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("want exactly one recording FILE, got %d arguments", fs.NArg())
	}
	res, err := replayFile(fs.Arg(0))
	if err != nil {
		return err
	}
	if o.JSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%s: %d players, %d NPCs, seed %d\n", res.File, res.Players, res.NPCs, res.Seed)
		if res.Match {
			fmt.Fprintf(stdout, "replayed %d frames: all %d recorded checksums match\n", res.Frames, res.Checksums)
		} else {
			fmt.Fprintf(stdout, "MISMATCH after %d frames (%d checksums verified): %s\n", res.Frames, res.Checksums, res.Mismatch)
		}
	}
	if !res.Match {
		return errFailed
	}
	return nil
}

// replayFile plays the recording in path through the demo game. A checksum
// mismatch is a result (Match false), not an error; errors are unreadable
// recordings and failures of the game.
func replayFile(path string) (*replayResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := replay(f)
	if res != nil {
		res.File = path
	}
	return res, err
}

// replay plays a recording read from r.
func replay(r io.Reader) (*replayResult, error) {
	sess, err := rollback.NewReplay(r)
	if err != nil {
		return nil, err
	}
	info := sess.Info()
	cfg, err := demo.ParseMeta(info.Meta)
	if err != nil {
		return nil, err
	}
	if cfg.Players != info.NumPlayers {
		return nil, fmt.Errorf("recording has %d players, its metadata says %d", info.NumPlayers, cfg.Players)
	}
	game, err := demo.New(cfg)
	if err != nil {
		return nil, err
	}
	run, err := game.NewRunner(sess, runner.Config{FPS: info.FPS})
	if err != nil {
		return nil, err
	}
	res := &replayResult{Players: cfg.Players, NPCs: cfg.NPCs, Seed: cfg.Seed}
	for {
		err := run.RunFrame()
		res.Frames, res.Checksums = int(run.Frame()), sess.Verified()
		if err == nil {
			continue
		}
		var m *rollback.MismatchError
		switch {
		case errors.Is(err, rollback.ErrReplayEnded):
			res.Match = true
			return res, nil
		case errors.As(err, &m):
			f := int(m.Frame)
			res.Mismatch, res.MismatchAt, res.Types = m.Error(), &f, m.Types
			return res, nil
		}
		return res, err
	}
}
