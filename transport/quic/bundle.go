package quic

import (
	"encoding/binary"

	"github.com/rewindgo/rewind/internal/bin"
)

// The framing of unreliable messages in QUIC datagrams. A datagram packs
// one or more messages: a count byte k (the number of messages minus
// one), then the first k messages each as a minimal uvarint length and its
// bytes, then the last message, which takes the rest of the datagram. A
// single message costs one byte more than it did alone; messages that go
// out together share a datagram, and with it a QUIC packet's header, its
// authentication tag and the acknowledgements it carries.

// maxBundle is the most messages one datagram packs (the count byte).
const maxBundle = 256

// uvarintLen is the size of n's minimal uvarint.
func uvarintLen(n int) int {
	size := 1
	for n >= 0x80 {
		n >>= 7
		size++
	}
	return size
}

// appendBundle appends the datagram packing msgs (1 to maxBundle of them).
func appendBundle(dst []byte, msgs [][]byte) []byte {
	dst = append(dst, byte(len(msgs)-1))
	last := len(msgs) - 1
	for _, m := range msgs[:last] {
		dst = binary.AppendUvarint(dst, uint64(len(m)))
		dst = append(dst, m...)
	}
	return append(dst, msgs[last]...)
}

// splitBundle calls each with every message datagram b packs, in order
// (sub-slices of b), and reports whether b parsed; each is only called once
// the whole datagram has parsed, so a malformed datagram delivers nothing.
// What it accepts, appendBundle encodes back to b.
func splitBundle(b []byte, each func(msg []byte)) bool {
	if !walkBundle(b, nil) {
		return false
	}
	walkBundle(b, each)
	return true
}

// walkBundle parses b, calling each (when not nil) with its messages.
func walkBundle(b []byte, each func(msg []byte)) bool {
	if len(b) == 0 {
		return false
	}
	r := bin.NewReader(b[1:])
	for range int(b[0]) {
		n := r.Uvarint()
		if r.Err() != nil || n > uint64(r.Len()) {
			return false
		}
		m := r.Bytes(int(n))
		if each != nil {
			each(m)
		}
	}
	if r.Err() != nil {
		return false
	}
	if each != nil {
		each(b[len(b)-r.Len() : len(b) : len(b)])
	}
	return true
}
