package websocket

import (
	"bytes"
	"io"
	"testing"

	"github.com/rewindgo/rewind/transport"
)

// FuzzParseControl feeds arbitrary frames to the control-frame decoder: it
// must never panic, and what it accepts must re-encode to exactly the
// input (close reasons: once sanitised, which a valid one already is).
func FuzzParseControl(f *testing.F) {
	f.Add([]byte{kindHello, version})
	f.Add([]byte{kindWelcome, 2})
	f.Add([]byte{kindPing, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{kindPong, 1})
	f.Add(append([]byte{kindClose, causeProtocol}, "bad frame"...))
	f.Add(append([]byte{kindClose, 9}, 0xff, 0xfe))
	f.Add([]byte{0, 1, 2})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseControl(b)
		if err != nil {
			return
		}
		again := appendControl(nil, c)
		if c.kind == kindClose && c.text != string(b[2:]) {
			// Sanitised (invalid UTF-8 replaced, truncated): stable.
			c2, err := parseControl(again)
			if err != nil || c2 != c {
				t.Fatalf("sanitised reason %q does not re-parse to itself: %v", c.text, err)
			}
			return
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding % x differs from the input % x", again, b)
		}
		if len(c.text) > transport.MaxReasonLength {
			t.Fatalf("reason of %d bytes", len(c.text))
		}
	})
}

// FuzzReadPayload: whatever a message holds, the body buffer grows only
// with the bytes that arrived (at most minGrow, or twice those bytes),
// never past the limit, and exactly by what reserve granted; a message
// over the limit is errTooLong; a refused reservation stops the read.
func FuzzReadPayload(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint32(1<<20), uint32(1<<20))
	f.Add(bytes.Repeat([]byte{9}, 3000), uint32(2500), uint32(1<<20))
	f.Add(bytes.Repeat([]byte{9}, 3000), uint32(1<<20), uint32(1500))
	f.Add([]byte{}, uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, limit, budget uint32) {
		limit %= 1 << 21
		granted := 0
		body, err := readPayload(&trickle{data}, int(limit), func(extra int) error {
			if extra <= 0 || granted+extra > int(budget) {
				return errStopped
			}
			granted += extra
			return nil
		})
		if cap(body) != granted || cap(body) > int(limit) || cap(body) > max(minGrow, 2*len(body)) {
			t.Fatalf("%d bytes read (limit %d), buffer %d, granted %d", len(body), limit, cap(body), granted)
		}
		switch {
		case err == nil:
			if !bytes.Equal(body, data) {
				t.Fatalf("body of %d bytes, message of %d", len(body), len(data))
			}
		case err == errTooLong:
			if len(data) <= int(limit) {
				t.Fatalf("errTooLong for %d bytes under the limit %d", len(data), limit)
			}
		case err != errStopped:
			t.Fatalf("error %v", err)
		}
	})
}

// trickle hands out at most 7 bytes per Read, as a socket may.
type trickle struct{ b []byte }

func (r *trickle) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 7)], r.b)
	r.b = r.b[n:]
	return n, nil
}
