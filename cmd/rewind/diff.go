package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rewindgo/rewind/snapshot"
)

func diffFlags() (*flag.FlagSet, *int) {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	maxN := fs.Int("max", 50, "print at most this many differences (0: all)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: rewind diff [flags] A B

Compares two desync dumps (files written on a desync by rewind demo or
rewind peer with --dump-dir, or by a game with snapshot.WriteDumpFile):
the state of the differing component types at the desynced frame, as
each side had it. Prints which entities and which fields differ, with
both values; an entity that has the type on one side only shows
"absent" on the other. Exit status 0 when the dumps hold the same state,
1 when they differ.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, maxN
}

// diffCommand compares two dump files.
func diffCommand(args []string, stdout, stderr io.Writer) error {
	fs, maxN := diffFlags()
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("want two dump files, got %d arguments", fs.NArg())
	}
	a, err := snapshot.ReadDumpFile(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := snapshot.ReadDumpFile(fs.Arg(1))
	if err != nil {
		return err
	}
	describe := func(name string, d *snapshot.Dump) {
		label := d.Label
		if label == "" {
			label = "(no label)"
		}
		names := make([]string, len(d.Types))
		for i, t := range d.Types {
			names[i] = t.Name
		}
		fmt.Fprintf(stdout, "%s: %s, frame %d, types %s\n", name, label, d.Frame, strings.Join(names, ", "))
	}
	describe("A", a)
	describe("B", b)
	if a.Frame != b.Frame {
		fmt.Fprintf(stdout, "note: the dumps are of different frames (%d, %d): differences may come from that\n", a.Frame, b.Frame)
	}
	diffs, total := snapshot.DiffDumps(a, b, *maxN)
	if total == 0 {
		fmt.Fprintln(stdout, "same state")
		return nil
	}
	typ := ""
	for _, d := range diffs {
		if d.Type != typ {
			typ = d.Type
			fmt.Fprintln(stdout, typ)
		}
		who := "entity " + d.Entity.String()
		if d.Entity == 0 {
			who = "resource"
		}
		field := d.Field
		if field == "" {
			field = "(value)"
		}
		fmt.Fprintf(stdout, "  %-12s %-14s A %s   B %s%s\n", who, field, d.A, d.B, delta(d.A, d.B))
	}
	s := "s"
	if total == 1 {
		s = ""
	}
	more := ""
	if total > len(diffs) {
		more = fmt.Sprintf(" (%d shown: --max)", len(diffs))
	}
	fmt.Fprintf(stdout, "%d difference%s%s\n", total, s, more)
	return errFailed
}

// delta is "   (B-A d)" for two numbers, else "".
func delta(a, b string) string {
	if x, err := strconv.ParseInt(a, 10, 64); err == nil {
		if y, err := strconv.ParseInt(b, 10, 64); err == nil {
			return fmt.Sprintf("   (B-A %d)", y-x)
		}
	}
	if x, err := strconv.ParseFloat(a, 64); err == nil {
		if y, err := strconv.ParseFloat(b, 64); err == nil {
			return fmt.Sprintf("   (B-A %g)", y-x)
		}
	}
	return ""
}
