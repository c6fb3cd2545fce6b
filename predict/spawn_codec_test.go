package predict

import (
	"bytes"
	"testing"

	"github.com/rewindgo/rewind/replicate"
)

// FuzzSpawnKeyCodec: the spawn key decoder never panics, and what it
// accepts encodes back to the same bytes (one encoding per key); a key
// round-trips.
func FuzzSpawnKeyCodec(f *testing.F) {
	var c spawnKeyCodec
	f.Add(c.Append(nil, &SpawnKey{Client: 3, Index: 1, Tick: 700, Kind: 2}))
	f.Add([]byte{0x80, 0x00, 0, 0, 0})
	f.Add([]byte{1, 2, 0xff, 0xff, 0xff, 0xff, 0x1f, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var k SpawnKey
		if c.Decode(b, &k) != nil {
			return
		}
		if again := c.Append(nil, &k); !bytes.Equal(again, b) {
			t.Fatalf("% x decodes to %+v, which encodes to % x", b, k, again)
		}
	})
}

// TestSpawnKeyCodecSize: a bullet's key on a small server takes 5 bytes
// where plain data takes 24.
func TestSpawnKeyCodecSize(t *testing.T) {
	var c spawnKeyCodec
	k := SpawnKey{Client: replicate.ClientID(2), Index: 0, Tick: 5000, Kind: 1}
	b := c.Append(nil, &k)
	var got SpawnKey
	if err := c.Decode(b, &got); err != nil || got != k || len(b) != 5 {
		t.Fatalf("% x (%d bytes) decodes to %+v, %v", b, len(b), got, err)
	}
}
