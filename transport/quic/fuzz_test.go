package quic

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzReadFrame feeds arbitrary stream bytes to the frame decoder: it must
// never panic, never return a frame over the limit, and whatever it decodes
// must re-encode to exactly the bytes it consumed.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0}, uint16(16))
	f.Add([]byte{3, 'a', 'b', 'c', 1, 'd'}, uint16(16))
	f.Add([]byte{0x80, 0x01}, uint16(200))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint16(1000))
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		r := bytes.NewReader(data)
		var again []byte
		for {
			before := r.Len()
			msg, err := readFrame(r, int(limit))
			if err != nil {
				if err == io.EOF && before != 0 {
					t.Fatalf("io.EOF with %d bytes left", before)
				}
				break
			}
			if len(msg) > int(limit) {
				t.Fatalf("frame of %d bytes over the limit %d", len(msg), limit)
			}
			if cap(msg) != len(msg) {
				t.Fatalf("frame of %d bytes in a buffer of %d", len(msg), cap(msg))
			}
			again = appendFrameHeader(again, len(msg))
			again = append(again, msg...)
			if consumed := len(data) - r.Len(); !bytes.Equal(again, data[:consumed]) {
				t.Fatalf("re-encoding % x differs from the input % x", again, data[:consumed])
			}
		}
	})
}

// FuzzReadBody: whatever the stream holds, the body buffer grows only with
// the bytes that arrived (at most minGrow, or twice those bytes), never
// past the announced length, and exactly by what reserve granted; a
// refused reservation stops the read.
func FuzzReadBody(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint32(1<<20), uint32(1<<20))
	f.Add(bytes.Repeat([]byte{9}, 3000), uint32(2500), uint32(1<<20))
	f.Add(bytes.Repeat([]byte{9}, 3000), uint32(1<<20), uint32(1500))
	f.Fuzz(func(t *testing.T, data []byte, n, budget uint32) {
		n %= 1 << 21
		granted := 0
		body, err := readBody(bufio.NewReaderSize(bytes.NewReader(data), 16), int(n), func(extra int) error {
			if extra <= 0 || granted+extra > int(budget) {
				return errRefused
			}
			granted += extra
			return nil
		})
		if cap(body) != granted || cap(body) > int(n) || cap(body) > max(minGrow, 2*len(body)) {
			t.Fatalf("%d bytes read of %d, buffer %d, granted %d", len(body), n, cap(body), granted)
		}
		switch {
		case len(data) >= int(n) && granted == int(n):
			if err != nil || !bytes.Equal(body, data[:n]) {
				t.Fatalf("complete body: %v", err)
			}
		case err == nil:
			t.Fatalf("incomplete body of %d bytes (of %d) without error", len(body), n)
		}
	})
}

// FuzzSplitBundle feeds arbitrary datagrams to the decoder of packed
// unreliable messages: it must never panic, deliver nothing from a
// datagram it refuses, and what it accepts must encode back to the same
// bytes.
func FuzzSplitBundle(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{0, 'a', 'b'})
	f.Add([]byte{2, 1, 'a', 0, 'b', 'c'})
	f.Add([]byte{1, 0x80, 0x01})
	f.Add([]byte{255})
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs [][]byte
		ok := splitBundle(data, func(m []byte) {
			if cap(m) != len(m) {
				t.Fatalf("a message of %d bytes with room for %d: an append would overwrite the next", len(m), cap(m))
			}
			msgs = append(msgs, m)
		})
		if !ok {
			if len(msgs) != 0 {
				t.Fatalf("refused datagram delivered %d messages", len(msgs))
			}
			return
		}
		if len(msgs) == 0 || len(msgs) > maxBundle {
			t.Fatalf("%d messages from one datagram", len(msgs))
		}
		if again := appendBundle(nil, msgs); !bytes.Equal(again, data) {
			t.Fatalf("re-encoding % x differs from % x", again, data)
		}
	})
}
