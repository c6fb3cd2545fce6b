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
