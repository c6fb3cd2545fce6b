package snapshot_test

import (
	"encoding/binary"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/snapshot"
)

type padded struct {
	A int32 // 4 bytes of padding follow in memory
	B int64
}

type packed struct {
	A int32
	B [8]byte // byte array: no padding, same canonical bytes as padded.B
}

// Padding is not part of the checksum form: a padded type hashes exactly
// like a packed type holding the same field bytes, and hashing allocates
// nothing once its buffer has grown.
func TestChecksumSkipsPadding(t *testing.T) {
	sum := func(setup func(*snapshot.Registry, ecs.Entity)) (uint64, *snapshot.Registry) {
		w := ecs.New()
		reg := snapshot.NewRegistry(w)
		setup(reg, w.Spawn())
		_, parts, err := reg.Checksum(nil)
		must(t, err)
		return parts[len(parts)-1].Sum, reg
	}
	a, reg := sum(func(r *snapshot.Registry, e ecs.Entity) {
		must(t, snapshot.Copy[padded](r))
		must(t, ecs.StoreOf[padded](r.World()).Set(e, padded{A: -5, B: 1 << 40}))
	})
	b, _ := sum(func(r *snapshot.Registry, e ecs.Entity) {
		must(t, snapshot.Copy[packed](r))
		var v packed
		v.A = -5
		binary.LittleEndian.PutUint64(v.B[:], 1<<40)
		must(t, ecs.StoreOf[packed](r.World()).Set(e, v))
	})
	if a != b {
		t.Fatalf("padded part %#x, packed part %#x", a, b)
	}
	parts := make([]snapshot.Part, 0, 8)
	if n := testing.AllocsPerRun(20, func() { _, parts, _ = reg.Checksum(parts) }); n != 0 {
		t.Fatalf("checksum of a padded type allocates %v times", n)
	}
}
