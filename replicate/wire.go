package replicate

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/rewindgo/rewind/ecs"
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

// reader decodes the messages of this package. The first error sticks; reads
// after it return zero values, so decoders check r.err once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(errVarint)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a uvarint bounded by max (an element count), and also by the
// bytes left (each element takes at least one byte), so a hostile count
// cannot make the caller allocate.
func (r *reader) count(max int) int {
	v := r.uvarint()
	if v > uint64(max) || v > uint64(len(r.b)) {
		r.fail(errRange)
		return 0
	}
	return int(v)
}

func (r *reader) u32() uint32 {
	v := r.uvarint()
	if v > math.MaxUint32 {
		r.fail(errRange)
		return 0
	}
	return uint32(v)
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 1 {
		r.fail(errTruncated)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.fail(errTruncated)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// bytes reads a length-prefixed byte string of at most max bytes (aliasing
// the input).
func (r *reader) bytes(max int) []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(max) || n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// fixed reads exactly n bytes (aliasing the input).
func (r *reader) fixed(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.fail(errTruncated)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = errTrailing
	}
	return r.err
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendEntity(dst []byte, e ecs.Entity) []byte {
	dst = binary.AppendUvarint(dst, uint64(e.Index()))
	return binary.AppendUvarint(dst, uint64(e.Generation()))
}

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

func readEntity(r *reader) ecs.Entity {
	idx := r.u32()
	gen := r.u32()
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
