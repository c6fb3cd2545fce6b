package shooter

import (
	"bytes"
	"testing"
)

// FuzzBulletCodec: the Bullet decoder never panics, and what it accepts
// encodes back to the same bytes.
func FuzzBulletCodec(f *testing.F) {
	var c bulletCodec
	f.Add(c.Append(nil, &Bullet{Player: 2, Born: 700}))
	f.Add([]byte{0x80, 0x00, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var v Bullet
		if c.Decode(b, &v) != nil {
			return
		}
		if again := c.Append(nil, &v); !bytes.Equal(again, b) {
			t.Fatalf("% x decodes to %+v, which encodes to % x", b, v, again)
		}
	})
}
