package replicate

import (
	"bytes"
	"fmt"
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
	f.Add(appendAcks(nil, 70000, 32, 0xfffffffe)[1:])
	f.Add(appendAcks(nil, 5, 3, 0b101)[1:])
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
			// seqs[0] is the newest; the others mark the window's bits.
			hr := bin.NewReader(b)
			hr.Uvarint()
			n := int(hr.Byte())
			var mask uint64
			for _, s := range seqs[1:] {
				mask |= 1 << (seqs[0] - 1 - s)
			}
			check("acks", appendAcks(nil, seqs[0], n, mask)[1:])
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
			m = patchMutationHeader(m, h.index, h.count)
			check("mutation header", append(m, r.Rest()...)[1:])
		}
	})
}

// TestMutationHeaderIndexCount pins both forms of a mutation message's
// index and count: one byte for a tick of at most 15 messages, three (0xff,
// index, count) beyond, with the body after the header moved intact.
func TestMutationHeaderIndexCount(t *testing.T) {
	body := []byte{0xd3, 0x7e, 0x1d}
	for _, tc := range []struct {
		index, count int
		want         string
	}{
		{0, 1, "0d02010900d37e1d"},
		{2, 3, "0d02010922d37e1d"},
		{14, 15, "0d020109eed37e1d"},
		{3, 20, "0d020109ff0314d37e1d"},
		{254, 255, "0d020109fffeffd37e1d"},
	} {
		m := append(appendMutationHeader(nil, 2, 1, 9), body...)
		m = patchMutationHeader(m, tc.index, tc.count)
		if got := fmt.Sprintf("%x", m); got != tc.want {
			t.Errorf("index %d of %d: % x, want %s", tc.index, tc.count, m, tc.want)
		}
		r := bin.NewReader(m[1:])
		h, err := readMutationHeader(&r)
		if err != nil || h.index != tc.index || h.count != tc.count || !bytes.Equal(r.Rest(), body) {
			t.Errorf("index %d of %d read back as %d of %d (%v), body % x", tc.index, tc.count, h.index, h.count, err, r.Rest())
		}
	}
	// A short form with count 16 (low bits 1111) is refused: 16 takes the
	// long form (the fuzzer found 7f, index 7 of 16, encoding back as
	// ff 07 10).
	r0 := bin.NewReader([]byte{2, 1, 9, 0x7f})
	if _, err := readMutationHeader(&r0); err == nil {
		t.Error("the short form of index 7 of 16 was accepted")
	}
	// The long form of a count the short form says is refused.
	r := bin.NewReader([]byte{2, 1, 9, 0xff, 0, 1})
	if _, err := readMutationHeader(&r); err == nil {
		t.Error("the long form of index 0 of 1 was accepted")
	}
}
