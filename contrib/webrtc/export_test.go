package webrtc

// Exported for the fuzz targets of package webrtc_test.
var (
	DecodeDescription = decodeDescription
	DecodeCandidate   = decodeCandidate
	PeerIndex         = peerIndex
)
