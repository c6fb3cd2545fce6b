package replicate_test

import (
	"bytes"
	"testing"

	"github.com/rewindgo/rewind/ecs"
	"github.com/rewindgo/rewind/replicate"
	"github.com/rewindgo/rewind/rng"
	"github.com/rewindgo/rewind/tick"
)

// Label is a component that is not plain data (a byte string with its own
// codec): a checkpoint holds its codec bytes, not a copy sharing memory.
type Label []byte

// labelProto is newResProto's protocol plus Label.
func labelProto(t testing.TB) *replicate.Protocol {
	t.Helper()
	rp := newResProto(t)
	if _, err := replicate.Component[Label](rp.p, replicate.WithOwnRule(), replicate.WithCodec[Label](bytesCodec[Label]{}, "bytes")); err != nil {
		t.Fatal(err)
	}
	return rp.p
}

// TestCheckpointValuesIndependent: a checkpoint is the state of its tick
// whatever the game does to the world afterwards: plain values are copied
// (an in-place write to the live value does not reach it) and values that
// hold pointers are kept as their codec bytes (an in-place write to the
// live byte string does not reach it either), and so are resources.
func TestCheckpointValuesIndependent(t *testing.T) {
	p := labelProto(t)
	w, ents := resWorld(3, 5)
	labels := ecs.Register[Label](w)
	_ = labels.Set(ents[1], Label("knight"))
	r := replicate.NewCheckpoints(w, p, replicate.CheckpointConfig{})
	cp, err := r.Capture(1)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	_ = replicate.SaveState(&want, w, p)
	wantSum, _ := replicate.StateChecksum(w, p, nil)

	(*labels.Ptr(ents[1]))[0] = 'n' // in place: the checkpoint must not see it
	ecs.StoreOf[Position](w).Ptr(ents[0]).X = 99
	ecs.StoreOf[rng.Rand](w).Ptr(ents[2]).Uint64()
	ecs.RegisterResource[rng.Rand](w).Ptr().Uint64()
	_ = w.Despawn(ents[2])

	if got := cp.AppendState(nil); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("checkpoint changed with the world:\n got % x\nwant % x", got, want.Bytes())
	}
	if sum, _ := cp.Checksum(); sum != wantSum {
		t.Fatalf("checksum %#x, want %#x", sum, wantSum)
	}
	w2 := ecs.New()
	m, err := replicate.LoadState(bytes.NewReader(cp.AppendState(nil)), w2, p)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := ecs.StoreOf[Label](w2).Get(m[ents[1]]); string(l) != "knight" || cp.Entities() != 3 || len(m) != 3 {
		t.Fatalf("label %q, %d entities", l, len(m))
	}
	// A later capture sees the changes, in the same ring.
	cp2, _ := r.Capture(tick.Tick(2))
	if cp2.Entities() != 2 || bytes.Equal(cp2.AppendState(nil), want.Bytes()) {
		t.Fatalf("second capture: %d entities", cp2.Entities())
	}
}
