package replicate

import (
	"bytes"
	"testing"

	"github.com/rewindgo/rewind/internal/bin"
)

// FuzzWireRoundTrip: whatever bytes a message decoder of wire.go or
// parts.go accepts encode back to exactly themselves with its encoder
// (one encoding per message: internal/bin refuses non-minimal varints).
// Each decoder is tried on the whole input as a message body (after the
// kind byte). The codecs of desync.go and resync*.go have their own
// targets (FuzzChecksumReport, FuzzChecksumVerdict, FuzzResync,
// FuzzResyncRequest); the update and mutation bodies are applied to a
// client's world rather than decoded to a value, so FuzzClientReceive
// checks them for robustness only.
func FuzzWireRoundTrip(f *testing.F) {
	f.Add(appendHello(nil, 0x0102030405060708, []byte("tok"))[1:])
	f.Add(appendAcks(nil, []uint32{1, 300, 70000})[1:])
	f.Add(appendWelcome(nil, 7, 300)[1:])
	f.Add(appendServerMsgHeader(nil, 2, 90)[1:])
	f.Add(appendPartHeader(nil, 5000, 1200)[1:])
	f.Add(appendMutationHeader(nil, 300, 2, 9)[1:])
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(what string, got []byte) {
			t.Helper()
			if !bytes.Equal(got, b) {
				t.Fatalf("%s: % x encodes back to % x", what, b, got)
			}
		}
		if v, h, tok, err := readHello(b); err == nil && v == wireVersion {
			check("hello", appendHello(nil, h, tok)[1:])
		}
		var seqs []uint32
		if err := readAcks(b, func(s uint32) { seqs = append(seqs, s) }); err == nil {
			check("acks", appendAcks(nil, seqs)[1:])
		}
		if id, wt, err := readWelcome(b); err == nil {
			check("welcome", appendWelcome(nil, id, wt)[1:])
		}
		if id, p, err := readClientMsg(b); err == nil && id >= 0 {
			check("client message", append(appendClientMsgHeader(nil, id), p...)[1:])
		}
		if id, req, p, err := readServerMsg(b); err == nil && id >= 0 {
			check("server message", append(appendServerMsgHeader(nil, id, req), p...)[1:])
		}
		r := bin.NewReader(b)
		total, off := r.Uvarint(), r.Uvarint()
		if rest := r.Rest(); r.Err() == nil && total <= 1<<62 && off <= 1<<62 {
			// updateParts.add's header (it then checks the values).
			check("update part", append(appendPartHeader(nil, int(total), int(off)), rest...)[1:])
		}
		r = bin.NewReader(b)
		if h, err := readMutationHeader(&r); err == nil {
			m := appendMutationHeader(nil, h.tick, h.delta, h.seq)
			patchMutationHeader(m, h.index, h.count)
			check("mutation header", append(m, r.Rest()...)[1:])
		}
	})
}
