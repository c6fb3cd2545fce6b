package main

// The checks behind a client's summary: the server's truths against the
// confirmed state at their ticks, the server's verdicts against the
// predicted scans, and the records of server entities they read.

import (
	"fmt"
	"slices"

	"github.com/rewindgo/rewind/internal/shooter"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/tick"
)

// isComplete reports whether server tick t completed on this client.
func (c *client) isComplete(t tick.Tick) bool { return slices.Contains(c.complete, t) }

// checkTruths compares each truth whose tick is complete, confirmed and
// older than Now with the client's state at that tick. A truth whose tick
// left the window first (or never completed: a tick skipped under loss)
// is counted unchecked.
func (c *client) checkTruths() {
	later := c.truths[:0]
	for _, tr := range c.truths {
		t := tick.Tick(tr.Tick)
		switch {
		case t.Before(c.checkFrom):
			// Before the client started, or in its first ticks.
		case t.Before(c.tl.Oldest()):
			c.unchecked++
		case !c.isComplete(t) || !t.Before(c.tl.Now()) || !c.tl.Confirmed(t):
			later = append(later, tr)
		default:
			st := c.stateAt(t)
			if d := stateDigest(st); d == tr.Digest && len(st) == int(tr.Entities) {
				c.nMatched++
				c.matched = append(c.matched, t)
				if len(c.matched) > 64 {
					c.matched = c.matched[1:]
				}
			} else {
				c.mismatches++
				if c.firstDiff == "" {
					c.firstDiff = fmt.Sprintf("tick %v: %d entities, digest %016x; server %d entities, %016x", t, len(st), d, tr.Entities, tr.Digest)
				}
			}
		}
	}
	c.truths = later
}

// note records what an entity is while it still exists.
func (c *client) note(r *record) {
	if r.noted {
		return
	}
	if sh, ok := c.ships.Get(r.ce); ok {
		r.noted, r.ship, r.player = true, true, sh.Player
		r.remote = replicate.ClientID(sh.Player) != c.rc.ID()
	} else if _, ok := c.bullet.Store().Get(r.ce); ok {
		r.noted = true
	}
}

// stateAt returns the client's state at tick t in the server's terms:
// every server entity alive at t, with its body (from the Timeline's
// history, or the interpolation buffer for the other ships), its player
// and, for a bullet, its predicted marker.
func (c *client) stateAt(t tick.Tick) []shooter.Keyed {
	var st []shooter.Keyed
	for se, r := range c.recs {
		if r.born.After(t) || (r.isGone && !t.Before(r.gone)) {
			continue
		}
		c.note(r)
		k := shooter.Keyed{E: se, Entity: shooter.Entity{Player: r.player}}
		var ok bool
		if r.remote {
			k.Body, ok = c.interp.At(r.ce, t, 0)
		} else {
			k.Body, ok = c.body.At(r.ce, t)
		}
		if !ok {
			continue
		}
		if bu, ok := c.bullet.At(r.ce, t); ok {
			k.Bullet, k.Player, k.Born = true, bu.Player, bu.Born
		}
		st = append(st, k)
	}
	return st
}

// forget drops the records of entities despawned before the window, and
// their interpolation values.
func (c *client) forget() {
	for se, r := range c.recs {
		if r.isGone && r.gone.Before(c.tl.Oldest()) {
			if r.remote {
				c.interp.Remove(r.ce)
			}
			delete(c.byClient, r.ce)
			delete(c.recs, se)
			delete(c.offsets, r.ce)
		} else {
			c.note(r)
		}
	}
}

// checkVerdicts compares the own scans, as predicted, with the server's
// verdicts that arrived.
func (c *client) checkVerdicts() {
	scans := c.game.Scans()
	for c.checkedTo < len(scans) {
		s := scans[c.checkedTo]
		v, ok := c.verdicts[s.Tick]
		if !ok {
			if c.tl.Now().Sub(s.Tick) < 2*window {
				return // not arrived yet
			}
		} else if v.Target == s.Target && (v.Hit == 1) == s.Hit {
			c.agreed++
		} else {
			c.disagreed++
		}
		delete(c.verdicts, s.Tick)
		c.checkedTo++
	}
	// A verdict of a scan this client never made (the server simulated
	// the tick with another input: the real one was lost or late) is
	// never compared: forget it once old.
	for t := range c.verdicts {
		if c.tl.Now().Sub(t) > 4*window {
			delete(c.verdicts, t)
		}
	}
}
