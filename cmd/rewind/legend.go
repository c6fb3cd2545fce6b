package main

import (
	"fmt"
	"io"
)

// The legends of the demos' terms, printed at the end of a run (not with
// --json) and after the flags in --help.

const p2pLegend = `Terms:
  frame          the frame a peer simulates next (60 per second)
  confirmed      the newest frame whose inputs from every peer arrived: final,
                 never re-simulated (confirmed_tail in --json: the newest
                 state every peer confirmed)
  rollbacks      a peer's prediction of a remote input was wrong: it loaded an
                 earlier state and re-simulated; "max"/"longest" in frames
  stalls         frames a peer waited because it was a full prediction window
                 ahead of the inputs it had
  wait recommendation
                 a peer runs ahead of the others; its clock slows down until
                 they catch up (counted in events)
  desyncs        confirmed checksums that differed between peers (must be 0)
  digest         (rewind peer) a hash of every confirmed checksum: equal
                 digests mean equal states at every frame
`

const predictLegend = `Terms:
  lead           ticks a client's newest tick is ahead of the server's (its
                 present), after each client frame once the first second is
                 over; p10..p90 and the smallest; never below 1 when tick
                 sync works (the client predicts, its inputs arrive in time)
  snaps          tick sync's jumps (a wait, a catch-up) instead of a gentle
                 change of the clock's rate
  ahead          ticks a client runs ahead of the newest complete server tick
                 (the lead plus the way back and the wait for lost messages)
  rollbacks      a server value for a past tick differed from the client's
                 prediction: it restored that tick and re-simulated
                 ("resimulated" counts the ticks)
  mispredictions predicted values the server contradicted
  corrections    moves of a shown entity caused by a rollback; max in arena
                 units (the arena is 4096 units wide, a ship moves 6 per tick)
  late           inputs that reached the server after it simulated their tick
                 (it repeated the previous input: missing)
  predicted bullets
                 fired on the client at once; matched: adopted by the server's
                 bullet; dropped: removed, the server never fired it; refused:
                 of those, removed when their tick completed without it, plus
                 shots refused before being fired
  own shots      the bullets a client's own ship fired; refused: the server
                 did not fire them (the input came too late)
  hit-scans      a scan a client judged on its screen and the server judged
                 with lag compensation (the ships as the input's claim says
                 the client showed them); agree: same target and verdict;
                 one side only: the input came too late, or the run ended
  range faults   server values older than the client's rollback window
  converged      every client's confirmed state equals the server's at every
                 complete tick compared
`

// legendFor returns the legend of the command whose flag set is named
// name ("" when it has none).
func legendFor(name string) string {
	switch name {
	case "rewind demo", "rewind peer":
		return p2pLegend
	case "rewind demo predict":
		return predictLegend
	}
	return ""
}

// printLegend writes the legend of the summary's terms, if it has one.
func printLegend(w io.Writer, sum summaryReport) {
	switch sum.(type) {
	case *demoSummary, *peerResult:
		fmt.Fprint(w, "\n"+p2pLegend)
	case *predictSummary:
		fmt.Fprint(w, "\n"+predictLegend)
	}
}
