package replicate

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/internal/bin"
)

// Message kinds (the first byte of every message on the connection).
const (
	kindHello     = 1 // client: version, protocol hash, token
	kindAcks      = 2 // client: mutation message sequence numbers
	kindClientMsg = 3 // client: typed message
	kindWelcome   = 10
	kindUpdate    = 12
	kindMutations = 13
	kindServerMsg = 14
	// kindUpdatePart carries a slice of an update message too large for one
	// message: the update's length, the slice's offset in it, its bytes.
	kindUpdatePart = 15

	// wireVersion 2: updates larger than updatePart travel in parts.
	wireVersion  = 2
	maxTokenLen  = 1024
	maxAcks      = 1024
	maxReasonLen = 256
)

// partHeader bounds an update part's header: kind, total length, offset.
const partHeader = 1 + 2*binary.MaxVarintLen64

// Reject reasons.
const (
	rejectProtocol = 1
	rejectAuth     = 2
	rejectFull     = 3
	rejectVersion  = 4
	rejectTimeout  = 5
)

func appendEntity(dst []byte, e ecs.Entity) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.Index()))
	return binary.AppendUvarint(dst, uint64(e.Generation()))
}

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

func readEntity(r *bin.Reader) ecs.Entity {
	idx := r.Uvarint32()
	gen := r.Uvarint32()
	return ecs.NewEntity(idx, gen)
}

// uvarintLen is the length of v's uvarint encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// headerLen finds the end of a mutation packet's header (after index and count).
func headerLen(b []byte) int {
	off := 1
	for k := 0; k < 3; k++ {
		_, n := binary.Uvarint(b[off:])
		off += n
	}
	return off + 2
}

// mutateHeaderMax bounds a mutation message's header: kind, three uvarints
// of at most 5 bytes each, index and count.
const mutateHeaderMax = 1 + 3*binary.MaxVarintLen32 + 2

const maxEntitiesPerMessage = 1 << 20

const maxMessageValue = 1 << 20

// parseReject reads a server's rejection close reason "reject/<code> text".
func parseReject(reason string) (code int, text string, ok bool) {
	var n int
	if _, err := fmt.Sscanf(reason, "reject/%d", &n); err != nil {
		return 0, "", false
	}
	if i := strings.IndexByte(reason, ' '); i >= 0 {
		text = reason[i+1:]
	}
	return n, text, true
}
