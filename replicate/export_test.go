package replicate

import "github.com/rewindgo/rewind/tick"

// DisableWholeSegments makes s send every entity through the per-client
// path, so tests can compare it with the whole-segment path.
func DisableWholeSegments(s *Server) { s.noWhole = true }

// WholeMessages returns the number of mutation messages s sent to client id
// as whole shared segments.
func WholeMessages(s *Server, id ClientID) uint64 {
	if c := s.clients[id]; c != nil {
		return c.wholeMsgs
	}
	return 0
}

// UpdatePartBytes returns the bytes of an update in parts that c holds
// until the update is complete.
func UpdatePartBytes(c *Client) int { return len(c.parts.buf) }

// AppendChecksumReport lays out a ChecksumReport message of tick t with
// the total sum and no parts (a liar's report: every part differs).
func AppendChecksumReport(dst []byte, t tick.Tick, sum uint64) []byte {
	return appendChecksumReport(dst, t, sum, nil)
}

// JournalBytes returns the bytes of values s's journal holds (the delta
// baselines of every client).
func JournalBytes(s *Server) int { return s.jn.bytes }

// ClientJournal returns the bytes of values c's journal holds and how many
// entity components have a baseline there.
func ClientJournal(c *Client) (bytes, keys int) {
	for k := range c.jn.heads {
		if _, ok := c.jn.newest(k); ok {
			keys++
		}
	}
	return c.jn.bytes, keys
}

// JournalBound is the most bytes a journal holds.
const JournalBound = journalMaxBytes
