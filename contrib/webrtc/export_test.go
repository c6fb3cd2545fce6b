package webrtc

// Exported for the fuzz targets of package webrtc_test.
var (
	DecodeDescription = decodeDescription
	DecodeCandidate   = decodeCandidate
	PeerIndex         = peerIndex
)

// Deliver hands c a datagram as if peer i had sent it (a hostile peer
// may send what Send refuses).
func Deliver(c *Conn, i int, b []byte) { c.deliver(i, b) }
