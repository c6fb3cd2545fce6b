package wire

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzDecode(f *testing.F) {
	for _, g := range goldens {
		b := unhex(f, g.hex)
		f.Add(b)
		f.Add(append(b, 0))
	}
	for _, m := range boundaryMessages() {
		if b, err := m.Append(nil); err == nil && len(b) < 300 {
			f.Add(b)
		}
	}
	_, typical := typicalInput(f)
	f.Add(typical)
	// An oversized packet, so that the fuzzer does not spend its time
	// minimizing the first one it finds (it cannot shrink below the limit).
	long := make([]byte, MaxPacketSize+1)
	long[0], long[1] = Version, byte(KindInput)
	f.Add(long)
	f.Add([]byte{1, 7, 0, 0})
	f.Add([]byte{3, 1, 0, 0})
	f.Add([]byte{2, 0x0c, 0, 0})
	f.Add([]byte{2, 0x0a, 0, 0, 5, 3, 1, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		err := m.Decode(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) &&
				!errors.Is(err, ErrUnknownKind) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Decode: unexpected error %v", err)
			}
			return
		}
		// Decode accepts only what Append produces: the same bytes come back.
		out, err := m.Append(nil)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", m, err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoded %x, decoded from %x", out, b)
		}
		var m2 Message
		if err := m2.Decode(out); err != nil {
			t.Fatalf("decoding the re-encoding: %v", err)
		}
		if !equalMessage(&m, &m2) {
			t.Fatalf("decoded %+v, then %+v", m, m2)
		}
	})
}

func FuzzInputs(f *testing.F) {
	f.Add(unhex(f, "30"), []byte{1, 2}, uint8(8), uint8(2))
	f.Add(unhex(f, "05 0201 10 03 02 18 03 80 0c"), []byte{}, uint8(10), uint8(2))
	f.Add(unhex(f, "03 01 04 0d 02 04 ffffffff 0a"), []byte{1, 2, 3}, uint8(4), uint8(4))
	f.Add(unhex(f, "0b 00 01 03 01 01"), []byte{0}, uint8(2), uint8(2))
	f.Add(unhex(f, "feffffffffffffffff01"), []byte{}, uint8(32), uint8(32))
	f.Add([]byte{}, []byte{}, uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, payload, base []byte, n8, max8 uint8) {
		n, maxRecord := int(n8%40), int(max8%40)
		if len(base) > 64 {
			base = base[:64]
		}
		var d InputDecoder
		got, err := decodeRecords(&d, payload, base, n, maxRecord)
		if len(got) > n {
			t.Fatalf("%d records decoded, %d expected", len(got), n)
		}
		for _, r := range got {
			if len(r) > maxRecord {
				t.Fatalf("record of %d bytes, limit %d", len(r), maxRecord)
			}
		}
		// Buffers hold at most maxRecord bytes, or the copy of the base
		// (at most 64 bytes, rounded up to a size class of at most 64).
		if limit := max(maxRecord, 64); cap(d.cur) > limit || cap(d.prev) > limit {
			t.Fatalf("decoder buffers grew to %d, %d (limit %d)", cap(d.cur), cap(d.prev), limit)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error %v", err)
			}
		} else {
			// A payload the decoder accepts is the encoding of its records:
			// they re-encode to exactly the payload (the decoder accepts
			// the encoder's token form only).
			enc := encodeRecords(base, got)
			if !bytes.Equal(enc, payload) {
				t.Fatalf("records %x decoded from %x re-encode to %x", got, payload, enc)
			}
			again, err := decodeRecords(&d, enc, base, n, maxRecord)
			if err != nil || !equalRecords(again, got) {
				t.Fatalf("re-encoded records decode to %x, %v; want %x", again, err, got)
			}
		}

		// Records cut from the fuzz bytes round-trip, and the encoding is
		// deterministic.
		var records [][]byte
		for rest := payload; len(rest) > 0 && len(records) < n; {
			l := min(int(rest[0])%(maxRecord+1), len(rest)-1)
			records = append(records, rest[1:1+l])
			rest = rest[1+l:]
		}
		enc := encodeRecords(base, records)
		dec, err := decodeRecords(&d, enc, base, len(records), maxRecord)
		if err != nil || !equalRecords(dec, records) {
			t.Fatalf("records %x encode to %x, decode to %x, %v", records, enc, dec, err)
		}
		if again := encodeRecords(base, dec); !bytes.Equal(again, enc) {
			t.Fatalf("encoding not deterministic: %x, then %x", enc, again)
		}
	})
}
