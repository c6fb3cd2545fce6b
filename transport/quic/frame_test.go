package quic

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/rewindgo/rewind/transport"
)

func TestFrameRoundTrip(t *testing.T) {
	msgs := [][]byte{{}, []byte("a"), bytes.Repeat([]byte{7}, 127), bytes.Repeat([]byte{8}, 128), bytes.Repeat([]byte{9}, 70000)}
	var b []byte
	for _, m := range msgs {
		b = appendFrameHeader(b, len(m))
		b = append(b, m...)
	}
	r := bufio.NewReader(bytes.NewReader(b))
	for i, want := range msgs {
		got, err := readFrame(r, 70000)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: %d bytes, %v; want %d bytes", i, len(got), err, len(want))
		}
	}
	if _, err := readFrame(r, 70000); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []byte
		limit int
		want  error
	}{
		{"over limit", []byte{0x81, 0x01}, 128, transport.ErrProtocol}, // 129
		{"at limit", append([]byte{0x80, 0x01}, make([]byte, 128)...), 128, nil},
		{"non-minimal", []byte{0x85, 0x00}, 128, transport.ErrProtocol},
		{"overflow", bytes.Repeat([]byte{0xff}, 11), 1 << 30, transport.ErrProtocol},
		{"tenth byte too big", append(bytes.Repeat([]byte{0xff}, 9), 0x02), 1 << 30, transport.ErrProtocol},
		{"truncated prefix", []byte{0x80}, 1 << 30, io.ErrUnexpectedEOF},
		{"truncated body", []byte{3, 1, 2}, 128, io.ErrUnexpectedEOF},
		{"empty", nil, 128, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readFrame(bufio.NewReader(bytes.NewReader(tc.in)), tc.limit)
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Fatalf("readFrame(% x) = %v, want %v", tc.in, err, tc.want)
			}
		})
	}
	var tl *frameTooLargeError
	if _, err := readFrameHeader(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}), 1<<20); !errors.As(err, &tl) || tl.size != 1<<32-1 {
		t.Fatalf("huge prefix: %v", err)
	}
}

var errRefused = errors.New("refused")

func TestReadBodyGrowsWithBytes(t *testing.T) {
	// 1 MiB announced, 3 bytes sent: the buffer is minGrow bytes.
	body, err := readBody(bufio.NewReader(bytes.NewReader([]byte{1, 2, 3})), 1<<20, func(int) error { return nil })
	if err != io.ErrUnexpectedEOF || len(body) != 3 || cap(body) != minGrow {
		t.Fatalf("readBody = %d bytes in %d, %v", len(body), cap(body), err)
	}
	// Nothing sent: nothing allocated.
	if body, err := readBody(bufio.NewReader(bytes.NewReader(nil)), 1<<20, func(int) error { return nil }); err != io.ErrUnexpectedEOF || cap(body) != 0 {
		t.Fatalf("readBody(nothing) = buffer of %d, %v", cap(body), err)
	}
}
