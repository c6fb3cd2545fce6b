package replicate

import "github.com/rewindgo/rewind/tick"

// CaptureAtReports calls capture(t) at each of the client's checksum
// reports (ClientConfig.ChecksumInterval), at the moment its replicated
// state is the state of server tick t that the report sums, and then sends
// the report. A game uses it to keep a snapshot.Dump of each reported
// tick (snapshot.Dumps.Capture, with DumpOptions.Entity set to
// Client.ServerEntity so entities carry the server's ids), so that after
// an EventDesync of tick t its dump and the server's dump of t (captured
// after Server.SendTick(t) on report ticks) compare down to the entity and
// field ("rewind diff", snapshot.DiffDumps). Values that hold entity
// references keep the client's ids (they show as differences).
//
// It uses HoldChecksums: a predicting client (predict.Attach, which holds
// reports for its own sums) captures in its checksum source instead. Nil
// stops capturing.
func (c *Client) CaptureAtReports(capture func(t tick.Tick)) {
	if capture == nil {
		c.HoldChecksums(nil)
		return
	}
	c.HoldChecksums(func(t tick.Tick) {
		capture(t)
		c.ReportChecksum(t, nil)
	})
}
