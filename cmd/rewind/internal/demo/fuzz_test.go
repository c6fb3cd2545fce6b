package demo

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseMeta: recording metadata from hostile bytes is refused with
// ErrConfig, or it is a valid Config whose AppendMeta is exactly those
// bytes (the layout has one encoding: minimal varints, a fixed seed).
func FuzzParseMeta(f *testing.F) {
	f.Add(Config{Players: 2, NPCs: 6, Seed: 7}.AppendMeta(nil))
	f.Add(Config{Players: 1, Seed: 1 << 63}.AppendMeta(nil))
	f.Add([]byte("rwdemo\x01\x82\x00\x06\x07\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseMeta(b)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseMeta: %v does not wrap ErrConfig", err)
			}
			return
		}
		if again := c.AppendMeta(nil); !bytes.Equal(again, b) {
			t.Fatalf("ParseMeta(%x) = %+v, which AppendMeta writes as %x", b, c, again)
		}
	})
}
